#include "cuview/brick_sampler.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "cuview/client.hpp"
#include "cuview/error.hpp"
#include "cuview/schema.hpp"
#include "cuview/view_sampler.hpp"  // shown_value
#ifdef CUVIEW_HAVE_CUDA
#include "copy_staging.hpp"
#include "cuview/cuda/check.hpp"
#endif

namespace cuview {

#ifdef CUVIEW_HAVE_CUDA
struct BrickSampler::Staging : CopyStaging {
  explicit Staging(int gpu) : CopyStaging(gpu, "the rows of a volume's brick") {}
};
#else
struct BrickSampler::Staging {};
#endif

BrickSampler::BrickSampler() = default;
BrickSampler::~BrickSampler() = default;
BrickSampler::BrickSampler(BrickSampler&&) noexcept = default;
BrickSampler& BrickSampler::operator=(BrickSampler&&) noexcept = default;

int BrickSampler::stride_for(const std::array<std::uint32_t, 3>& grid, int max_cells) {
  const auto longest = static_cast<long>(*std::max_element(grid.begin(), grid.end()));
  const long m = std::max(max_cells, 1);
  return static_cast<int>(std::max(1L, (longest + m - 1) / m));
}

void BrickSampler::begin(HostBrick& out, const std::array<std::uint32_t, 3>& grid, int stride) {
  out.stride = std::max(stride, 1);
  out.grid = grid;
  const auto cells = [&](std::uint32_t n) { return static_cast<int>((n + out.stride - 1) / out.stride); };
  out.depth = cells(grid[0]), out.height = cells(grid[1]), out.width = cells(grid[2]);
  out.values.assign(static_cast<std::size_t>(out.width) * out.height * out.depth, std::numeric_limits<float>::quiet_NaN());
  out.lo = out.hi = 0;
}

void BrickSampler::finish(HostBrick& out) {
  // Lanes of running minima and maxima, without a branch (a NaN compares false, so it is passed
  // over): the compiler keeps them in vector registers. 2M cells: ~1 ms, not ~5.
  constexpr std::size_t lanes = 16;
  std::array<float, lanes> low, high;
  low.fill(INFINITY), high.fill(-INFINITY);
  const float* v = out.values.data();
  const std::size_t n = out.values.size(), whole = n - n % lanes;
  for (std::size_t i = 0; i < whole; i += lanes)
    for (std::size_t l = 0; l < lanes; ++l) {
      low[l] = v[i + l] < low[l] ? v[i + l] : low[l];
      high[l] = v[i + l] > high[l] ? v[i + l] : high[l];
    }
  for (std::size_t i = whole; i < n; ++i) {
    low[0] = v[i] < low[0] ? v[i] : low[0];
    high[0] = v[i] > high[0] ? v[i] : high[0];
  }
  float lo = *std::min_element(low.begin(), low.end()), hi = *std::max_element(high.begin(), high.end());
  if (lo > hi) lo = hi = 0;
  out.lo = lo, out.hi = hi;
}

namespace {
/// The brick's cells along one axis of a block at `offset` of `size` cells: the first local index
/// whose global index is a multiple of `stride`, and how many.
struct Taken {
  std::uint32_t first = 0, count = 0, first_brick = 0;
};
Taken taken(std::uint32_t offset, std::uint32_t size, int stride) {
  const auto s = static_cast<std::uint32_t>(stride);
  const std::uint32_t first = (s - offset % s) % s;
  if (first >= size) return {};
  return {first, (size - first + s - 1) / s, (offset + first) / s};
}
}  // namespace

void BrickSampler::sample(const Frame& frame, const proto::FieldDesc& field, const Block& block, HostBrick& out) {
  const auto e = static_cast<int>(frame.every());
  if (e <= 1) return sample_cells(frame, field, block, out.stride, out);
  // A frame the publisher wrote for volume viewers: every e-th cell, packed. The brick's cells are
  // every (s/e)-th of those.
  const bool whole = block.offset.size() == 3 && std::all_of(block.offset.begin(), block.offset.end(),
                                                               [](std::uint32_t o) { return o == 0; });
  if (out.stride % e != 0 || !whole)
    throw Error(Errc::bad_value, "frame " + std::to_string(frame.info().seq) + " holds every " + std::to_string(e) +
                                     "th cell of field '" + field.name + "', and a brick of every " +
                                     std::to_string(out.stride) + "th cell" + (whole ? "" : " of a part") +
                                     " cannot be taken from it: read every " + std::to_string(out.stride) +
                                     "th cell (Client::read_every) or whole frames");
  Block packed = block;
  for (auto& n : packed.dims) n = (n + e - 1) / e;
  sample_cells(frame, proto::packed_field(field, static_cast<std::uint32_t>(e)), packed, out.stride / e, out);
}

void BrickSampler::sample_cells(const Frame& frame, const proto::FieldDesc& field, const Block& block, int s,
                                HostBrick& out) {
  const std::size_t comps = field.components;
  const std::size_t grid_axes = field.shape.size() - (comps > 1 ? 1 : 0);
  const auto dtype = parse_dtype(field.dtype);
  if (!dtype || comps < 1 || grid_axes != 3 || block.dims.size() != 3 || block.offset.size() != 3)
    throw Error(Errc::bad_value, "field '" + field.name + "' (" + field.dtype + ", " + std::to_string(grid_axes) +
                                     " axes) cannot be seen as a volume: only fields of 3 axes (of " + dtype_names() +
                                     " values) can; pick one");
  for (std::size_t a = 0; a < 3; ++a)
    if (field.shape[a] < block.dims[a])
      throw Error(Errc::bad_value, "field '" + field.name + "' is smaller than the block of the grid it should hold");
  const std::size_t cell = comps * size_of(*dtype);
  const std::size_t col = field.strides.size() >= 3 ? field.strides[2] : cell;
  const std::size_t row = field.strides.size() >= 3 ? field.strides[1] : field.shape[2] * cell;
  const std::size_t plane = field.strides.size() >= 3 ? field.strides[0] : field.shape[1] * row;
  bytes_copied_ = 0;
  const Taken tz = taken(block.offset[0], block.dims[0], s), ty = taken(block.offset[1], block.dims[1], s),
              tx = taken(block.offset[2], block.dims[2], s);
  if (tz.count == 0 || ty.count == 0 || tx.count == 0) return;
  const auto brick_at = [&](std::uint32_t k, std::uint32_t j, std::uint32_t i) {
    return &out.values[((static_cast<std::size_t>(tz.first_brick + k) * out.height) + ty.first_brick + j) * out.width +
                       tx.first_brick + i];
  };
  if (frame.device() < 0) {  // shared memory, read in place
    const auto* grid = static_cast<const std::byte*>(frame.slot_data()) + field.offset;
    for (std::uint32_t k = 0; k < tz.count; ++k)
      for (std::uint32_t j = 0; j < ty.count; ++j) {
        const std::byte* r = grid + (tz.first + k * s) * plane + (ty.first + j * s) * row + tx.first * col;
        float* dst = brick_at(k, j, 0);
        for (std::uint32_t i = 0; i < tx.count; ++i)
          dst[i] = shown_value(r + i * s * col, *dtype, static_cast<int>(comps));
      }
    return;
  }
#ifdef CUVIEW_HAVE_CUDA
  Staging& staging = staging_for(staging_, frame.device());
  // Whole rows when cells are contiguous (the copy engine's fast case; the host keeps every s-th
  // cell); otherwise each row's taken cells, a cell per line of a 2D copy.
  const bool whole_rows = col == cell;
  const std::size_t span = whole_rows ? (tx.first + (tx.count - 1) * s + 1) * cell : tx.count * cell;
  std::byte* dst = staging.reserve(std::size_t{tz.count} * ty.count * span);
  const auto* grid = static_cast<const std::byte*>(frame.device_slot()) + field.offset;
  const std::string what = " of field '" + field.name + "' of frame " + std::to_string(frame.info().seq);
  frame.wait();  // on the host: the frame is complete, and the GPU never switches to us for it
  cuda::DeviceGuard guard(staging.device);
  // Every cell of whole planes (a frame of the brick's cells only, packed): one copy.
  const bool contiguous = whole_rows && s == 1 && tx.first == 0 && ty.first == 0 && span == row &&
                          std::size_t{ty.count} * row == plane;
  if (contiguous)
    cuda::check(cudaMemcpyAsync(dst, grid + tz.first * plane, std::size_t{tz.count} * plane, cudaMemcpyDeviceToHost,
                                staging.stream.get()),
                "copying the brick's planes" + what);
  for (std::uint32_t k = 0; k < tz.count && !contiguous; ++k) {
    const std::byte* src = grid + (tz.first + k * s) * plane + ty.first * row;
    std::byte* d = dst + std::size_t{k} * ty.count * span;
    if (whole_rows) {
      cuda::check(cudaMemcpy2DAsync(d, span, src, row * s, span, ty.count, cudaMemcpyDeviceToHost, staging.stream.get()),
                  "copying the brick's rows of plane " + std::to_string(tz.first + k * s) + what);
    } else {
      for (std::uint32_t j = 0; j < ty.count; ++j)
        cuda::check(cudaMemcpy2DAsync(d + j * span, cell, src + j * s * row + tx.first * col, col * s, cell, tx.count,
                                      cudaMemcpyDeviceToHost, staging.stream.get()),
                    "copying the brick's cells of a row" + what);
    }
  }
  cuda::check(cudaStreamSynchronize(staging.stream.get()), "waiting for the brick's rows" + what);
  bytes_copied_ = std::size_t{tz.count} * ty.count * span;
  const std::size_t pick = whole_rows ? s * cell : cell, start = whole_rows ? tx.first * cell : 0;
  for (std::uint32_t k = 0; k < tz.count; ++k)
    for (std::uint32_t j = 0; j < ty.count; ++j) {
      const std::byte* r = dst + (std::size_t{k} * ty.count + j) * span + start;
      float* o = brick_at(k, j, 0);
      if (*dtype == DType::float32 && comps == 1 && pick == cell) {  // the row's floats as they are
        std::memcpy(o, r, tx.count * cell);
        continue;
      }
      for (std::uint32_t i = 0; i < tx.count; ++i)
        o[i] = shown_value(r + i * pick, *dtype, static_cast<int>(comps));
    }
#else
  throw Error(Errc::cuda, "frame " + std::to_string(frame.info().seq) +
                              " is in GPU memory, but this program was built without CUDA");
#endif
}

}  // namespace cuview
