#include "link_meter.hpp"

#include <algorithm>

namespace cuview::gateway {
using remote::Encoding;

void LinkMeter::sent(std::uint64_t seq, Encoding encoding, std::size_t bytes, std::size_t samples,
                     Clock::time_point t) {
  if (in_flight_.size() > 16) in_flight_.pop_front();
  in_flight_.push_back({seq, bytes, t});
  if (samples == 0) return;
  auto& p = per_sample_[static_cast<std::size_t>(encoding)];
  const double now = static_cast<double>(bytes) / static_cast<double>(samples);
  p = p == 0 ? now : 0.7 * p + 0.3 * now;
}

void LinkMeter::acked(std::uint64_t seq, Clock::time_point t) {
  while (!in_flight_.empty() && in_flight_.front().seq < seq) in_flight_.pop_front();
  if (in_flight_.empty() || in_flight_.front().seq != seq) return;
  const auto f = in_flight_.front();
  in_flight_.pop_front();
  // The link carried this view from when it went out, or from when it finished the one before.
  const auto start = std::max(f.t, last_ack_);
  last_ack_ = t;
  pooled_bytes_ += static_cast<double>(f.bytes);
  pooled_s_ += std::max(std::chrono::duration<double>(t - start).count(), 0.0);
  if (pooled_s_ < 0.05) return;
  const double sample = pooled_bytes_ / pooled_s_;
  pooled_bytes_ = pooled_s_ = 0;
  rate_ = rate_ == 0 ? sample : 0.75 * rate_ + 0.25 * sample;
}

double LinkMeter::bytes_per_sample(Encoding e) const {
  const auto i = static_cast<std::size_t>(e);
  if (per_sample_[i] > 0) return per_sample_[i];
  // Not measured yet: scale a measured encoding by the raw sizes (1, 2, 4 bytes a value), a guess
  // on the generous side, since finer codes compress somewhat better than their raw size says.
  for (std::size_t j = 0; j < per_sample_.size(); ++j)
    if (per_sample_[j] > 0)
      return per_sample_[j] * static_cast<double>(remote::value_bytes(e)) /
             static_cast<double>(remote::value_bytes(static_cast<Encoding>(j)));
  return static_cast<double>(remote::value_bytes(e));
}

Encoding LinkMeter::choose(std::size_t samples, double target_fps) const {
  if (rate_ <= 0) return Encoding::u8;
  for (auto e : {Encoding::f32, Encoding::u16}) {
    // 80 %: room for the credits and the link's own variation.
    if (bytes_per_sample(e) * static_cast<double>(samples) * target_fps <= 0.8 * rate_) return e;
  }
  return Encoding::u8;
}

}  // namespace cuview::gateway
