// A CUDA plugin whose step kernel writes through a null pointer after a few steps: what a plugin
// bug looks like to the daemon (an illegal address, reported asynchronously by the GPU).
#include <cuda_runtime.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "sims/plugin.hpp"

namespace {
using namespace cuview;
using namespace cuview::sim;

__global__ void bad_kernel(float* p, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 1.0f;
}

class Fault final : public Simulation {
 public:
  Fault(Executor& e, const SimulationConfig& c)
      : stream_(e.stream().get()), cells_(std::size_t{c.width} * c.height) {
    if (cudaMalloc(&data_, cells_ * sizeof(float)) != cudaSuccess) throw std::runtime_error("cudaMalloc failed");
  }
  ~Fault() override { cudaFree(data_); }
  std::vector<FieldSpec> fields() const override { return {{"x", DType::float32, 1, "ones"}}; }
  std::vector<ParamSpec> params() const override { return {}; }
  void reset(std::uint64_t) override { steps_ = 0; }
  void set_params(const std::map<std::string, double>&) override {}
  void step(std::uint32_t n) override {
    steps_ += n;
    // A plugin bug: after 64 steps it launches on a null pointer. The launch itself succeeds.
    bad_kernel<<<static_cast<unsigned>((cells_ + 255) / 256), 256, 0, stream_>>>(steps_ > 64 ? nullptr : data_,
                                                                                 static_cast<int>(cells_));
  }
  void write_fields(const std::vector<FieldTarget>& t) override {
    if (cudaMemcpyAsync(t[0].data, data_, t[0].bytes, cudaMemcpyDeviceToDevice, stream_) != cudaSuccess)
      throw std::runtime_error("copying x into a slot failed");
  }

 private:
  cudaStream_t stream_;
  std::size_t cells_;
  float* data_ = nullptr;
  std::uint64_t steps_ = 0;
};

std::unique_ptr<Simulation> make(Executor& e, const SimulationConfig& c) {
  if (e.kind() != Executor::Kind::cuda) throw std::runtime_error("the cuda-fault test plugin needs --backend cuda");
  return std::make_unique<Fault>(e, c);
}
}  // namespace

CUVIEW_SIMULATION_PLUGIN("cuda-fault", "a plugin whose kernel faults after 64 steps (test plugin)", make)
