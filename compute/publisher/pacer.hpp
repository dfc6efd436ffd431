// When a publisher may publish: at most max_fps frames a second, and never more than max_cost of
// the run's time spent publishing (the cost budget, docs/architecture.md "The cost budget").
//
// The budget is kept by construction: a frame whose publishing work took c seconds (measured
// where it ran: GPU events around it on CUDA, the thread's clock on the host) is followed by the
// next one no sooner than c / (kAim · max_cost) later, so that over every interval between frames the
// share of the run's time spent publishing is at most max_cost. Until a frame's cost is measured
// the largest of the last few measured costs stands in for it; before any was measured, no second
// frame starts until the first one's cost is known. Pure logic on a clock the caller passes:
// tests drive it with a fake one.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace cuview {

/// What held the frame rate down when the newest frame was published. In rank order: when
/// several held frames back since the last one, the highest names the limit.
enum class RateLimit : std::uint8_t {
  none,     ///< nothing: the program called publish() less often than both limits allow
  fps,      ///< max_fps
  readers,  ///< every slot was held by readers (frames were skipped)
  budget,   ///< the cost budget
};
/// "", "fps", "budget", "readers": as `stats` reports it.
std::string to_string(RateLimit limit);

class FramePacer {
 public:
  /// The share of the budget the pacer spends: the rest is room for what the GPU events do not
  /// see — the simulation's caches refilled after a frame's copy (an H100, 2026-11-26: Gray–Scott
  /// at 8192² under a 1 % budget cost 0.92 % by the events and 1.03 % from outside).
  static constexpr double kAim = 0.9;
  /// max_fps 0: no frame-rate limit; max_cost >= 1: no budget.
  FramePacer(double max_fps, double max_cost);

  /// Whether a frame may start at `now_ns`. `skip_fps`: one asked for (a new reader, a change)
  /// that need not wait for the frame period; `skip_budget` too: one that must be published
  /// whatever it costs (the program is paused, or parts agreed on it). Records what held it
  /// back, for limit().
  [[nodiscard]] bool due(std::int64_t now_ns, bool skip_fps, bool skip_budget);
  /// Whether max_fps alone would let a frame start at `now_ns` (a frame period has passed).
  [[nodiscard]] bool period_elapsed(std::int64_t now_ns) const;
  /// Whether the budget alone would let a frame start at `now_ns`.
  [[nodiscard]] bool within_budget(std::int64_t now_ns) const;
  /// A frame started at `now_ns` (its cost is measured later).
  void started(std::int64_t now_ns);
  /// A due frame found every slot held and was skipped at `now_ns`.
  void skipped(std::int64_t now_ns);
  /// The cost of the oldest started frame not yet measured, in seconds.
  void measured(double seconds);
  /// Cost measured apart from the frames (a picture cast from one, on a stream of its own): the
  /// next frame to start waits for it as for a frame's, cost / (kAim · max_cost) more.
  void add_cost(double seconds);
  /// Whether a picture of a camera that just moved may be cast now beyond the budget's pace: once
  /// between two frame starts. Its cost (add_cost) then holds the next frame back, so that over
  /// every interval between frames the share stays within the budget: a person who turns the
  /// camera sees it turned at once, and the run pays for it by a later frame.
  [[nodiscard]] bool may_borrow() const noexcept { return !borrowed_; }
  /// Such a picture was cast (until the next started()).
  void borrowed() noexcept { borrowed_ = true; }

  /// What holds the frame rate down: what has held a frame back since the newest one began, or
  /// else what held that one back.
  [[nodiscard]] RateLimit limit() const noexcept { return held_ != RateLimit::none ? held_ : limit_; }
  /// Seconds of publishing measured so far, in all.
  [[nodiscard]] double cost_seconds() const noexcept { return cost_total_; }
  /// The cost the next frame is paced by: the largest of the last few measured (0: none yet).
  [[nodiscard]] double frame_cost() const noexcept;
  /// When the budget lets the next frame start (monotonic ns; 0: at once).
  [[nodiscard]] std::int64_t budget_allows_at() const noexcept;

 private:
  double max_fps_, max_cost_;
  std::int64_t last_start_ns_ = 0;   // the newest frame's start
  std::int64_t last_period_ns_ = 0;  // where the frame period counts from: the newest start or skip
  bool started_any_ = false;
  std::uint32_t unmeasured_ = 0;    // frames started whose cost is not known yet
  std::array<double, 4> recent_{};  // the last measured costs
  std::uint32_t measured_count_ = 0;
  double cost_total_ = 0;
  double last_cost_ = 0;            // the newest frame's cost, once measured (else frame_cost())
  double debt_ = 0;                 // add_cost() since the newest frame started
  bool last_measured_ = false;
  bool borrowed_ = false;           // a picture was cast beyond the pace since the newest frame started
  RateLimit held_ = RateLimit::none, limit_ = RateLimit::none;
};

}  // namespace cuview
