// Steering a running simulation from a client: pause, step, set, reset and strokes take effect,
// a paused simulation shows each in a new frame at once, and the step rate survives a reset.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <regex>
#include <span>
#include <thread>

#include "backend_test.hpp"
#include "cuview/client.hpp"

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
  frame.copy_to_host(f->offset + (std::size_t{y} * d.width + x) * sizeof v, std::as_writable_bytes(std::span(&v, 1)));
  return v;
}
}  // namespace

BACKEND_TEST("pause, step, set and reset from a client take effect", "[integration][ctl]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  REQUIRE(ctl("t", {"pause"}).code == 0);
  CHECK(stats("t").paused);
  // The batch under way when the pause came may still finish; then the step holds still.
  std::this_thread::sleep_for(300ms);
  const auto paused = stats("t");
  std::this_thread::sleep_for(300ms);
  CHECK(stats("t").step == paused.step);
  REQUIRE(ctl("t", {"step", "5"}).code == 0);
  (void)wait_stats("t", [&](const StatsView& s) { return s.step == paused.step + 5; });
  REQUIRE(ctl("t", {"set", "F=0.03"}).code == 0);
  CHECK(stats("t").F == 0.03);
  auto bad = ctl("t", {"set", "F=2"});
  CHECK(bad.code != 0);
  CHECK_THAT(bad.err, Catch::Contains("out of range"));
  REQUIRE(ctl("t", {"reset"}).code == 0);
  CHECK(stats("t").step == 0);
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
    REQUIRE(ctl(name, {"reset"}).code == 0);
    const auto until = std::chrono::steady_clock::now() + 1500ms;  // past the rate's half-second window
    while (std::chrono::steady_clock::now() < until) {
      const auto s = c.stats();
      INFO("step " << s.step << ", " << s.steps_per_second << " steps/s");
      REQUIRE(s.steps_per_second >= 0);
      REQUIRE(s.steps_per_second < 1e9);
      std::this_thread::sleep_for(20ms);
    }
    auto st = ctl(name, {"status"});  // as a person reads it: "step N (t = T), R steps/s"
    REQUIRE(st.code == 0);
    std::smatch m;
    REQUIRE(std::regex_search(st.out, m, std::regex(R"(, (\d+) steps/s)")));
    INFO(st.out);
    CHECK(m[1].length() < 10);
  }
}
