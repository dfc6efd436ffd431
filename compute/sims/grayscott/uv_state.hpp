// What the Gray–Scott simulations of two and three axes share on the host: u and v, double
// buffered (u2, v2: the next step's), saved, restored and published alike. The CUDA twin is
// uv_state_cuda.hpp.
#pragma once

#include <cstring>
#include <utility>

#include "executor/executor.hpp"
#include "sims/host_array.hpp"
#include "sims/simulation.hpp"

namespace cuview::sim::grayscott {

class HostUv : public Simulation {
 public:
  void save_state(const std::vector<void*>& out) override {
    std::memcpy(out[0], u_, cells_ * sizeof(float));
    std::memcpy(out[1], v_, cells_ * sizeof(float));
  }
  void load_state(const std::vector<const void*>& in) override {
    std::memcpy(u_, in[0], cells_ * sizeof(float));
    std::memcpy(v_, in[1], cells_ * sizeof(float));
  }
  void write_fields(const std::vector<FieldTarget>& targets) override {
    // The executor's copy sums the frame checksum as it goes: one pass over each field.
    // Only the fields some reader reads.
    if (targets[0].read) executor_.copy(targets[0].data, u_, targets[0].bytes, {});
    if (targets[1].read) executor_.copy(targets[1].data, v_, targets[1].bytes, {});
  }

 protected:
  HostUv(Executor& executor, std::size_t cells) : executor_(executor), cells_(cells) {
    // One allocation, the four arrays 1 KiB apart modulo 4 KiB: at one page offset a row's loads
    // of u and v waited on its stores to u2 and v2 (4K aliasing); 1024² ran 15–25 % slower on
    // one core.
    const std::size_t stride = staggered_stride(cells_, 256);
    arrays_ = HostArray(4 * stride);
    u_ = arrays_.data(), v_ = u_ + stride, u2_ = v_ + stride, v2_ = u2_ + stride;
  }
  /// After a step: the next step's arrays become the current ones.
  void swap_buffers() {
    std::swap(u_, u2_);
    std::swap(v_, v2_);
  }

  Executor& executor_;
  std::size_t cells_;
  HostArray arrays_;  ///< u, v, u2, v2 (the constructor says where)
  float *u_, *v_, *u2_, *v2_;
};

}  // namespace cuview::sim::grayscott
