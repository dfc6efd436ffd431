// Versions: a client of another protocol version is refused with version_mismatch, naming both.
#include <unistd.h>

#include <zmq.hpp>

#include "campaign.hpp"
#include "cuview/protocol.hpp"
#include "cuview/runtime_dir.hpp"

using namespace cuview::test;
using namespace std::chrono_literals;

namespace cuview::faults {

std::vector<Row> versions(const Config& c) {
  RuntimeDir rt;
  auto daemon = daemon_for(c, "f");
  Row row{"a client of another protocol version"};
  zmq::context_t ctx;
  zmq::socket_t s(ctx, zmq::socket_type::dealer);
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::rcvtimeo, 5000);
  s.connect(InstancePaths("f").control_endpoint());
  // Before the stable protocol: refused, naming the client's version, the ones served and what
  // the client lacks.
  for (std::uint32_t v : {0u, 4u, proto::kFirstStable - 1}) {
    ++row.trials;
    s.send(zmq::buffer(proto::encode_request("hello", v, "", proto::HelloArgs{"old", ::getpid()}, v)));
    zmq::message_t m;
    if (!s.recv(m)) {
      row.fail("no answer to version " + std::to_string(v));
      continue;
    }
    const auto r = proto::decode_reply(m.to_string_view());
    if (r.ok || r.error.code != "version_mismatch" ||
        r.error.message.find("protocol " + std::to_string(v)) == std::string::npos ||
        r.error.message.find("protocols " + std::to_string(proto::kFirstStable)) == std::string::npos ||
        r.error.message.find("lacks") == std::string::npos)
      row.fail("version " + std::to_string(v) + ": " + r.error.message);
    row.worst = "\"" + r.error.message + "\"";
  }
  // Newer than the daemon: its hello is answered in the daemon's version, anything else refused.
  for (std::uint32_t v : {proto::kVersion + 1, 99u}) {
    ++row.trials;
    s.send(zmq::buffer(proto::encode_request("hello", v, "", proto::HelloArgs{"new", ::getpid()}, v)));
    zmq::message_t m;
    if (!s.recv(m)) {
      row.fail("no answer to a hello of version " + std::to_string(v));
      continue;
    }
    const auto r = proto::decode_reply(m.to_string_view());
    const auto hello = r.ok ? proto::decode_as<proto::HelloResult>(r.result, "hello") : proto::HelloResult{};
    if (!r.ok || hello.protocol != proto::kVersion)
      row.fail("a hello of version " + std::to_string(v) + " was not answered in protocol " +
               std::to_string(proto::kVersion) + ": " + r.error.message);
    s.send(zmq::buffer(proto::encode_request("stats", 2, hello.session, proto::NoArgs{}, v)));
    if (!s.recv(m)) {
      row.fail("no answer to a stats of version " + std::to_string(v));
      continue;
    }
    const auto refused = proto::decode_reply(m.to_string_view());
    if (refused.ok || refused.error.code != "version_mismatch" ||
        refused.error.message.find("protocol " + std::to_string(v)) == std::string::npos)
      row.fail("a stats of version " + std::to_string(v) + " was not refused: " + refused.error.message);
  }
  return {row};
}

}  // namespace cuview::faults
