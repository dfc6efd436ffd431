#include <cuda_runtime.h>

#include <algorithm>
#include <new>

#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "cuview/cuda/event.hpp"
#include "cuview/cuda/pinned_buffer.hpp"
#include "cuview/cuda/stream.hpp"
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
__global__ void plane_kernel(PlaneCells cells, const std::uint32_t* lut, float lo, float hi, int width, int height,
                             std::uint32_t* argb, float* values) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  const std::size_t at = static_cast<std::size_t>(y) * width + x;
  const float v = plane_value(cells, x, y);
  values[at] = v;
  argb[at] = plane_colour(v, lut, lo, hi);
}
__global__ void blocks_kernel(const float* data, int w, int h, int d, int bw, int bh, int bd, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= bw * bh * bd) return;
  const int bx = i % bw, by = (i / bw) % bh, bz = i / (bw * bh);
  volume_block_range(data, w, h, d, bx, by, bz, out + 2 * static_cast<std::size_t>(i));
}
}  // namespace

struct VolumeCaster::Impl {
  cuda::DeviceBuffer tables{sizeof(VolumeTables)};
  cuda::DeviceBuffer blocks;
  std::size_t block_capacity = 0;
  cuda::DeviceBuffer argb, values;
  std::size_t capacity = 0;
  // The upload's source, in pinned memory: a copy from pageable memory would first wait for the
  // whole stream (the simulation's, for a picture cast alone) on the program's thread. Alive until
  // the stream has read it: one picture in flight per caster.
  cuda::PinnedBuffer pinned_tables{sizeof(VolumeTables), "a volume picture's tables"};
  VolumeTables& host_tables = *new (pinned_tables.data()) VolumeTables{};
};

VolumeCaster::VolumeCaster() : impl_(std::make_unique<Impl>()) {
  // The kernels' module is loaded now, not at their first launch (CUDA's lazy loading): a picture's
  // time is measured between events on its stream, and a first launch that loads the module left
  // the stream idle meanwhile — 393 ms counted as the first picture's cost of a 768³ run on an
  // H200, which held its 1 % budget's frames back for half a minute (docs/benchmarks.md).
  cuda::load_kernels("the volume caster's kernels", cast_kernel, blocks_kernel, plane_kernel);
}
VolumeCaster::~VolumeCaster() = default;

void VolumeCaster::reserve(const VolumeBrick& brick) {
  auto& im = *impl_;
  const std::size_t nblocks = static_cast<std::size_t>(volume_blocks_along(brick.width)) *
                              volume_blocks_along(brick.height) * volume_blocks_along(brick.depth);
  if (nblocks > im.block_capacity) {
    im.blocks = cuda::DeviceBuffer(nblocks * 2 * sizeof(float));
    im.block_capacity = nblocks;
  }
}

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
  rays.opaque_below = device_tables->opaque_below.data();
  // Empty-space skipping: each block's range, from this frame's cells.
  rays.bw = volume_blocks_along(brick.width), rays.bh = volume_blocks_along(brick.height);
  rays.bd = volume_blocks_along(brick.depth);
  const std::size_t nblocks = static_cast<std::size_t>(rays.bw) * rays.bh * rays.bd;
  reserve(brick);
  rays.blocks = static_cast<const float*>(im.blocks.get());
  blocks_kernel<<<static_cast<unsigned>((nblocks + 127) / 128), 128, 0, s>>>(
      brick.data, brick.width, brick.height, brick.depth, rays.bw, rays.bh, rays.bd, static_cast<float*>(im.blocks.get()));
  cuda::check(cudaGetLastError(), "launching the volume caster's block ranges");
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

struct AsyncPicture::Impl {
  int device = 0;
  cuda::Stream stream;
  cuda::Event written, start, end;  // the frame written (on `after`); the picture's work
  VolumeCaster caster;
  cuda::DeviceBuffer argb, values;
  cuda::PinnedBuffer host;  // argb then values
  std::size_t capacity = 0;
  cuda::DeviceBuffer lut{256 * sizeof(std::uint32_t)};  // a plane picture's colours, from host_lut
  cuda::PinnedBuffer host_lut{256 * sizeof(std::uint32_t), "a plane picture's colormap"};
  int width = 0, height = 0;
  bool queued = false, empty = false;
};

AsyncPicture::AsyncPicture(int device) {
  cuda::DeviceGuard guard(device);  // before Impl: its caster's buffers are made on the current device
  impl_ = std::make_unique<Impl>();
  auto& im = *impl_;
  im.device = device;
  im.stream = cuda::Stream::create(cuda::Stream::Priority::lowest);
  im.written = cuda::Event(cuda::EventKind::blocking_sync);
  im.start = cuda::Event(cuda::EventKind::timing);
  im.end = cuda::Event(cuda::EventKind::timing);
}

AsyncPicture::~AsyncPicture() {
  if (!impl_ || !impl_->queued) return;
  cuda::DeviceGuard guard(impl_->device);
  cudaStreamSynchronize(impl_->stream.get());  // its buffers are freed next: let the work end
}

bool AsyncPicture::busy() const noexcept { return impl_->queued; }

void AsyncPicture::queue(const VolumeBrick& brick, const VolumeCamera& camera, VolumeMode mode,
                         const VolumeStyle& style, int width, int height, cuda::StreamRef after, bool alone) {
  auto& im = *impl_;
  cuda::DeviceGuard guard(im.device);
  if (!begin(width, height, brick.data != nullptr)) return;
  im.caster.reserve(brick);
  const auto s = start(after, alone).get();
  auto* argb = static_cast<std::uint32_t*>(im.argb.get());
  auto* values = static_cast<float*>(im.values.get());
  im.caster.cast_on_device(brick, camera, mode, style, im.width, im.height, cuda::StreamRef(s), argb, values);
  finish(cuda::StreamRef(s));
}

void AsyncPicture::queue_plane(const PlaneCells& cells, const std::uint32_t* lut, float lo, float hi, int width,
                               int height, cuda::StreamRef after, bool alone) {
  auto& im = *impl_;
  cuda::DeviceGuard guard(im.device);
  if (!begin(width, height, cells.data != nullptr)) return;
  std::copy_n(lut, 256, im.host_lut.as<std::uint32_t>());
  const auto s = start(after, alone).get();
  auto* device_lut = static_cast<std::uint32_t*>(im.lut.get());
  cuda::check(cudaMemcpyAsync(device_lut, im.host_lut.data(), 256 * 4, cudaMemcpyHostToDevice, s),
              "uploading a plane picture's colormap");
  const dim3 block(16, 16);
  const dim3 grid((im.width + 15) / 16, (im.height + 15) / 16);
  plane_kernel<<<grid, block, 0, s>>>(cells, device_lut, lo, hi, im.width, im.height,
                                      static_cast<std::uint32_t*>(im.argb.get()), static_cast<float*>(im.values.get()));
  cuda::check(cudaGetLastError(), "launching the plane picture's kernel");
  finish(cuda::StreamRef(s));
}

bool AsyncPicture::begin(int width, int height, bool has_data) {
  auto& im = *impl_;
  im.width = std::max(width, 0), im.height = std::max(height, 0);
  const std::size_t n = static_cast<std::size_t>(im.width) * im.height;
  im.empty = n == 0 || !has_data;
  im.queued = true;
  if (im.empty) return false;
  // Every allocation before the picture's start event: one between its events (cudaMalloc) would
  // leave its stream idle meanwhile and count that as its cost — the simulation's stream's too,
  // for a picture cast alone.
  if (n > im.capacity) {
    im.argb = cuda::DeviceBuffer(n * sizeof(std::uint32_t));
    im.values = cuda::DeviceBuffer(n * sizeof(float));
    im.host = cuda::PinnedBuffer(n * 8, "a volume picture's pixels");
    im.capacity = n;
  }
  return true;
}

cuda::StreamRef AsyncPicture::start(cuda::StreamRef after, bool alone) {
  auto& im = *impl_;
  // Alone: on `after` itself, nothing else of this process beside it, so that its time is its own.
  const auto s = alone ? after.get() : im.stream.get();
  if (!alone) {
    cuda::check(cudaEventRecord(im.written.get(), after.get()), "cudaEventRecord (the frame a picture reads)");
    cuda::check(cudaStreamWaitEvent(s, im.written.get(), 0), "cudaStreamWaitEvent (a picture after its frame)");
  }
  cuda::check(cudaEventRecord(im.start.get(), s), "cudaEventRecord (a picture's start)");
  return cuda::StreamRef(s);
}

void AsyncPicture::finish(cuda::StreamRef stream) {
  const auto s = stream.get();
  auto& im = *impl_;
  const std::size_t n = static_cast<std::size_t>(im.width) * im.height;
  cuda::check(cudaMemcpyAsync(im.host.data(), im.argb.get(), n * 4, cudaMemcpyDeviceToHost, s),
              "copying a picture's pixels to the host");
  cuda::check(cudaMemcpyAsync(im.host.data() + n * 4, im.values.get(), n * 4, cudaMemcpyDeviceToHost, s),
              "copying a picture's values to the host");
  cuda::check(cudaEventRecord(im.end.get(), s), "cudaEventRecord (a picture's end)");
}

std::optional<double> AsyncPicture::collect(VolumePicture& out) {
  auto& im = *impl_;
  if (!im.queued) return std::nullopt;
  cuda::DeviceGuard guard(im.device);
  const std::size_t n = static_cast<std::size_t>(im.width) * im.height;
  out.width = im.width, out.height = im.height;
  double seconds = 0;
  if (im.empty) {
    out.argb.assign(n, kVolumeMiss);
    out.values.assign(n, NAN);
  } else {
    const cudaError_t done = cudaEventQuery(im.end.get());
    if (done == cudaErrorNotReady) return std::nullopt;
    cuda::check(done, "cudaEventQuery (a volume picture's end)");
    float ms = 0;
    cuda::check(cudaEventElapsedTime(&ms, im.start.get(), im.end.get()), "cudaEventElapsedTime (a picture's time)");
    seconds = static_cast<double>(ms) * 1e-3;
    const auto* argb = im.host.as<std::uint32_t>();
    const auto* values = reinterpret_cast<const float*>(im.host.data() + n * 4);
    out.argb.assign(argb, argb + n);
    out.values.assign(values, values + n);
  }
  im.queued = false;
  return seconds;
}

void AsyncPicture::hold(cuda::StreamRef stream) const {
  const auto& im = *impl_;
  if (!im.queued || im.empty) return;
  cuda::DeviceGuard guard(im.device);
  cuda::check(cudaStreamWaitEvent(stream.get(), im.end.get(), 0), "cudaStreamWaitEvent (a frame after a picture)");
}

}  // namespace cuview
