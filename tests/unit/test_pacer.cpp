// The cost budget's decisions, on a fake clock: when a publisher may publish (FramePacer). The
// budget holds by construction, so these tests drive the pacer as publish() does, with costs and
// step times they choose, and check what a user would see: the share of the run spent publishing,
// the frame rate, and what the pacer says limits it.
#include <catch2/catch.hpp>
#include <cstdint>
#include <deque>
#include <random>

#include "publisher/pacer.hpp"
#include "publisher/steering.hpp"

using namespace cuview;

namespace {
constexpr std::int64_t kMs = 1'000'000;
/// How far apart the budget sets two frames: `cost` seconds of publishing at `budget`.
std::int64_t apart(double cost, double budget) {
  return static_cast<std::int64_t>(cost / (FramePacer::kAim * budget) * 1e9);
}

/// A simulated run: a program stepping every `step_ms` on one GPU stream and calling publish()
/// after each step; a frame's cost (seconds, from `cost_of`) adds to the run's time where it is
/// published, and is measured `lag` steps later, as GPU events finish. Returns the totals.
struct Run {
  double run_s = 0, cost_s = 0;
  double span_s = 0, span_cost_s = 0;  // from the first frame's start to the last's, and the cost within
  std::uint64_t frames = 0;
  double worst_interval_share = 0;  // the largest share of any interval between frame starts
};
template <typename CostOf>
Run simulate(FramePacer& pacer, double step_ms, std::uint64_t steps, CostOf cost_of, std::uint32_t lag = 2) {
  Run r;
  std::int64_t now = 1000 * kMs;
  std::deque<std::pair<std::uint64_t, double>> pending;  // (step measured at, cost)
  std::int64_t first_start = -1, last_start = -1;
  double last_cost = 0;
  for (std::uint64_t step = 0; step < steps; ++step) {
    now += static_cast<std::int64_t>(step_ms * kMs);
    while (!pending.empty() && pending.front().first <= step) {
      pacer.measured(pending.front().second);
      pending.pop_front();
    }
    if (!pacer.due(now, false, false)) continue;
    if (last_start >= 0)
      r.worst_interval_share = std::max(r.worst_interval_share, last_cost / (static_cast<double>(now - last_start) * 1e-9));
    const double c = cost_of(r.frames);
    pacer.started(now);
    if (first_start < 0) first_start = now;
    r.span_cost_s += last_start >= 0 ? last_cost : 0;
    last_start = now, last_cost = c;
    pending.emplace_back(step + lag, c);
    now += static_cast<std::int64_t>(c * 1e9);  // the frame's work delays the run
    r.cost_s += c;
    ++r.frames;
  }
  r.run_s = static_cast<double>(now - 1000 * kMs) * 1e-9;
  r.span_s = static_cast<double>(last_start - first_start) * 1e-9;
  return r;
}
}  // namespace

TEST_CASE("the budget spaces frames by their measured cost", "[pacer]") {
  FramePacer p(0, 0.01);  // no frame-rate cap, 1 %
  CHECK(p.due(0, false, false));  // the first frame: nothing measured, nothing spent
  p.started(0);
  CHECK_FALSE(p.due(1 * kMs, false, false));  // its cost is not known yet: no second frame
  p.measured(0.002);  // 2 ms of publishing: 1 % of 200 ms, 0.9 % (the pacer's aim) of 222 ms
  const std::int64_t gap = apart(0.002, 0.01);
  CHECK(gap > 200 * kMs);
  CHECK(p.budget_allows_at() == gap);
  CHECK_FALSE(p.due(gap - 1, false, false));
  CHECK(p.due(gap, false, false));
  p.started(gap);
  CHECK(p.limit() == RateLimit::budget);
  CHECK(p.cost_seconds() == Approx(0.002));
  // Until this frame is measured, the largest recent cost stands in for it.
  CHECK_FALSE(p.due(2 * gap - 1, false, false));
  CHECK(p.due(2 * gap, false, false));
  // A frame measured cheaper lets the next come sooner.
  p.measured(0.0005);
  CHECK(p.budget_allows_at() == gap + apart(0.0005, 0.01));
}

TEST_CASE("frames asked for skip the frame period; only paused or agreed ones skip the budget", "[pacer]") {
  FramePacer p(10, 0.01);
  REQUIRE(p.due(0, false, false));
  p.started(0);
  p.measured(0.001);  // the budget allows the next at 111 ms, the cap at 100 ms
  CHECK_FALSE(p.due(50 * kMs, false, false));
  CHECK(p.due(50 * kMs, false, true));        // skip_budget: a reset, a step while paused, parts' agreement
  CHECK_FALSE(p.due(50 * kMs, true, false));  // a new reader skips the period, not the budget
  FramePacer q(10, 0.5);
  REQUIRE(q.due(0, false, false));
  q.started(0);
  q.measured(0.001);                          // the budget allows the next at 2.2 ms
  CHECK_FALSE(q.due(50 * kMs, false, false));  // the cap: 100 ms
  CHECK(q.due(50 * kMs, true, false));         // a new reader need not wait for it
  CHECK(q.due(100 * kMs, false, false));
  q.started(100 * kMs);
  CHECK(q.limit() == RateLimit::fps);
}

TEST_CASE("a run never spends more than its budget publishing, whatever its frames cost", "[pacer]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> cost(0.0002, 0.008);  // 0.2 to 8 ms a frame, at random
  for (const double budget : {0.003, 0.01, 0.05}) {
    FramePacer p(60, budget);
    const Run r = simulate(p, 0.5, 400'000, [&](std::uint64_t) { return cost(rng); });  // 200 s of 0.5 ms steps
    INFO("budget " << budget << ": " << r.frames << " frames, cost " << r.span_cost_s / r.span_s);
    CHECK(r.frames > 100);
    // From the first frame to the last, every frame's cost paid for by the time after it.
    CHECK(r.span_cost_s / r.span_s <= budget);
    CHECK(r.worst_interval_share <= budget * (1 + 1e-9));  // between every two frames, not just on average
    CHECK(p.limit() == RateLimit::budget);
  }
}

TEST_CASE("the frame rate adapts to the budget and never exceeds the cap", "[pacer]") {
  SECTION("cheap frames: the cap sets the rate") {
    FramePacer p(60, 0.01);
    const Run r = simulate(p, 1, 10'000, [](std::uint64_t) { return 1e-5; });  // 10 s, 10 µs a frame
    CHECK(r.frames <= 601);
    CHECK(r.frames >= 580);  // a period of 16.7 ms rounds up to 17 steps of 1 ms
    CHECK(p.limit() == RateLimit::fps);
  }
  SECTION("dear frames: the budget sets it, at cost / budget apart") {
    FramePacer p(60, 0.01);
    const Run r = simulate(p, 1, 10'000, [](std::uint64_t) { return 0.004; });  // 4 ms a frame: 444 ms apart
    CHECK(r.frames >= 21);
    CHECK(r.frames <= 24);
    CHECK(p.limit() == RateLimit::budget);
  }
  SECTION("a slow program: neither limit holds it") {
    FramePacer p(60, 0.01);
    const Run r = simulate(p, 100, 100, [](std::uint64_t) { return 1e-5; });  // a step every 100 ms
    CHECK(r.frames >= 98);  // every call but the second, which waits for the first frame's cost
    CHECK(p.limit() == RateLimit::none);
  }
  SECTION("no budget, no cap: every call") {
    FramePacer p(0, 1);
    const Run r = simulate(p, 1, 1000, [](std::uint64_t) { return 0.5; });
    CHECK(r.frames == 1000);
  }
}

TEST_CASE("a frame skipped for held slots is what limits the rate then", "[pacer]") {
  FramePacer p(100, 1);
  REQUIRE(p.due(0, false, false));
  p.started(0);
  REQUIRE(p.due(10 * kMs, false, false));
  p.skipped(10 * kMs);  // every slot held
  CHECK(p.limit() == RateLimit::readers);
  CHECK_FALSE(p.due(15 * kMs, false, false));  // a period after the skip
  CHECK(p.due(20 * kMs, false, false));
  CHECK(to_string(RateLimit::budget) == "budget");
  CHECK(to_string(RateLimit::none).empty());
}

namespace {
/// A frame that was due at `now` started then, and its cost was measured: `seconds`.
void frame_at(FramePacer& pacer, std::int64_t now, double seconds) {
  REQUIRE(pacer.due(now, false, false));
  pacer.started(now);
  pacer.measured(seconds);
}
}  // namespace

TEST_CASE("a picture's cost, measured apart from its frame, holds the next frame back as a frame's cost would",
          "[unit][pacer]") {
  FramePacer pacer(0, 0.01);
  std::int64_t now = 1000 * kMs;
  frame_at(pacer, now, 0.001);  // the frame: 1 ms
  CHECK(pacer.budget_allows_at() == now + apart(0.001, 0.01));
  pacer.add_cost(0.004);  // its picture, cast on a stream of its own: 4 ms more
  CHECK(pacer.budget_allows_at() == now + apart(0.005, 0.01));
  CHECK_FALSE(pacer.due(now + apart(0.005, 0.01) - kMs, false, false));
  CHECK(pacer.limit() == RateLimit::budget);
  CHECK(pacer.cost_seconds() == Approx(0.005));
  // The next frame, without a picture, is paced by its own cost alone.
  now += apart(0.005, 0.01);
  frame_at(pacer, now, 0.001);
  CHECK(pacer.budget_allows_at() == now + apart(0.001, 0.01));
}

TEST_CASE("a moving camera's pictures are cast from the newest frame; frames are made for the views at rest",
          "[unit][pacer][render]") {
  const std::int64_t now = 10'000 * kMs;
  const auto ask = [&](const char* field_name, std::size_t field, std::int64_t since) {
    Steering::PictureAsk a;
    a.view.field = field_name;
    a.field = field, a.asked_ns = now, a.since_ns = since;
    return a;
  };
  const auto names = [](const std::vector<Steering::PictureAsk>& views) {
    std::vector<std::string> out;
    for (const auto& v : views) out.push_back(v.view.field);
    return out;
  };
  FrameInfo newest;
  newest.seq = 7, newest.fields = 0b01, newest.every = 1;  // field 0 whole, not field 1
  const auto resting = ask("rho", 0, now - Steering::kViewSettleNs);
  const auto turning = ask("rho", 0, now - 20 * kMs);
  const auto other_field = ask("speed", 1, now - 20 * kMs);
  // At rest: each frame brings its picture again. Turning: the newest frame serves it, no frame is made.
  CHECK(names(views_needing_frames({resting, turning}, now, newest)) == std::vector<std::string>{"rho"});
  CHECK(views_needing_frames({turning}, now, newest).empty());
  // A moving view the newest frame cannot serve needs a frame: its field missing, every k-th cell
  // only, or no frame yet.
  CHECK(names(views_needing_frames({turning, other_field}, now, newest)) == std::vector<std::string>{"speed"});
  FrameInfo packed = newest;
  packed.every = 4;
  CHECK(views_needing_frames({turning}, now, packed).size() == 1);
  CHECK(views_needing_frames({turning}, now, std::nullopt).size() == 1);
  // The same view, still asked for after the settling time, is at rest.
  CHECK(views_needing_frames({turning}, now + Steering::kViewSettleNs, newest).size() == 1);
}

TEST_CASE("a camera that moved gets its picture at once, once between frames, and the next frame waits for it",
          "[unit][pacer][render]") {
  FramePacer pacer(0, 0.01);
  std::int64_t now = 1000 * kMs;
  frame_at(pacer, now, 0.002);  // the frame: 2 ms, so the next may start 2 / 0.9 % later
  const std::int64_t t0 = now;
  now += 100 * kMs;       // the camera moves long before that
  REQUIRE_FALSE(pacer.within_budget(now));
  REQUIRE(pacer.may_borrow());
  pacer.borrowed();
  pacer.add_cost(0.003);  // its picture: 3 ms
  // A second move waits for the budget; so does the next frame, by the picture's cost too.
  CHECK_FALSE(pacer.may_borrow());
  CHECK(pacer.budget_allows_at() == t0 + apart(0.005, 0.01));
  CHECK_FALSE(pacer.due(t0 + apart(0.005, 0.01) - kMs, false, false));
  // Over the interval between the two frames the run spent 5 ms at most within the budget.
  now = t0 + apart(0.005, 0.01);
  REQUIRE(pacer.due(now, false, false));
  CHECK(0.005 / (static_cast<double>(now - t0) * 1e-9) <= 0.01);
  pacer.started(now);
  CHECK(pacer.may_borrow());  // a frame later, the next move is shown at once again
}

TEST_CASE("a frame made for pictures alone holds their fields alone; readers' fields are added to theirs",
          "[unit][pacer][render]") {
  Steering::PictureAsk speed;
  speed.view.field = "speed", speed.field = 1;
  // No reader (RingWriter::reads() then says every block): the picture's field only, not every field.
  CHECK(frame_blocks(0, kAllBlocks, {speed}) == 0b10);
  // A reader of field 2 and the picture of field 1; a reader of every field.
  CHECK(frame_blocks(1, 0b100, {speed}) == 0b110);
  CHECK(frame_blocks(2, kAllBlocks, {speed}) == kAllBlocks);
  // Readers and no picture: what they read.
  CHECK(frame_blocks(1, 0b1, {}) == 0b1);
}
