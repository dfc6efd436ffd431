// Steering a running simulation from a client: pause, step, set, reset and strokes take effect,
// a paused simulation shows each in a new frame at once, and the step rate survives a reset.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <regex>
#include <span>
#include <thread>

#include "backend_test.hpp"
#include "cuview/client.hpp"
#include "shows_step.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;

namespace {
/// The float32 cell (x, y) of scalar field `name` in `frame` (copied to the host).
float cell(const Frame& frame, const proto::DescribeResult& d, const std::string& name, std::uint32_t x,
           std::uint32_t y) {
  const auto f = std::find_if(d.fields.begin(), d.fields.end(), [&](const auto& f) { return f.name == name; });
  REQUIRE(f != d.fields.end());
  float v = 0;
  frame.copy_to_host(f->offset + (std::size_t{y} * d.extent().width() + x) * sizeof v, std::as_writable_bytes(std::span(&v, 1)));
  return v;
}

/// The client's stats once `pred` holds of them; fails the test after a minute.
proto::Stats wait_status(Attachment& c, const std::function<bool(const proto::Stats&)>& pred) {
  const auto until = std::chrono::steady_clock::now() + 60s;
  for (;;) {
    const auto s = c.stats();
    if (pred(s)) return s;
    if (std::chrono::steady_clock::now() > until)
      FAIL("stats never came to hold (step " << s.step << ", " << s.steps_per_second << " steps/s)");
    std::this_thread::sleep_for(20ms);
  }
}
}  // namespace

BACKEND_TEST("pause, step, set and reset from a client take effect", "[integration][ctl]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  auto viewer = attach("t");  // what a person watching the run sees
  REQUIRE(ctl("t", {"pause"}).code == 0);
  CHECK(stats("t").paused);
  // A reset of the paused run shows step 0 at once (the batch under way when the pause came
  // finishes first), and the run holds there.
  REQUIRE(ctl("t", {"reset"}).code == 0);
  REQUIRE(shows_step(viewer, 0));
  CHECK(stats("t").step == 0);
  // Each step request moves it on by exactly that many steps: it held still in between.
  REQUIRE(ctl("t", {"step", "5"}).code == 0);
  REQUIRE(shows_step(viewer, 5));
  REQUIRE(ctl("t", {"step", "3"}).code == 0);
  REQUIRE(shows_step(viewer, 8));
  CHECK(stats("t").step == 8);
  CHECK(stats("t").paused);
  REQUIRE(ctl("t", {"set", "F=0.03"}).code == 0);
  CHECK(stats("t").F == 0.03);
  auto bad = ctl("t", {"set", "F=2"});
  CHECK(bad.code != 0);
  CHECK_THAT(bad.err, Catch::Contains("out of range"));
  CHECK(stats("t").F == 0.03);
  REQUIRE(ctl("t", {"reset"}).code == 0);
  REQUIRE(shows_step(viewer, 0));
  REQUIRE(ctl("t", {"resume"}).code == 0);
  (void)wait_stats("t", [](const StatsView& s) { return !s.paused && s.step > 0; });
}

BACKEND_TEST("a stroke, a set or a reset on a paused simulation shows in a new frame at once",
             "[integration][ctl][steering]") {
  RuntimeDir rt;
  auto daemon = start_daemon("p", backend, {"--sim", "lbm", "--paused"}, "128x64");
  auto c = attach("p");
  const auto& d = c.description();
  auto first = c.next_frame(10s);
  REQUIRE(first);
  const auto step = first->info().step;
  CHECK(cell(*first, d, "speed", 20, 10) > 0);  // fluid, moving with the inflow
  first.reset();
  CHECK_FALSE(c.next_frame(300ms));  // paused: nothing new by itself

  REQUIRE(ctl("p", {"draw", "obstacles", "20", "10", "--radius", "3"}).code == 0);
  auto drawn = c.next_frame(10s);
  REQUIRE(drawn);
  CHECK(drawn->info().step == step);
  CHECK(cell(*drawn, d, "speed", 20, 10) == 0);  // the stroke is in it: a solid cell does not move
  drawn.reset();

  const auto& p = d.params.front();
  REQUIRE(ctl("p", {"set", p.name + "=" + std::to_string((p.min + p.max) / 2)}).code == 0);
  auto set = c.next_frame(10s);
  REQUIRE(set);
  CHECK(set->info().step == step);
  set.reset();

  REQUIRE(ctl("p", {"step", "3"}).code == 0);
  auto stepped = c.next_frame(10s);
  REQUIRE(stepped);
  CHECK(stepped->info().step == step + 3);
  stepped.reset();
  REQUIRE(ctl("p", {"reset"}).code == 0);
  auto reset = c.next_frame(10s);
  REQUIRE(reset);
  CHECK(reset->info().step == 0);
  CHECK(stats("p").paused);
}

BACKEND_TEST("a paused embedded program shows a set or a reset in a new frame at once",
             "[integration][embedded][steering]") {
  RuntimeDir rt;
  auto wave = start_embed_wave("w", backend);
  REQUIRE(ctl("w", {"pause"}).code == 0);
  (void)wait_stats("w", [](const StatsView& s) { return s.paused; });
  auto c = attach("w");
  while (c.next_frame(500ms)) {
  }  // whatever was published before the pause took effect
  REQUIRE(ctl("w", {"set", "rain=10"}).code == 0);
  auto set = c.next_frame(10s);
  REQUIRE(set);
  set.reset();
  REQUIRE(ctl("w", {"reset"}).code == 0);
  auto reset = c.next_frame(10s);
  REQUIRE(reset);
  CHECK(reset->info().step == 0);
}

BACKEND_TEST("after a reset the step rate stays a rate, for cuview-compute and an embedded program",
             "[integration][ctl][steering]") {
  RuntimeDir rt;
  auto daemon = start_daemon("r", backend);
  auto wave = start_embed_wave("w", backend);
  for (const char* name : {"r", "w"}) {
    INFO(name);
    (void)wait_stats(name, [](const StatsView& s) { return s.step > 400; });
    auto c = Client::attach({.name = name, .client = "rate test", .import = Import::control_only});
    // Running, it shows a rate; paused, none once the batch under way is done (a half-second
    // window without steps has closed); reset, it is at step 0.
    (void)wait_status(c, [](const proto::Stats& s) { return s.steps_per_second > 0; });
    c.pause();
    (void)wait_status(c, [](const proto::Stats& s) { return s.steps_per_second == 0; });
    c.reset();
    (void)wait_status(c, [](const proto::Stats& s) { return s.step == 0; });
    c.resume();
    // Running again: every rate shown is one the step counter bears out — measured over half a
    // second or more, it never claims more steps than the run made since the reset (the steps
    // before it, or a step count gone backwards, would) — until the rate of the new steps shows.
    (void)wait_status(c, [](const proto::Stats& s) {
      INFO("step " << s.step << ", " << s.steps_per_second << " steps/s");
      REQUIRE(s.steps_per_second >= 0);
      REQUIRE(s.steps_per_second <= 2.0 * static_cast<double>(s.step));
      return s.steps_per_second > 0;
    });
    auto st = ctl(name, {"status"});  // as a person reads it: "step N (t = T), R steps/s"
    REQUIRE(st.code == 0);
    INFO(st.out);
    std::smatch m;
    REQUIRE(std::regex_search(st.out, m, std::regex(R"(step (\d+) .*, (\d+) steps/s)")));
    CHECK(std::stod(m[2]) <= 2.0 * std::stod(m[1]) + 1);  // printed rounded
  }
}
