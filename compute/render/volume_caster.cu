#include <cuda_runtime.h>

#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
#include "render/volume_caster.hpp"

namespace cuview {
namespace {
__global__ void cast_kernel(VolumeRays rays, std::uint32_t* argb, float* values) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= rays.width || y >= rays.height) return;
  const std::size_t at = static_cast<std::size_t>(y) * rays.width + x;
  cast_ray(rays, x, y, argb[at], values[at]);
}
}  // namespace

struct VolumeCaster::Impl {
  cuda::DeviceBuffer tables{sizeof(VolumeTables)};
  cuda::DeviceBuffer argb, values;
  std::size_t capacity = 0;
  VolumeTables host_tables;  // the upload's source: alive until the stream has read it
};

VolumeCaster::VolumeCaster() : impl_(std::make_unique<Impl>()) {}
VolumeCaster::~VolumeCaster() = default;

void VolumeCaster::cast_on_device(const VolumeBrick& brick, const VolumeCamera& camera, VolumeMode mode,
                                  const VolumeStyle& style, int width, int height, cuda::StreamRef stream,
                                  std::uint32_t* argb, float* values) {
  auto& im = *impl_;
  VolumeRays rays = volume_rays(brick, camera, mode, style, width, height, im.host_tables);
  if (rays.width == 0 || rays.height == 0) return;
  auto* device_tables = static_cast<VolumeTables*>(im.tables.get());
  const auto s = stream.get();
  cuda::check(cudaMemcpyAsync(device_tables, &im.host_tables, sizeof(VolumeTables), cudaMemcpyHostToDevice, s),
              "uploading the volume picture's colormap and opacity tables");
  rays.lut = device_tables->lut.data();
  rays.step_alpha = device_tables->step_alpha.data();
  rays.rgb = device_tables->rgb.data();
  const dim3 block(16, 16);
  const dim3 grid((rays.width + 15) / 16, (rays.height + 15) / 16);
  cast_kernel<<<grid, block, 0, s>>>(rays, argb, values);
  cuda::check(cudaGetLastError(), "launching the volume caster's kernel");
}

void VolumeCaster::cast(const VolumeBrick& brick, const VolumeCamera& camera, VolumeMode mode,
                        const VolumeStyle& style, int width, int height, cuda::StreamRef stream, VolumePicture& out) {
  auto& im = *impl_;
  out.width = width > 0 ? width : 0, out.height = height > 0 ? height : 0;
  const std::size_t n = static_cast<std::size_t>(out.width) * out.height;
  out.argb.assign(n, kVolumeMiss);
  out.values.assign(n, NAN);
  if (n == 0 || brick.data == nullptr) return;
  if (n > im.capacity) {
    im.argb = cuda::DeviceBuffer(n * sizeof(std::uint32_t));
    im.values = cuda::DeviceBuffer(n * sizeof(float));
    im.capacity = n;
  }
  auto* argb = static_cast<std::uint32_t*>(im.argb.get());
  auto* values = static_cast<float*>(im.values.get());
  cast_on_device(brick, camera, mode, style, width, height, stream, argb, values);
  const auto s = stream.get();
  cuda::check(cudaMemcpyAsync(out.argb.data(), argb, n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, s),
              "copying the volume picture's pixels to the host");
  cuda::check(cudaMemcpyAsync(out.values.data(), values, n * sizeof(float), cudaMemcpyDeviceToHost, s),
              "copying the volume picture's values to the host");
  cuda::check(cudaStreamSynchronize(s), "waiting for the volume picture");
}

}  // namespace cuview
