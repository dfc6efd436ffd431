// The wave on a CUDA device: two buffers that never move, two kernels per step, one stream.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "wave.hpp"

namespace wave {
namespace {

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

__global__ void velocity_kernel(const float* u, float* v, int w, int h, Params p) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) v[y * w + x] = velocity_cell(u, v, x, y, w, h, p);
}

__global__ void position_kernel(float* u, const float* v, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) u[i] += v[i];
}

__global__ void drop_kernel(float* u, int w, int h, float cx, float cy, float r, float amp) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && y > 0 && x < w - 1 && y < h - 1) u[y * w + x] += drop_cell(x, y, cx, cy, r, amp);
}

class CudaWave final : public Wave {
 public:
  CudaWave(int w, int h) : w_(w), h_(h), n_(std::size_t(w) * h) {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaMalloc(&u_, n_ * sizeof(float)), "cudaMalloc of u");
    check(cudaMalloc(&v_, n_ * sizeof(float)), "cudaMalloc of v");
  }
  ~CudaWave() override {
    cudaStreamSynchronize(stream_);
    cudaFree(u_);
    cudaFree(v_);
    cudaStreamDestroy(stream_);
  }
  const float* u() const override { return u_; }
  const float* v() const override { return v_; }
  cuview::cuda::StreamRef stream() const override { return stream_; }
  void reset() override {
    check(cudaMemsetAsync(u_, 0, n_ * sizeof(float), stream_), "clearing u");
    check(cudaMemsetAsync(v_, 0, n_ * sizeof(float), stream_), "clearing v");
    drop(w_ / 2.0f, h_ / 2.0f, w_ / 24.0f + 2.0f, 1.0f);
  }
  void step(int n, Params p) override {
    const dim3 block(32, 8), grid((w_ + 31) / 32, (h_ + 7) / 8);
    const int threads = 256, blocks = static_cast<int>((n_ + threads - 1) / threads);
    for (int s = 0; s < n; ++s) {
      velocity_kernel<<<grid, block, 0, stream_>>>(u_, v_, w_, h_, p);
      position_kernel<<<blocks, threads, 0, stream_>>>(u_, v_, n_);
    }
    check(cudaGetLastError(), "launching the wave kernels");
  }
  void drop(float cx, float cy, float r, float amp) override {
    const dim3 block(32, 8), grid((w_ + 31) / 32, (h_ + 7) / 8);
    drop_kernel<<<grid, block, 0, stream_>>>(u_, w_, h_, cx, cy, r, amp);
    check(cudaGetLastError(), "launching the drop kernel");
  }
  void sync() override { check(cudaStreamSynchronize(stream_), "waiting for the wave's steps"); }

 private:
  int w_, h_;
  std::size_t n_;
  cudaStream_t stream_ = nullptr;
  float* u_ = nullptr;
  float* v_ = nullptr;
};

}  // namespace

std::unique_ptr<Wave> make_cuda(int w, int h) { return std::make_unique<CudaWave>(w, h); }

}  // namespace wave
