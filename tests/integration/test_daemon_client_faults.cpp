// Clients that misbehave, with real processes: one SIGKILLed mid-frame, one SIGSTOPped while it
// holds a frame. The daemon and its other clients must not notice.
#include <signal.h>

#include <functional>

#include <catch2/catch.hpp>

#include "backend_test.hpp"
#include "cuview/client.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;

BACKEND_TEST("a client SIGKILLed mid-frame 20 times leaves the daemon stepping with flat memory",
             "[integration][faults]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  std::uint64_t last_step = 0, rss_after_warmup = 0;
  for (int i = 0; i < 20; ++i) {
    ChildProcess viewer(
        {bin("cuview-ctl"), "--name", "t", "attach", "--frames", "1000000", "--verify", "--hold-ms", "30"});
    // Mid-frame: the viewer holds a slot when it dies.
    (void)wait_stats("t", [](const StatsView& s) { return s.readers == 1 && s.held_slots == 1; });
    viewer.signal(SIGKILL);
    REQUIRE(viewer.wait_for(10s) == 128 + SIGKILL);
    auto s = wait_stats("t", [](const StatsView& v) { return v.readers == 0 && v.held_slots == 0; });
    CHECK(s.step > last_step);
    last_step = s.step;
    if (i == 4) rss_after_warmup = s.rss_kib;
  }
  auto end = stats("t");
  INFO("daemon RSS after 5 kills: " << rss_after_warmup << " KiB, after 20: " << end.rss_kib << " KiB");
  CHECK(end.rss_kib <= rss_after_warmup + 2048);
  CHECK(daemon.running());
  CHECK(ctl("t", {"attach", "--frames", "5", "--verify"}).code == 0);
}

BACKEND_TEST("a SIGSTOPped client holding a frame does not stop the daemon or other clients", "[integration][faults]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  ChildProcess frozen({bin("cuview-ctl"), "--name", "t", "attach", "--frames", "2", "--hold-ms", "600000"});
  (void)wait_stats("t", [](const StatsView& s) { return s.held_slots == 1; });
  frozen.signal(SIGSTOP);
  const auto before = stats("t");
  auto c = attach("t");
  std::uint64_t prev = 0;
  for (int i = 0; i < 20; ++i) {
    auto f = c.next_frame(10s);
    REQUIRE(f);
    CHECK(f->info().seq > prev);
    prev = f->info().seq;
    REQUIRE_FALSE(f->verify());
  }
  const auto after = stats("t");
  CHECK(after.step > before.step);
  // The first of our 20 frames may predate `before`; the other 19 were published since.
  CHECK(after.frames_published >= before.frames_published + 19);
  CHECK(after.held_slots <= 2);  // the frozen viewer's slot, and possibly ours
  frozen.signal(SIGCONT);
}

BACKEND_TEST("a moved-from Frame refuses every read with an error naming it, and releases nothing",
             "[integration][faults]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  auto c = attach("t");
  auto f = c.next_frame(10s);
  REQUIRE(f);
  Frame kept = std::move(*f);
  const Frame& moved = *f;
  for (const auto& [what, call] : std::vector<std::pair<std::string, std::function<void()>>>{
           {"verify()", [&] { (void)moved.verify(); }},
           {"trailer()", [&] { (void)moved.trailer(); }},
           {"copy_to_host", [&] {
              std::vector<std::byte> buf(16);
              moved.copy_to_host(buf);
            }}}) {
    INFO(what);
    try {
      call();
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == Errc::bad_value);
      CHECK_THAT(std::string(e.what()), Catch::Contains(what) && Catch::Contains("moved-from Frame"));
    }
  }
  CHECK(moved.slot_data() == nullptr);
  REQUIRE_FALSE(kept.verify());  // the frame itself is still held by its new owner
}
