// The bench's own GPU work: the device-to-device copy bandwidth, the FP32 FMA rate, and the offset between the
// GPU's global timer (which the daemon writes into each frame's trailer) and CLOCK_REALTIME.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "bench.hpp"
#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
#include "cuview/cuda/event.hpp"
#include "cuview/cuda/probe.hpp"
#include "cuview/posix.hpp"

namespace cuview::bench {
namespace {
__global__ void read_globaltimer(std::uint64_t* out) {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  *out = t;
}

/// Sixteen independent FMA chains per thread: nothing but FFMA in the loop, the FP32 pipe's best.
__global__ void fma_chains(float* out, int iters) {
  float a[16];
#pragma unroll
  for (int k = 0; k < 16; ++k) a[k] = static_cast<float>(threadIdx.x) * 1e-7f + static_cast<float>(k);
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 16; ++k) a[k] = fmaf(a[k], 0.999999f, 1e-7f);
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < 16; ++k) s += a[k];
  if (s == 12345.0f) out[threadIdx.x] = s;  // never true; keeps the chains alive
}
}  // namespace

std::optional<Clocks> calibrate_gpu_clock() {
  if (!cuda::probe().usable) return std::nullopt;
  std::uint64_t* mapped = nullptr;
  cuda::check(cudaHostAlloc(&mapped, sizeof *mapped, cudaHostAllocMapped), "cudaHostAlloc for the clock probe");
  std::uint64_t* dev = nullptr;
  cuda::check(cudaHostGetDevicePointer(&dev, mapped, 0), "cudaHostGetDevicePointer");
  Clocks best{0, 1e18};
  for (int i = 0; i < 300; ++i) {
    const auto t0 = realtime_ns();
    read_globaltimer<<<1, 1>>>(dev);
    cuda::check(cudaDeviceSynchronize(), "the clock probe kernel");
    const auto t1 = realtime_ns();
    const double half = 0.5 * static_cast<double>(t1 - t0);
    if (half < best.error_ns) {
      best.error_ns = half;
      best.offset_ns = static_cast<double>(*mapped) - (static_cast<double>(t0) + half);
    }
  }
  cudaFreeHost(mapped);
  return best;
}

std::vector<double> copy_bandwidth(int reps) {
  const std::size_t bytes = std::size_t{1} << 30;
  cuda::DeviceBuffer a(bytes), b(bytes);
  cuda::Event e0(cuda::EventKind::timing), e1(cuda::EventKind::timing);
  cuda::check(cudaMemcpy(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice), "warm-up copy");
  std::vector<double> rates;
  for (int r = 0; r < reps; ++r) {
    cuda::check(cudaEventRecord(e0.get()), "cudaEventRecord");
    cuda::check(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice), "a timed 1 GiB copy");
    cuda::check(cudaEventRecord(e1.get()), "cudaEventRecord");
    cuda::check(cudaEventSynchronize(e1.get()), "timing a copy");
    float ms = 0;
    cuda::check(cudaEventElapsedTime(&ms, e0.get(), e1.get()), "cudaEventElapsedTime");
    rates.push_back(2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9);
  }
  return rates;
}

std::vector<double> fma_rate(int reps) {
  int dev = 0, sms = 0;
  cuda::check(cudaGetDevice(&dev), "cudaGetDevice");
  cuda::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "counting SMs");
  cuda::DeviceBuffer out(4096);
  cuda::Event e0(cuda::EventKind::timing), e1(cuda::EventKind::timing);
  const int threads = 1024, blocks = 2 * sms, iters = 100000;
  fma_chains<<<blocks, threads>>>(static_cast<float*>(out.get()), 1000);
  cuda::check(cudaDeviceSynchronize(), "the FMA warm-up kernel");
  std::vector<double> rates;
  for (int r = 0; r < reps; ++r) {
    cuda::check(cudaEventRecord(e0.get()), "cudaEventRecord");
    fma_chains<<<blocks, threads>>>(static_cast<float*>(out.get()), iters);
    cuda::check(cudaEventRecord(e1.get()), "cudaEventRecord");
    cuda::check(cudaEventSynchronize(e1.get()), "timing the FMA kernel");
    float ms = 0;
    cuda::check(cudaEventElapsedTime(&ms, e0.get(), e1.get()), "cudaEventElapsedTime");
    rates.push_back(2.0 * 16 * iters * static_cast<double>(threads) * blocks / (ms * 1e-3) / 1e12);
  }
  return rates;
}

}  // namespace cuview::bench
