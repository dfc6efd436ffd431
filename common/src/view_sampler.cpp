#include "cuview/view_sampler.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "cuview/client.hpp"
#include "cuview/error.hpp"
#include "cuview/schema.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include "cuview/cuda/pinned_buffer.hpp"
#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "cuview/cuda/stream.hpp"
#include "copy_staging.hpp"
#endif

namespace cuview {

ViewSampling ViewSampling::of(const ViewRegion& region) {
  ViewSampling s;
  s.rows.resize(static_cast<std::size_t>(region.view_h));
  s.cols.resize(static_cast<std::size_t>(region.view_w));
  for (int py = 0; py < region.view_h; ++py) {
    const int r = s.rows[static_cast<std::size_t>(py)] = region.row_at(py);
    if (r >= 0 && (s.distinct_rows.empty() || s.distinct_rows.back() != r)) s.distinct_rows.push_back(r);
  }
  int lo = region.field_w, hi = -1;
  for (int px = 0; px < region.view_w; ++px) {
    const int c = s.cols[static_cast<std::size_t>(px)] = region.col_at(px);
    if (c >= 0) lo = c < lo ? c : lo, hi = c > hi ? c : hi;
  }
  if (hi >= lo) s.col_lo = lo, s.col_count = hi - lo + 1;
  return s;
}

float shown_value(const std::byte* cell, DType dtype, int components, float* vector) noexcept {
  const std::size_t size = size_of(dtype);
  float first = 0, squares = 0;
  for (int k = 0; k < components; ++k) {
    const auto v = static_cast<float>(load_value(cell + static_cast<std::size_t>(k) * size, dtype));
    if (vector != nullptr) vector[k] = v;
    if (k == 0) first = v;
    squares += v * v;
  }
  return components == 1 ? first : sqrtf(squares);
}

namespace {
/// shown_value in double, from the values as they are: what a readout of a float64 or int64 cell says.
double exact_shown_value(const std::byte* cell, DType dtype, int components) noexcept {
  if (components == 1) return load_value(cell, dtype);
  const std::size_t size = size_of(dtype);
  double squares = 0;
  for (int k = 0; k < components; ++k) {
    const double v = load_value(cell + static_cast<std::size_t>(k) * size, dtype);
    squares += v * v;
  }
  return std::sqrt(squares);
}
}  // namespace

namespace {
/// The samples from the sampled rows: `row_data[py]` points at the first value of cell
/// (col_lo, rows[py]), or is null where the row lies outside the grid; a row's cells lie
/// `col_pitch` bytes apart, each `components` values of `dtype`.
/// `fill`: samples outside the grid become NaN; otherwise they are left as they are (another
/// part of a decomposed grid writes them).
void gather(const std::vector<const std::byte*>& row_data, const ViewSampling& s, SampledView& out,
            std::size_t col_pitch, DType dtype, bool fill) {
  const auto& r = out.region;
  const int components = out.components;
  const bool with_vectors = !out.vectors.empty(), with_exact = !out.exact.empty();
  for (int py = 0; py < r.view_h; ++py) {
    const std::byte* row = row_data[static_cast<std::size_t>(py)];
    for (int px = 0; px < r.view_w; ++px) {
      const auto at = static_cast<std::size_t>(py) * r.view_w + px;
      float* vector = with_vectors ? &out.vectors[at * components] : nullptr;
      const int c = s.cols[static_cast<std::size_t>(px)];
      if (row == nullptr || c < 0) {
        if (!fill) continue;
        out.values[at] = NAN;
        if (with_exact) out.exact[at] = NAN;
        for (int k = 0; vector && k < components; ++k) vector[k] = NAN;
        continue;
      }
      const std::byte* cell = row + static_cast<std::size_t>(c - s.col_lo) * col_pitch;
      out.values[at] = shown_value(cell, dtype, components, vector);
      if (with_exact) out.exact[at] = exact_shown_value(cell, dtype, components);
    }
  }
}

/// The field's rows and cells in bytes: its strides (a plane of a volume is strided, plane_of), or
/// a C-contiguous grid's when it has none.
struct Pitch {
  std::size_t row, col;
};
/// The axes of a field's grid (its shape without the components).
std::size_t grid_rank(const proto::FieldDesc& f) { return f.shape.size() - (f.components > 1 ? 1 : 0); }

Pitch pitch_of(const proto::FieldDesc& field, DType dtype, int field_w) {
  const std::size_t cell = std::size_t{field.components} * size_of(dtype);
  if (field.strides.size() == field.shape.size()) {
    if (grid_rank(field) == 2) return {field.strides[0], field.strides[1]};
    if (grid_rank(field) == 1) return {static_cast<std::size_t>(field_w) * field.strides[0], field.strides[0]};
  }
  return {static_cast<std::size_t>(field_w) * cell, cell};
}

/// The field's dtype, once its description is checked against a field_w × field_h grid.
DType check_field(const proto::FieldDesc& field, int field_w, int field_h) {
  const auto dtype = parse_dtype(field.dtype);
  if (!dtype || field.components < 1)
    throw Error(Errc::bad_value, "field '" + field.name + "' (" + field.dtype + " × " +
                                     std::to_string(field.components) + ") cannot be sampled: a field of " +
                                     dtype_names() + " values, 1 or more a cell, can");
  if (!field.shape.empty() && grid_rank(field) > 2)  // a line is a picture one cell high
    throw Error(Errc::bad_value, "field '" + field.name + "' has a grid of " + std::to_string(grid_rank(field)) +
                                     " axes: a view samples one plane of it (plane_of)");
  const auto p = pitch_of(field, *dtype, field_w);
  const std::uint64_t cell = std::uint64_t{field.components} * size_of(*dtype);
  const std::uint64_t needed =
      field_w > 0 && field_h > 0 ? (field_h - 1) * std::uint64_t{p.row} + (field_w - 1) * std::uint64_t{p.col} + cell : 0;
  if (field.bytes < needed)
    throw Error(Errc::bad_value, "field '" + field.name + "' holds " + std::to_string(field.bytes) +
                                     " bytes, less than the " + std::to_string(needed) + " of a " +
                                     std::to_string(field_w) + "×" + std::to_string(field_h) + " grid");
  return *dtype;
}
}  // namespace

const char* to_string(SliceAxis axis) noexcept {
  return axis == SliceAxis::x ? "x" : axis == SliceAxis::y ? "y" : "z";
}

SliceAxis slice_axis_named(const std::string& name) {
  for (auto axis : {SliceAxis::z, SliceAxis::y, SliceAxis::x})
    if (name == to_string(axis)) return axis;
  throw Error(Errc::bad_value, "axis '" + name + "' is not one of a volume's: x, y or z");
}

std::vector<std::uint32_t> plane_dims(const std::vector<std::uint32_t>& dims, SliceAxis axis) {
  std::vector<std::uint32_t> out;
  for (std::size_t k = 0; k < dims.size(); ++k)
    if (k != static_cast<std::size_t>(axis)) out.push_back(dims[k]);
  return out;
}

proto::FieldDesc plane_of(const proto::FieldDesc& field, const Slice& slice) {
  if (grid_rank(field) != 3 || field.strides.size() != field.shape.size()) return field;
  // Axis k of the shape (0: z, 1: y, 2: x) is cut; the other two stay, slowest first (plane_dims).
  const auto cut = static_cast<std::size_t>(slice.axis);
  if (slice.index >= field.shape[cut])
    throw Error(Errc::out_of_range, std::string(to_string(slice.axis)) + "-plane " + std::to_string(slice.index) +
                                        " of field '" + field.name + "' does not exist: " + to_string(slice.axis) +
                                        " runs from 0 to " + std::to_string(field.shape[cut] - 1));
  proto::FieldDesc p = field;
  const std::uint64_t moved = slice.index * field.strides[cut];
  p.offset += moved;
  p.bytes = field.bytes - moved;
  p.shape.clear();
  p.strides.clear();
  for (std::size_t k = 0; k < field.shape.size(); ++k)
    if (k != cut) p.shape.push_back(field.shape[k]), p.strides.push_back(field.strides[k]);
  return p;
}

std::array<std::uint32_t, 3> cell_of_plane(const Slice& slice, std::uint32_t col, std::uint32_t row) {
  switch (slice.axis) {
    case SliceAxis::z:
      return {col, row, slice.index};
    case SliceAxis::y:
      return {col, slice.index, row};
    case SliceAxis::x:
      break;
  }
  return {slice.index, col, row};
}

PictureLayout PictureLayout::of_grid(std::uint32_t width, std::uint32_t height) {
  return PictureLayout{static_cast<int>(width), static_cast<int>(height), {}, std::nullopt};
}

PictureLayout PictureLayout::of_plane(const std::vector<std::uint32_t>& dims, const Slice& slice) {
  const auto rc = plane_dims(dims, slice.axis);
  const int cols = static_cast<int>(rc.at(1)), rows = static_cast<int>(rc.at(0));
  return PictureLayout{cols, rows, {Panel{slice, 0, 0, cols, rows, false}}, std::nullopt};
}

PictureLayout PictureLayout::of_three_planes(const std::vector<std::uint32_t>& dims,
                                             const std::array<std::uint32_t, 3>& at) {
  if (dims.size() != 3)
    throw Error(Errc::bad_value, "three planes are a volume's: this grid has " + std::to_string(dims.size()) + " axes");
  const int d = static_cast<int>(dims[0]), h = static_cast<int>(dims[1]), w = static_cast<int>(dims[2]);
  for (std::size_t k = 0; k < 3; ++k)
    if (at[k] >= dims[2 - k])
      throw Error(Errc::out_of_range, std::string("the planes through (") + std::to_string(at[0]) + ", " +
                                          std::to_string(at[1]) + ", " + std::to_string(at[2]) + "): " + "xyz"[k] +
                                          " runs from 0 to " + std::to_string(dims[2 - k] - 1));
  const int gap = std::max(1, std::max({w, h, d}) / 40);
  PictureLayout l;
  l.w = w + gap + d, l.h = h + gap + d;
  l.panels = {Panel{{SliceAxis::z, at[2]}, 0, 0, w, h, false},
              Panel{{SliceAxis::x, at[0]}, w + gap, 0, d, h, true},
              Panel{{SliceAxis::y, at[1]}, 0, h + gap, w, d, false}};
  l.through = at;
  return l;
}

const Panel* PictureLayout::panel_at(int col, int row) const {
  for (const auto& p : panels)
    if (col >= p.x && col < p.x + p.cols && row >= p.y && row < p.y + p.rows) return &p;
  return nullptr;
}

std::optional<std::array<std::uint32_t, 3>> PictureLayout::cell_at(int col, int row) const {
  const Panel* p = panel_at(col, row);
  if (p == nullptr) return std::nullopt;
  auto c = static_cast<std::uint32_t>(col - p->x), r = static_cast<std::uint32_t>(row - p->y);
  if (p->transposed) std::swap(c, r);
  return cell_of_plane(p->slice, c, r);
}

#ifdef CUVIEW_HAVE_CUDA
struct ViewSampler::Staging : CopyStaging {
  explicit Staging(int gpu) : CopyStaging(gpu, "the sampled rows of a view") {}
};
#else
struct ViewSampler::Staging {};
#endif

ViewSampler::ViewSampler() = default;
ViewSampler::~ViewSampler() = default;
ViewSampler::ViewSampler(ViewSampler&&) noexcept = default;
ViewSampler& ViewSampler::operator=(ViewSampler&&) noexcept = default;

void ViewSampler::begin(SampledView& out, const ViewRegion& region, int components, VectorComponents vectors,
                        ExactValues exact) {
  out.region = region;
  out.components = components;
  const auto samples = static_cast<std::size_t>(region.view_w) * region.view_h;
  out.values.assign(samples, NAN);
  out.vectors.assign(vectors == VectorComponents::include ? samples * static_cast<std::size_t>(components) : 0, NAN);
  out.exact.assign(exact == ExactValues::include ? samples : 0, NAN);
}

void ViewSampler::sample(const Frame& frame, const proto::FieldDesc& field, const ViewRegion& region,
                         SampledView& out, VectorComponents vectors) {
  const DType dtype = check_field(field, region.field_w, region.field_h);
  out.region = region;
  out.components = static_cast<int>(field.components);
  const auto samples = static_cast<std::size_t>(region.view_w) * region.view_h;
  out.values.resize(samples);
  out.vectors.resize(vectors == VectorComponents::include ? samples * field.components : 0);
  out.exact.clear();
  sample_grid(frame, field, dtype, region.field_w, ViewSampling::of(region), out, true);
}

void ViewSampler::sample_block(const Frame& frame, const proto::FieldDesc& field, const ViewRegion& region,
                               const Block& block, SampledView& out) {
  const DType dtype = check_field(field, block.w, block.h);
  if (out.region.view_w != region.view_w || out.region.view_h != region.view_h ||
      out.components != static_cast<int>(field.components))
    throw Error(Errc::bad_value, "sample_block: call ViewSampler::begin with this region and field first");
  // The whole grid's sampling, computed once for every part, then moved into this block's cells:
  // each output row maps to one global row and so to exactly one part, so no row is lost or drawn
  // twice at a border.
  ViewSampling s = ViewSampling::of(region);
  for (auto& r : s.rows) r = r >= block.y && r < block.y + block.h ? r - block.y : -1;
  std::vector<int> distinct;
  for (int r : s.distinct_rows)
    if (r >= block.y && r < block.y + block.h) distinct.push_back(r - block.y);
  s.distinct_rows = std::move(distinct);
  int lo = block.w, hi = -1;
  for (auto& c : s.cols) {
    c = c >= block.x && c < block.x + block.w ? c - block.x : -1;
    if (c >= 0) lo = c < lo ? c : lo, hi = c > hi ? c : hi;
  }
  s.col_lo = hi >= lo ? lo : 0;
  s.col_count = hi >= lo ? hi - lo + 1 : 0;
  sample_grid(frame, field, dtype, block.w, s, out, false);
}

void ViewSampler::sample_grid(const Frame& frame, const proto::FieldDesc& field, DType dtype, int field_w,
                              const ViewSampling& s, SampledView& out, bool fill) {
  const Pitch p = pitch_of(field, dtype, field_w);  // of the grid the frame holds (a part's block, or the whole grid)
  const std::size_t cell = std::size_t{field.components} * size_of(dtype);
  std::vector<const std::byte*> rows(s.rows.size(), nullptr);
  bytes_copied_ = 0;
  if (frame.device() < 0) {  // shared memory, read in place
    const auto* grid = static_cast<const std::byte*>(frame.slot_data()) + field.offset;
    for (std::size_t py = 0; py < rows.size(); ++py)
      if (s.rows[py] >= 0)
        rows[py] = grid + static_cast<std::size_t>(s.rows[py]) * p.row + static_cast<std::size_t>(s.col_lo) * p.col;
    gather(rows, s, out, p.col, dtype, fill);
    return;
  }
#ifdef CUVIEW_HAVE_CUDA
  const std::size_t span = static_cast<std::size_t>(s.col_count) * cell;  // bytes per sampled row
  if (s.col_count > 0 && !s.distinct_rows.empty()) {
    Staging& staging = staging_for(staging_, frame.device());
    const auto& r = s.distinct_rows;
    std::byte* dst = staging.reserve(r.size() * span);
    const auto* grid = static_cast<const std::byte*>(frame.device_slot()) + field.offset;
    const auto at = [&](int row) { return grid + static_cast<std::size_t>(row) * p.row + s.col_lo * p.col; };
    const std::string what = " of field '" + field.name + "' of frame " + std::to_string(frame.info().seq);
    frame.wait();  // on the host: the frame is complete, and the GPU never switches to us for it
    cuda::DeviceGuard guard(staging.device);
    if (p.col == cell) {
      // Contiguous rows: the distinct rows as runs of equal spacing, one strided 2D copy per run
      // (a zoomed-in view is one run of consecutive rows; a zoomed-out one, runs of every k-th row).
      for (std::size_t i = 0; i < r.size();) {
        std::size_t n = 1;
        const int stride = i + 1 < r.size() ? r[i + 1] - r[i] : 1;
        while (i + n < r.size() && r[i + n] - r[i + n - 1] == stride) ++n;
        cuda::check(cudaMemcpy2DAsync(dst + i * span, span, at(r[i]), p.row * static_cast<std::size_t>(stride), span, n,
                                      cudaMemcpyDeviceToHost, staging.stream.get()),
                    "copying " + std::to_string(n) + " rows" + what);
        i += n;
      }
    } else {
      // Cells apart in memory (a plane across the fastest axis): each row's cells gathered by one
      // strided 2D copy, a cell per line.
      for (std::size_t i = 0; i < r.size(); ++i)
        cuda::check(cudaMemcpy2DAsync(dst + i * span, cell, at(r[i]), p.col, cell, static_cast<std::size_t>(s.col_count),
                                      cudaMemcpyDeviceToHost, staging.stream.get()),
                    "copying the cells of row " + std::to_string(r[i]) + what);
    }
    cuda::check(cudaStreamSynchronize(staging.stream.get()), "waiting for the sampled rows" + what);
    bytes_copied_ = r.size() * span;
    for (std::size_t py = 0, k = 0; py < s.rows.size(); ++py) {
      if (s.rows[py] < 0) continue;
      while (r[k] != s.rows[py]) ++k;
      rows[py] = dst + k * span;
    }
  }
  gather(rows, s, out, cell, dtype, fill);
#else
  throw Error(Errc::cuda, "frame " + std::to_string(frame.info().seq) +
                              " is in GPU memory, but this program was built without CUDA");
#endif
}

ViewSampler::Block ViewSampler::samples_of(const ViewRegion& region, const Block& block) {
  auto span = [](int n, int lo, int hi, auto cell_at) {
    int first = -1, last = -2;
    for (int p = 0; p < n; ++p) {
      const int c = cell_at(p);
      if (c < lo || c >= hi) continue;
      if (first < 0) first = p;
      last = p;
    }
    return std::pair{first < 0 ? 0 : first, last - first + 1 > 0 ? last - first + 1 : 0};
  };
  const auto [x, w] = span(region.view_w, block.x, block.x + block.w, [&](int p) { return region.col_at(p); });
  const auto [y, h] = span(region.view_h, block.y, block.y + block.h, [&](int p) { return region.row_at(p); });
  if (w == 0 || h == 0) return Block{};
  return Block{x, y, w, h};
}

}  // namespace cuview
