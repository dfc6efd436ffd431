// How fast one remote client takes views, and which encoding that allows. Each view sent is
// timed until the client's credit for it reaches the gateway (from when the link was free of the
// previous view), as TCP's delivery-rate estimators do; views are pooled until they account for
// at least 50 ms of the link's time, so that small views crossing a token bucket's burst at memory
// speed do not pass for the link's rate. The encoding is the finest whose views, at the sizes measured for
// that encoding so far, still arrive at the target frame rate; the credits then set the frame
// rate: a slow link gets fewer frames, never late ones.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>

#include "cuview/remote_protocol.hpp"

namespace cuview::gateway {

class LinkMeter {
 public:
  using Clock = std::chrono::steady_clock;

  /// A view of `samples` values went out as `bytes` (compressed) in `encoding`.
  void sent(std::uint64_t seq, remote::Encoding encoding, std::size_t bytes, std::size_t samples, Clock::time_point t);
  /// The client's credit for view `seq` came back at `t`.
  void acked(std::uint64_t seq, Clock::time_point t);
  /// The delivery rate, bytes per second; 0 until measured.
  [[nodiscard]] double bytes_per_s() const noexcept { return rate_; }
  /// The finest encoding whose views of `samples` values arrive at `target_fps` on this link.
  /// Before anything is measured: u8, the smallest.
  [[nodiscard]] remote::Encoding choose(std::size_t samples, double target_fps) const;
  /// Expected compressed bytes per value in `e` (measured, or guessed from another encoding).
  [[nodiscard]] double bytes_per_sample(remote::Encoding e) const;

 private:
  struct InFlight {
    std::uint64_t seq;
    std::size_t bytes;
    Clock::time_point t;
  };
  std::deque<InFlight> in_flight_;
  Clock::time_point last_ack_{};
  double rate_ = 0;
  double pooled_bytes_ = 0, pooled_s_ = 0;  // acknowledged since the last rate sample
  std::array<double, 3> per_sample_{0, 0, 0};  // by Encoding, EWMA; 0: not measured
};

}  // namespace cuview::gateway
