// When a publisher may publish: the frame rate and the cost budget (pacer.hpp).
#include "publisher/pacer.hpp"

#include <algorithm>
#include <limits>

namespace cuview {

std::string to_string(RateLimit limit) {
  switch (limit) {
    case RateLimit::fps: return "fps";
    case RateLimit::budget: return "budget";
    case RateLimit::readers: return "readers";
    case RateLimit::none: break;
  }
  return "";
}

FramePacer::FramePacer(double max_fps, double max_cost) : max_fps_(max_fps), max_cost_(max_cost) {}

double FramePacer::frame_cost() const noexcept {
  double c = 0;
  for (std::uint32_t i = 0; i < std::min<std::uint32_t>(measured_count_, recent_.size()); ++i)
    c = std::max(c, recent_[i]);
  return c;
}

std::int64_t FramePacer::budget_allows_at() const noexcept {
  if (max_cost_ >= 1 || !started_any_) return 0;
  if (measured_count_ == 0) return std::numeric_limits<std::int64_t>::max();  // cost unknown yet
  const double cost = (last_measured_ ? last_cost_ : frame_cost()) + debt_;
  return last_start_ns_ + static_cast<std::int64_t>(cost / (kAim * max_cost_) * 1e9);
}

bool FramePacer::within_budget(std::int64_t now_ns) const { return now_ns >= budget_allows_at(); }

bool FramePacer::period_elapsed(std::int64_t now_ns) const {
  return max_fps_ <= 0 || !started_any_ || static_cast<double>(now_ns - last_period_ns_) >= 1e9 / max_fps_;
}

bool FramePacer::due(std::int64_t now_ns, bool skip_fps, bool skip_budget) {
  if (skip_budget) return true;
  const bool period = skip_fps || period_elapsed(now_ns);
  if (period && within_budget(now_ns)) return true;
  held_ = std::max(held_, period ? RateLimit::budget : RateLimit::fps);
  return false;
}

void FramePacer::started(std::int64_t now_ns) {
  last_start_ns_ = last_period_ns_ = now_ns;
  debt_ = 0;  // the time since the previous start paid for it
  borrowed_ = false;
  started_any_ = true;
  ++unmeasured_;
  last_measured_ = false;
  limit_ = held_;
  held_ = RateLimit::none;
}

void FramePacer::skipped(std::int64_t now_ns) {
  last_period_ns_ = now_ns;  // a due frame is skipped once; the next is due a period later
  held_ = std::max(held_, RateLimit::readers);
  limit_ = held_;
}

void FramePacer::measured(double seconds) {
  seconds = std::max(seconds, 0.0);
  recent_[measured_count_++ % recent_.size()] = seconds;
  cost_total_ += seconds;
  if (unmeasured_ > 0 && --unmeasured_ == 0) {
    last_cost_ = seconds;
    last_measured_ = true;
  }
}

void FramePacer::add_cost(double seconds) {
  seconds = std::max(seconds, 0.0);
  cost_total_ += seconds;
  debt_ += seconds;
}

}  // namespace cuview
