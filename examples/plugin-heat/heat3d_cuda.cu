// The heat3d plugin's CUDA side (heat_cuda.cu's, one axis more): the state on the executor's
// device, one kernel per step, all on the executor's stream (the publisher queues its frame copies
// on the same stream, after these).
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "heat3d.hpp"

namespace heat3d {
using namespace cuview;
using namespace cuview::sim;

namespace {
__global__ void step_kernel(const float* t, float* out, int w, int h, int d, float alpha) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  const int z = blockIdx.z;
  if (x < w && y < h && z < d)
    out[(static_cast<long long>(z) * h + y) * w + x] = step_cell(t, x, y, z, w, h, d, alpha);
}

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

class Heat3dCuda final : public Simulation {
 public:
  Heat3dCuda(Executor& executor, int w, int h, int d)
      : device_(executor.device_id()), stream_(executor.stream().get()), w_(w), h_(h), d_(d) {
    check(cudaSetDevice(device_), "cudaSetDevice");
    for (auto& b : t_) check(cudaMalloc(&b, bytes()), "cudaMalloc of the temperature");
  }
  ~Heat3dCuda() override {
    for (auto* b : t_) cudaFree(b);
  }
  std::vector<FieldSpec> fields() const override { return {{"T", DType::float32, 1, "temperature"}}; }
  std::vector<ParamSpec> params() const override {
    return {{"alpha", 0.15, 0.0, 0.16, false, "diffusivity × time step (stable up to 1/6)"}};
  }
  std::vector<Preset> presets() const override { return {{"slow", {{"alpha", 0.05}}}, {"fast", {{"alpha", 0.16}}}}; }
  void reset(std::uint64_t seed) override {
    std::vector<float> t(cells());
    initial_state(w_, h_, d_, seed, t.data());
    cur_ = 0;
    check(cudaMemcpyAsync(t_[0], t.data(), bytes(), cudaMemcpyHostToDevice, stream_), "uploading the initial state");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after reset");
  }
  void set_params(const std::map<std::string, double>& v) override { alpha_ = static_cast<float>(v.at("alpha")); }
  void step(std::uint32_t n) override {
    const dim3 block(32, 8), grid((w_ + 31) / 32, (h_ + 7) / 8, d_);
    for (std::uint32_t s = 0; s < n; ++s) {
      step_kernel<<<grid, block, 0, stream_>>>(t_[cur_], t_[1 - cur_], w_, h_, d_, alpha_);
      cur_ = 1 - cur_;
    }
    check(cudaGetLastError(), "launching the heat3d step kernel");
  }
  std::vector<StateSpec> state() const override {
    return {{"T",
             DType::float32,
             {static_cast<std::uint64_t>(d_), static_cast<std::uint64_t>(h_), static_cast<std::uint64_t>(w_)},
             "temperature"}};
  }
  void save_state(const std::vector<void*>& out) override {  // queued; the daemon waits for the stream
    check(cudaMemcpyAsync(out[0], t_[cur_], bytes(), cudaMemcpyDeviceToHost, stream_), "saving the temperature");
  }
  void load_state(const std::vector<const void*>& in) override {
    cur_ = 0;
    check(cudaMemcpyAsync(t_[0], in[0], bytes(), cudaMemcpyHostToDevice, stream_), "restoring the temperature");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after restoring");
  }
  void write_fields(const std::vector<FieldTarget>& targets) override {
    check(cudaMemcpyAsync(targets[0].data, t_[cur_], targets[0].bytes, cudaMemcpyDeviceToDevice, stream_),
          "copying T into a ring slot");
  }

 private:
  [[nodiscard]] std::size_t cells() const { return static_cast<std::size_t>(w_) * h_ * d_; }
  [[nodiscard]] std::size_t bytes() const { return sizeof(float) * cells(); }
  int device_;
  cudaStream_t stream_;
  int w_, h_, d_;
  float alpha_ = 0.15f;
  float* t_[2] = {nullptr, nullptr};
  int cur_ = 0;
};
}  // namespace

std::unique_ptr<Simulation> make_cuda(Executor& executor, int w, int h, int d) {
  return std::make_unique<Heat3dCuda>(executor, w, h, d);
}

}  // namespace heat3d
