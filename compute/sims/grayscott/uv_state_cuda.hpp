// What the Gray–Scott simulations of two and three axes share on the CUDA executor: u and v
// double-buffered on the device (index cur_ is the current step's), saved, restored and published
// alike. Included by .cu files only.
#pragma once

#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "cuview/cuda/checksum.cuh"
#include "executor/executor.hpp"
#include "sims/simulation.hpp"

namespace cuview::sim::grayscott {

/// Where the launch ending with the step before a frame also writes u and v into it (the fields
/// read; null for the others), with their checksum terms (add_checksum_spread): one write per value
/// instead of a copy's read and write after the step.
struct UvFrameOut {
  float *u, *v;            // null: not read
  std::uint64_t w_u, w_v;  // first words in the slot
  std::uint64_t* sums;     // kChecksumSlots words
};

class CudaUv : public Simulation {
 public:
  void save_state(const std::vector<void*>& out) override {
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaMemcpyAsync(out[0], u_[cur_].get(), bytes(), cudaMemcpyDeviceToHost, stream_), "saving u");
    cuda::check(cudaMemcpyAsync(out[1], v_[cur_].get(), bytes(), cudaMemcpyDeviceToHost, stream_), "saving v");
  }
  void load_state(const std::vector<const void*>& in) override {
    cuda::DeviceGuard guard(device_);
    cur_ = 0;
    cuda::check(cudaMemcpyAsync(u_[0].get(), in[0], bytes(), cudaMemcpyHostToDevice, stream_), "restoring u");
    cuda::check(cudaMemcpyAsync(v_[0].get(), in[1], bytes(), cudaMemcpyHostToDevice, stream_), "restoring v");
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after restoring the state");
  }
  void write_fields(const std::vector<FieldTarget>& targets) override {
    cuda::DeviceGuard guard(device_);
    // The executor's copy adds the checksum as it goes: one read and one write per value.
    // Only the fields some reader reads.
    if (targets[0].read) executor_.copy(targets[0].data, u_[cur_].get(), targets[0].bytes, executor_.stream());
    if (targets[1].read) executor_.copy(targets[1].data, v_[cur_].get(), targets[1].bytes, executor_.stream());
  }

 protected:
  /// A frame's outputs for `targets` (u, v), its checksum words cleared; every target marked as
  /// summed (Executor::sum_into). The frame's checksum gets them with add_frame_checksum() after
  /// the launch.
  UvFrameOut frame_out(const std::vector<FieldTarget>& t) {
    const FieldChecksum cu = executor_.sum_into(t[0]), cv = executor_.sum_into(t[1]);
    frame_sum_ = t[0].read ? cu.sum : cv.sum;
    return {t[0].read ? static_cast<float*>(t[0].data) : nullptr, t[1].read ? static_cast<float*>(t[1].data) : nullptr,
            cu.first_word, cv.first_word, sums_.clear(stream_)};
  }
  void add_frame_checksum() { sums_.add_into(frame_sum_, stream_); }

  CudaUv(Executor& executor, std::size_t cells)
      : executor_(executor), device_(executor.device_id()), stream_(executor.stream().get()), cells_(cells) {
    cuda::DeviceGuard guard(device_);
    for (int i = 0; i < 2; ++i) {
      u_[i] = cuda::DeviceBuffer(bytes());
      v_[i] = cuda::DeviceBuffer(bytes());
    }
  }
  [[nodiscard]] std::size_t bytes() const { return cells_ * sizeof(float); }
  /// The current step's arrays (`next` false) or the next step's.
  [[nodiscard]] float* u(bool next = false) const { return static_cast<float*>(u_[next ? 1 - cur_ : cur_].get()); }
  [[nodiscard]] float* v(bool next = false) const { return static_cast<float*>(v_[next ? 1 - cur_ : cur_].get()); }

  Executor& executor_;
  int device_;
  cudaStream_t stream_;
  std::size_t cells_;
  cuda::DeviceBuffer u_[2], v_[2];
  int cur_ = 0;

 private:
  ChecksumSlots sums_;                   // a frame's launch's partial checksums
  std::uint64_t* frame_sum_ = nullptr;  // the frame's checksum, from frame_out to add_frame_checksum
};

}  // namespace cuview::sim::grayscott
