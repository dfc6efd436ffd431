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
  for (std::uint32_t v : {0u, proto::kVersion + 1, 99u}) {
    ++row.trials;
    s.send(zmq::buffer(proto::encode_request("hello", v, "", proto::HelloArgs{"old", ::getpid()}, v)));
    zmq::message_t m;
    if (!s.recv(m)) {
      row.fail("no answer to version " + std::to_string(v));
      continue;
    }
    const auto r = proto::decode_reply(m.to_string_view());
    const std::string both = "protocol " + std::to_string(v);
    if (r.ok || r.error.code != "version_mismatch" || r.error.message.find(both) == std::string::npos ||
        r.error.message.find("protocol " + std::to_string(proto::kVersion)) == std::string::npos)
      row.fail("version " + std::to_string(v) + ": " + r.error.message);
    row.worst = "\"" + r.error.message + "\"";
  }
  return {row};
}

}  // namespace cuview::faults
