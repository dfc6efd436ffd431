// cuview-compute's life, with real processes: a graceful shutdown, a crash and the next start, a
// killed daemon and the clients that attach again, a second daemon of the same name, and a
// runtime directory it must refuse.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>

#include "backend_test.hpp"
#include "cuview/client.hpp"
#include "cuview/runtime_dir.hpp"
#include "protocol_client.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

BACKEND_TEST("SIGTERM shuts down gracefully: clients are told, files and segments are removed",
             "[integration][lifecycle]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  auto segments = segments_of("t");
  REQUIRE_FALSE(segments.empty());
  auto c = attach("t");
  daemon.signal(SIGTERM);
  REQUIRE(daemon.wait_for(30s) == 0);
  try {
    (void)c.next_frame(1000ms);
    FAIL("next_frame returned after shutdown");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::daemon_gone);
  }
  for (const auto& s : segments) CHECK_FALSE(shm_exists(s));
  CHECK_FALSE(fs::exists(InstancePaths("t").control));
  CHECK_FALSE(daemon_running("t"));
  auto r = ctl("t", {"status"});
  CHECK(r.code != 0);
  CHECK_THAT(r.err, Catch::Contains("no cuview-compute daemon named 't'"));
}

BACKEND_TEST("a daemon says in its log how long its start took and where the time went", "[integration][lifecycle]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend, {"--sim", "lbm"}, "512x256");
  REQUIRE(ctl("t", {"shutdown"}).code == 0);
  REQUIRE(daemon.wait_for(30s));
  const std::string log = daemon.err();
  INFO(log);
  CHECK_THAT(log, Catch::Matches(R"((.|\n)*started in [0-9.]+ s \(loading the simulation [0-9.]+ s, .*allocating the simulation's 512x256 grid [0-9.]+ s, .*making the initial state [0-9.]+ s\)(.|\n)*)"));
  CHECK(log.find("started in") < log.find("ready: attach with"));
}

BACKEND_TEST("a crashed daemon's leftovers are removed by the next start", "[integration][lifecycle]") {
  RuntimeDir rt;
  auto daemon = std::make_unique<ChildProcess>(start_daemon("t", backend));
  auto segments = segments_of("t");
  daemon->signal(SIGKILL);
  REQUIRE(daemon->wait_for(10s));
  for (const auto& s : segments) CHECK(shm_exists(s));
  daemon = std::make_unique<ChildProcess>(start_daemon("t", backend));
  for (const auto& s : segments) CHECK_FALSE(shm_exists(s));
  CHECK(ctl("t", {"attach", "--frames", "3", "--verify"}).code == 0);
}

BACKEND_TEST("a killed daemon is noticed, stale sessions are refused, and clients re-attach",
             "[integration][restart]") {
  RuntimeDir rt;
  auto daemon = std::make_unique<ChildProcess>(start_daemon("t", backend));
  auto c = attach("t");
  const std::string old_session = c.hello().session;
  {
    auto f = c.next_frame(10s);
    REQUIRE(f);
  }
  daemon->signal(SIGKILL);
  REQUIRE(daemon->wait_for(10s));
  // Noticed within a second: the wait below must end with daemon_gone, not with its timeout.
  try {
    (void)c.next_frame(1000ms);
    FAIL("next_frame returned although the daemon was killed");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::daemon_gone);
  }
  CHECK_FALSE(c.daemon_alive());
  CHECK_THROWS_AS(c.stats(), Error);

  daemon = std::make_unique<ChildProcess>(start_daemon("t", backend));
  RawPeer raw("t");
  auto reply = raw.send(proto::encode_request("handles", 1, old_session, proto::NoArgs{}));
  CHECK_FALSE(reply.ok);
  CHECK(reply.error.code == "stale_session");
  CHECK_THAT(reply.error.message, Catch::Contains(old_session) && Catch::Contains("attach again"));

  auto fresh = attach("t");
  CHECK(fresh.hello().session != old_session);
  auto f = fresh.next_frame(10s);
  REQUIRE(f);
  CHECK_FALSE(f->verify());
}

BACKEND_TEST("cuview-ctl attach --reattach follows a daemon killed or stopped mid-attach", "[integration][restart]") {
  const int sig = GENERATE(SIGKILL, SIGTERM);
  INFO("daemon ended with signal " << sig);
  RuntimeDir rt;
  auto daemon = std::make_unique<ChildProcess>(start_daemon("t", backend, {"--fps", "20"}));
  ChildProcess viewer({bin("cuview-ctl"), "--name", "t", "attach", "--frames", "60", "--verify", "--reattach"});
  // `readers` counts a client once it has asked for the handles, before it opened them: the
  // daemon goes while the viewer is still importing its ring.
  (void)wait_stats("t", [](const StatsView& s) { return s.readers == 1; });
  daemon->signal(sig);
  REQUIRE(daemon->wait_for(10s));
  daemon = std::make_unique<ChildProcess>(start_daemon("t", backend, {"--fps", "20"}));
  auto code = viewer.wait_for(60s);
  INFO(viewer.out() << viewer.err());
  REQUIRE(code);
  CHECK(*code == 0);
  CHECK_THAT(viewer.out(), Catch::Contains("60 verified intact"));
  // It ended on the new daemon (killed mid-import, the first session may never have completed).
  const std::string out = viewer.out();
  const std::string attached = "attached to 't' session ";
  const auto at = out.rfind(attached);
  REQUIRE(at != std::string::npos);
  CHECK(out.substr(at + attached.size(), 32) == stats("t").session);
}

BACKEND_TEST("a second daemon with the same name is refused and the first keeps running", "[integration][lock]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  const auto s = stats("t");
  ChildProcess second({bin("cuview-compute"), "--name", "t", "--backend", "host", "--size", "64x64"});
  auto code = second.wait_for(30s);
  REQUIRE(code);
  CHECK(*code == 3);
  CHECK_THAT(second.err(), Catch::Contains("already running") && Catch::Contains("--name"));
  CHECK(stats("t").session == s.session);
  CHECK(ctl("t", {"attach", "--frames", "3", "--verify"}).code == 0);
}

TEST_CASE("a runtime directory open to other users makes the daemon refuse to start", "[integration][access]") {
  RuntimeDir rt;
  const auto dir = rt.path() / "cuview" / "t";
  fs::create_directories(dir);
  fs::permissions(rt.path() / "cuview", fs::perms::owner_all);
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                           fs::perms::others_exec);
  ChildProcess d({bin("cuview-compute"), "--name", "t", "--backend", "host"});
  auto code = d.wait_for(30s);
  REQUIRE(code);
  CHECK(*code == 1);
  CHECK_THAT(d.err(), Catch::Contains("0755") && Catch::Contains("chmod 700"));
}
