// Requests a correct client never sends, on a raw socket: each is refused with its own error code
// and a message naming what was wrong, and the daemon keeps its state.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "backend_test.hpp"
#include "cuview/protocol.hpp"
#include "protocol_client.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;

namespace {

struct Unknown {  // `step` arguments with a field no version of the protocol has
  std::uint64_t n = 1;
  int colour = 3;
  MSGPACK_DEFINE_MAP(n, colour);
};

}  // namespace

BACKEND_TEST("bad requests get specific errors and the daemon keeps its state", "[integration][bad-input]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  const auto before = stats("t");
  RawPeer raw("t");
  struct Case {
    std::string bytes;
    const char* code;
    const char* says;
  };
  const std::string hello = proto::encode_request("hello", 1, "", proto::HelloArgs{"raw", ::getpid()});
  const std::vector<Case> cases{
      {"\xc1 not msgpack", "bad_message", "MessagePack"},
      {hello.substr(0, hello.size() / 2), "bad_message", "truncated"},
      {proto::encode(std::vector<int>{1, 2}), "bad_message", "map"},
      {proto::encode_request("stats", 2, before.session, proto::NoArgs{}, 99), "version_mismatch", "protocol 99"},
      {proto::encode_request("fly", 3, before.session, proto::NoArgs{}), "unknown_op", "'fly'"},
      {proto::encode_request("handles", 4, before.session, proto::NoArgs{}), "not_attached", "hello"},
      {proto::encode_request("stats", 5, "", proto::NoArgs{}), "missing_field", "session"},
      {proto::encode_request("hello", 6, "", proto::HelloArgs{"raw", 999999999}), "bad_value", "999999999"},
  };
  for (const auto& c : cases) {
    auto r = raw.send(c.bytes);
    INFO("expected " << c.code << ", got " << r.error.code << ": " << r.error.message);
    CHECK_FALSE(r.ok);
    CHECK(r.error.code == c.code);
    CHECK_THAT(r.error.message, Catch::Contains(c.says));
  }
  REQUIRE(raw.send(hello).ok);
  const std::vector<Case> attached{
      {proto::encode_request("step", 7, before.session, Unknown{}), "unknown_field", "'colour'"},
      {proto::encode_request("step", 8, before.session, proto::StepArgs{0}), "out_of_range", "step 0"},
      {proto::encode_request("set", 9, before.session, proto::SetArgs{std::map<std::string, double>{{"F", 7.0}}, {}}),
       "out_of_range", "F=7"},
      {proto::encode_request("set", 10, before.session,
                             proto::SetArgs{std::map<std::string, double>{{"F", 0.01}, {"warp", 9.0}}, {}}),
       "bad_value", "'warp'"},
      {proto::encode_request("stats", 11, "0123456789abcdef0123456789abcdef", proto::NoArgs{}), "stale_session",
       "never issued"},
      // protocol.md: a session that is not this run's is refused before the op is looked at.
      {proto::encode_request("fly", 12, "0123456789abcdef0123456789abcdef", proto::NoArgs{}), "stale_session",
       "earlier run"},
  };
  for (const auto& c : attached) {
    auto r = raw.send(c.bytes);
    INFO("expected " << c.code << ", got " << r.error.code << ": " << r.error.message);
    CHECK_FALSE(r.ok);
    CHECK(r.error.code == c.code);
    CHECK_THAT(r.error.message, Catch::Contains(c.says));
  }
  auto parts = raw.send(std::vector<std::string>{"a", "b", "c"});
  CHECK(parts.error.code == "bad_message");
  CHECK_THAT(parts.error.message, Catch::Contains("3 parts"));

  // State intact: same session, F untouched by the refused `set`s, still stepping and serving.
  const auto after = wait_stats("t", [&](const StatsView& s) { return s.step > before.step; });
  CHECK(after.session == before.session);
  CHECK(after.F == before.F);
  CHECK(daemon.running());
  CHECK(ctl("t", {"attach", "--frames", "3", "--verify"}).code == 0);
}
