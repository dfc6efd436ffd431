// What the Gray–Scott simulations of two and three axes share on the CUDA executor: u and v
// double-buffered on the device (index cur_ is the current step's), saved, restored and published
// alike. Included by .cu files only.
#pragma once

#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "executor/executor.hpp"
#include "sims/simulation.hpp"

namespace cuview::sim::grayscott {

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
};

}  // namespace cuview::sim::grayscott
