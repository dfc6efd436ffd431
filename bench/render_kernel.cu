#include <cuda_runtime.h>

#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
#include "cuview/cuda/stream.hpp"
#include "render_kernel.hpp"

namespace cuview::bench {
using gui::render_pixel;
using gui::ViewTransform;
namespace {
__global__ void render_kernel(const float* field, const std::uint32_t* lut, ViewTransform t, std::uint32_t* rgba,
                              float* values) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= t.view_w || y >= t.view_h) return;
  const std::size_t i = static_cast<std::size_t>(y) * t.view_w + x;
  render_pixel(field, lut, t, x, y, rgba[i], values[i]);
}
}  // namespace

struct KernelRenderer::Impl {
  cuda::Stream stream = cuda::Stream::create();
  cuda::DeviceBuffer lut{256 * sizeof(std::uint32_t)};
  cuda::DeviceBuffer pixels, values;
  std::size_t capacity = 0;
};

KernelRenderer::KernelRenderer() : impl_(std::make_unique<Impl>()) {}
KernelRenderer::~KernelRenderer() = default;

cuda::StreamRef KernelRenderer::stream() const { return impl_->stream.ref(); }

void KernelRenderer::render(const float* field, const std::uint32_t* lut, const ViewTransform& t, std::uint32_t* rgba,
                            float* values) {
  auto& im = *impl_;
  const std::size_t n = static_cast<std::size_t>(t.view_w) * t.view_h;
  if (n > im.capacity) {
    im.pixels = cuda::DeviceBuffer(n * sizeof(std::uint32_t));
    im.values = cuda::DeviceBuffer(n * sizeof(float));
    im.capacity = n;
  }
  const auto s = im.stream.get();
  cuda::check(cudaMemcpyAsync(im.lut.get(), lut, 256 * sizeof(std::uint32_t), cudaMemcpyHostToDevice, s),
              "uploading the colormap");
  const dim3 block(32, 8);
  const dim3 grid((t.view_w + 31) / 32, (t.view_h + 7) / 8);
  render_kernel<<<grid, block, 0, s>>>(field, static_cast<const std::uint32_t*>(im.lut.get()), t,
                                       static_cast<std::uint32_t*>(im.pixels.get()),
                                       static_cast<float*>(im.values.get()));
  cuda::check(cudaGetLastError(), "launching the viewer's render kernel");
  cuda::check(cudaMemcpyAsync(rgba, im.pixels.get(), n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, s),
              "copying rendered pixels to the host");
  cuda::check(cudaMemcpyAsync(values, im.values.get(), n * sizeof(float), cudaMemcpyDeviceToHost, s),
              "copying rendered values to the host");
  cuda::check(cudaStreamSynchronize(s), "cudaStreamSynchronize after rendering a frame");
}

}  // namespace cuview::bench
