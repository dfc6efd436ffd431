// Section "cast": full-resolution volume pictures cast on the GPU (compute/render/volume_caster):
// a field of N³ cells with thin structure (sheets and filaments, the fine detail that a brick of
// every k-th cell erases), a 1280×720 picture per mode from an orbiting camera, timed with CUDA
// events on a stream of its own; the GPU is otherwise idle. What a picture costs a run on this GPU
// is that time over the run's time between pictures (issue 55's budget).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "bench.hpp"
#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
#include "cuview/cuda/stream.hpp"
#include "render/volume_caster.hpp"

namespace cuview::bench {
namespace {
__global__ void fill_structure(float* f, int n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  const long long total = static_cast<long long>(n) * n * n;
  if (i >= total) return;
  const float x = static_cast<float>(i % n) / n, y = static_cast<float>((i / n) % n) / n,
              z = static_cast<float>(i / (static_cast<long long>(n) * n)) / n;
  // Sheets (a sine's crests, a few cells thick at 512) and a twisted filament through the middle.
  const float sheets = __sinf(40.f * x + 13.f * y) * __sinf(31.f * z - 7.f * x);
  const float fx = x - 0.5f - 0.15f * __sinf(12.f * z), fy = y - 0.5f - 0.15f * __cosf(12.f * z);
  const float filament = __expf(-(fx * fx + fy * fy) * 4000.f);
  f[i] = 0.5f * (sheets > 0.9f ? sheets : 0.f) + filament;
}
}  // namespace

std::string cast_section(const Options& o) {
  std::string md =
      "\n### Volume pictures cast on the GPU, every cell (cuview-bench --sections cast)\n\n"
      "1280×720 from an orbiting camera (azimuth 30°, elevation 20°), a sample every 0.5 cell, "
      "trilinear, one thread per pixel; the field fills the GPU's memory as the grid says.\n\n"
      "| grid | field | mode | ms per picture (median) | pictures/s | samples per picture |\n| --- | --- | --- | --- | --- | --- |\n";
  for (const int n : {256, 512, 1024}) {
    const std::size_t cells = static_cast<std::size_t>(n) * n * n;
    std::size_t free = 0, total = 0;
    cuda::check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    if (cells * sizeof(float) + (std::size_t{64} << 20) > free) {
      md += "| " + std::to_string(n) + "³ | – | – | does not fit (" + std::to_string(free >> 20) + " MiB free) | | |\n";
      continue;
    }
    cuda::DeviceBuffer field(cells * sizeof(float));
    fill_structure<<<static_cast<unsigned>((cells + 255) / 256), 256>>>(static_cast<float*>(field.get()), n);
    cuda::check(cudaDeviceSynchronize(), "filling the field");
    const VolumeBrick brick{static_cast<const float*>(field.get()), n, n, n};
    VolumeCamera camera;
    camera.azimuth_deg = 30, camera.elevation_deg = 20;
    VolumeStyle style;
    for (std::size_t i = 0; i < 256; ++i) {
      const auto v = static_cast<std::uint32_t>(i);
      style.lut[i] = 0xff000000u | (v << 16) | (v << 8) | v;
      style.opacity[i] = 4.0f / n * (i / 255.0f) * (i / 255.0f) * 8;
    }
    style.lo = 0, style.hi = 1, style.level = 0.5f;
    constexpr int kW = 1280, kH = 720;
    cuda::DeviceBuffer argb(std::size_t{kW} * kH * 4), values(std::size_t{kW} * kH * 4);
    auto stream = cuda::Stream::create();
    VolumeCaster caster;
    cudaEvent_t a = nullptr, b = nullptr;
    cuda::check(cudaEventCreate(&a), "cudaEventCreate");
    cuda::check(cudaEventCreate(&b), "cudaEventCreate");
    const std::pair<VolumeMode, const char*> modes[] = {
        {VolumeMode::mip, "MIP"}, {VolumeMode::emission, "emission"}, {VolumeMode::isosurface, "isosurface"}};
    for (const auto& [mode, name] : modes) {
      std::vector<double> ms;
      for (int k = 0; k < std::max(o.reps, 3) + 2; ++k) {
        cuda::check(cudaEventRecord(a, stream.get()), "cudaEventRecord");
        caster.cast_on_device(brick, camera, mode, style, kW, kH, stream.ref(), static_cast<std::uint32_t*>(argb.get()),
                              static_cast<float*>(values.get()));
        cuda::check(cudaEventRecord(b, stream.get()), "cudaEventRecord");
        cuda::check(cudaEventSynchronize(b), "waiting for a picture");
        float t = 0;
        cuda::check(cudaEventElapsedTime(&t, a, b), "cudaEventElapsedTime");
        if (k >= 2) ms.push_back(t);  // after two warm-ups
      }
      const double med = percentile(ms, 0.5);
      // A ray through the middle crosses ~n·√3 cells at most; samples every 0.5 cell.
      md += "| " + std::to_string(n) + "³ | " + std::to_string(cells * 4 >> 20) + " MiB | " + name + " | " +
            fmt(med) + " | " + fmt(1000.0 / med) + " | ≤ " + sci(double(kW) * kH * n * std::sqrt(3.0) * 2) + " |\n";
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  return md;
}

}  // namespace cuview::bench
