// A view of a frame as plain values: which cells an output of W × H samples of a grid shows (zoom
// and pan, nearest cell), and their values. The viewer colours them; a remote gateway would send
// them as they are. The sampling is separable — a sample's cell row depends only on its output row,
// its column only on its output column — so a view needs only its sampled rows of its visible
// columns, and that is all that ever leaves the GPU: a CUDA frame is waited for on the host
// (Frame::wait), then the copy engine brings those rows into pinned host memory. No kernel runs in
// this process's CUDA context and no stream of it waits on the publisher's event: either would make
// the GPU switch contexts under the simulation (docs/benchmarks.md, "Viewers that cost nothing").
//
// The header includes no client or CUDA header, so that device code can use ViewRegion.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "cuview/host_device.hpp"

namespace cuview {

class Frame;
enum class DType : std::uint8_t;
namespace proto {
struct FieldDesc;
}

/// The part of a grid an output shows: the cell at the output's centre and the cells-to-samples
/// scale.
struct ViewRegion {
  int field_w = 0, field_h = 0;  ///< the grid, cells
  int view_w = 0, view_h = 0;    ///< the output, samples (a viewer's pixels)
  double center_x = 0, center_y = 0;
  double pixels_per_cell = 1;

  /// The whole grid fitted in the output, times `zoom`, centred on cell (cx, cy).
  static ViewRegion fit(int fw, int fh, int vw, int vh, double zoom, double cx, double cy) {
    ViewRegion r;
    r.field_w = fw, r.field_h = fh, r.view_w = vw, r.view_h = vh;
    r.center_x = cx, r.center_y = cy;
    const double sx = static_cast<double>(vw) / fw, sy = static_cast<double>(vh) / fh;
    r.pixels_per_cell = (sx < sy ? sx : sy) * zoom;
    return r;
  }
  /// The cell column under output column `px`; -1 outside the grid.
  CUVIEW_HD int col_at(int px) const {
    const double fx = center_x + (px + 0.5 - view_w * 0.5) / pixels_per_cell;
    return fx < 0 || fx >= field_w ? -1 : static_cast<int>(fx);
  }
  /// The cell row under output row `py`; -1 outside the grid.
  CUVIEW_HD int row_at(int py) const {
    const double fy = center_y + (py + 0.5 - view_h * 0.5) / pixels_per_cell;
    return fy < 0 || fy >= field_h ? -1 : static_cast<int>(fy);
  }
  /// The cell under output sample (px, py); false when it lies outside the grid.
  CUVIEW_HD bool cell_at(int px, int py, int& cx, int& cy) const {
    cx = col_at(px);
    cy = row_at(py);
    return cx >= 0 && cy >= 0;
  }
};

/// Which plane of a volume a view shows: the axis across it and its index along that axis. The
/// values are the axis's place in a volume's dims and shape ({depth, height, width}: z 0, y 1, x 2).
enum class SliceAxis : std::uint8_t { z, y, x };
struct Slice {
  SliceAxis axis = SliceAxis::z;
  std::uint32_t index = 0;
  CUVIEW_HD bool operator==(const Slice& o) const { return axis == o.axis && index == o.index; }
};
/// "x", "y" or "z".
[[nodiscard]] const char* to_string(SliceAxis axis) noexcept;
/// The axis named "x", "y" or "z"; throws Error(bad_value) naming `name` and the three.
[[nodiscard]] SliceAxis slice_axis_named(const std::string& name);

/// The grid of a plane across `axis` of a volume of `dims` ({depth, height, width}): {rows, cols},
/// the volume's dims without the axis cut (a z-plane {height, width}, a y-plane {depth, width}, an
/// x-plane {depth, height}).
[[nodiscard]] std::vector<std::uint32_t> plane_dims(const std::vector<std::uint32_t>& dims, SliceAxis axis);

/// Plane `slice` of a field of a 3-D grid (shape {d, h, w} or {d, h, w, components}) as a 2-D
/// field the sampler reads in place: its offset moved to the plane, shape {rows, cols[,
/// components]} and strides in bytes. Rows and columns: of a z-plane y and x, of a y-plane z and x,
/// of an x-plane z and y. A field of a 2-D grid comes back as it is. Throws Error(out_of_range) for
/// an index past the axis, naming it.
[[nodiscard]] proto::FieldDesc plane_of(const proto::FieldDesc& field, const Slice& slice);
/// The grid cell {x, y, z} that cell (col, row) of plane `slice` is.
[[nodiscard]] std::array<std::uint32_t, 3> cell_of_plane(const Slice& slice, std::uint32_t col, std::uint32_t row);

/// One plane of a volume in a picture: the plane (in the volume's indices), where its cell (0, 0)
/// goes in the picture's grid, its size there, and whether its rows and columns are swapped from
/// plane_dims' order.
struct Panel {
  Slice slice;
  int x = 0, y = 0;
  int cols = 0, rows = 0;
  bool transposed = false;  ///< an x-plane beside a z-plane: z across, y down (the rows they share)
  bool operator==(const Panel& o) const {  // not defaulted: CUDA code includes this header as C++17
    return slice == o.slice && x == o.x && y == o.y && cols == o.cols && rows == o.rows && transposed == o.transposed;
  }
};

/// What a picture of a grid shows, in its own grid of w × h cells: a 2-D grid as it is (no
/// panels); one plane of a volume (one panel, rows and columns as plane_dims orders them); or three
/// orthogonal planes through one cell side by side: the z-plane top left (x across, y down), the
/// x-plane right of it (z across, y down: the rows they share), the y-plane below it (x across, z
/// down: the columns they share), a few cells apart, the fourth corner empty. A view's region is
/// in the picture's cells (docs/remote.md "Volumes").
struct PictureLayout {
  int w = 0, h = 0;
  std::vector<Panel> panels;
  std::optional<std::array<std::uint32_t, 3>> through;  ///< three planes: the cell {x, y, z} they pass through

  /// A 2-D grid of `width` × `height` cells.
  [[nodiscard]] static PictureLayout of_grid(std::uint32_t width, std::uint32_t height);
  /// Plane `slice` of a volume of `dims` ({depth, height, width}).
  [[nodiscard]] static PictureLayout of_plane(const std::vector<std::uint32_t>& dims, const Slice& slice);
  /// The planes across z, x and y through cell `at` ({x, y, z}) of a volume of `dims`. Throws
  /// Error(out_of_range) naming a coordinate past its axis.
  [[nodiscard]] static PictureLayout of_three_planes(const std::vector<std::uint32_t>& dims,
                                                     const std::array<std::uint32_t, 3>& at);
  /// The panel holding picture cell (col, row), or nullptr (between panels, or a 2-D grid's).
  [[nodiscard]] const Panel* panel_at(int col, int row) const;
  /// The volume's cell {x, y, z} at picture cell (col, row); empty where panel_at is nullptr.
  [[nodiscard]] std::optional<std::array<std::uint32_t, 3>> cell_at(int col, int row) const;
  bool operator==(const PictureLayout& o) const {
    return w == o.w && h == o.h && panels == o.panels && through == o.through;
  }
};

/// The value a cell shows: the scalar itself, or the magnitude of a vector of `components`.
CUVIEW_HD inline float shown_value(const float* cell, int components) {
  if (components == 1) return cell[0];
  float s = 0;
  for (int k = 0; k < components; ++k) s += cell[k] * cell[k];
  return sqrtf(s);
}

/// The value a cell of any dtype shows (host memory, any alignment): its `components` values of
/// `dtype` converted to float (load_value), then as shown_value(const float*) shows them, so a
/// float32 cell shows the same float either way. With `vector`, the converted components are
/// written there too.
float shown_value(const std::byte* cell, DType dtype, int components, float* vector = nullptr) noexcept;

/// The cells a region samples: per output row its cell row, per output column its cell column
/// (-1 outside the grid), the distinct rows in order, and the span of visible columns.
struct ViewSampling {
  std::vector<int> rows, cols;
  std::vector<int> distinct_rows;  ///< increasing
  int col_lo = 0, col_count = 0;   ///< visible columns [col_lo, col_lo + col_count)
  static ViewSampling of(const ViewRegion& region);
};

/// Whether a sample also carries the cell's vector components.
enum class VectorComponents { omit, include };
/// Whether a sample also carries its value as a double, before the rounding to float: what a
/// float64 or int64 cell holds, for a readout.
enum class ExactValues { omit, include };

/// One field of one frame sampled over a region: plain values, row-major, one per output sample.
struct SampledView {
  ViewRegion region;
  int components = 1;          ///< values per cell of the field
  std::vector<float> values;   ///< view_w × view_h: the cell's value (a vector's magnitude); NaN outside the grid
  std::vector<float> vectors;  ///< with VectorComponents::include: `components` per sample, NaN outside the grid
  std::vector<double> exact;   ///< with ExactValues::include (begin()): as `values`, in double
};

/// Samples views of frames. Keeps its pinned host rows and copy stream (CUDA), one of each per GPU
/// its frames came from, from one call to the next, so that a viewer allocates them once (a run of
/// parts on several GPUs too). Every CUDA call runs under a cuda::DeviceGuard of the
/// frame's GPU: the calling thread's current device is never set. Move-only; one thread at a time.
class ViewSampler {
 public:
  ViewSampler();
  ~ViewSampler();
  ViewSampler(ViewSampler&&) noexcept;
  ViewSampler& operator=(ViewSampler&&) noexcept;
  ViewSampler(const ViewSampler&) = delete;
  ViewSampler& operator=(const ViewSampler&) = delete;

  /// Samples `field` of `frame` (any dtype, field.components per cell, a region.field_w ×
  /// region.field_h grid) over `region` into `out` (values converted to float), whose buffers are reused: a viewer that keeps
  /// its SampledView allocates nothing per frame. Host frames are read in place from shared memory; CUDA
  /// frames are waited for on the host, then only the sampled rows of the visible columns are
  /// copied. Throws Error(bad_value) naming a field of no known dtype or smaller than the grid,
  /// Error(cuda) naming the failing copy.
  void sample(const Frame& frame, const proto::FieldDesc& field, const ViewRegion& region, SampledView& out,
              VectorComponents vectors = VectorComponents::omit);
  /// A part's cells in the whole grid of a decomposed publisher (its PartDesc offsets and size).
  struct Block {
    int x = 0, y = 0, w = 0, h = 0;
  };
  /// The output samples whose cells lie in `block`: columns [x, x+w), rows [y, y+h) of the view
  /// (w or h is 0 when the block is out of view). The sampling is monotone along each axis, so
  /// they form one rectangle: what a gateway sends of a part's view (remote::ViewRect).
  static Block samples_of(const ViewRegion& region, const Block& block);
  /// Sizes `out` for `region` (of the whole grid) and fills it with NaN: the start of a picture
  /// made of parts with sample_block().
  static void begin(SampledView& out, const ViewRegion& region, int components,
                    VectorComponents vectors = VectorComponents::omit, ExactValues exact = ExactValues::omit);
  /// Samples one part of a decomposed grid into `out`, a view of the whole grid (`region`'s
  /// field_w × field_h are the global grid's): only samples whose cells lie in `block` are
  /// written, from `frame`, which holds the block (block.w × block.h cells). The whole grid's
  /// sampling is the same for every part, so the parts meet without a seam. Call begin() first.
  void sample_block(const Frame& frame, const proto::FieldDesc& field, const ViewRegion& region, const Block& block,
                    SampledView& out);
  /// Bytes the last sample of a CUDA frame copied to the host (0 for a host frame).
  [[nodiscard]] std::size_t bytes_copied() const noexcept { return bytes_copied_; }

 private:
  void sample_grid(const Frame& frame, const proto::FieldDesc& field, DType dtype, int field_w, const ViewSampling& s,
                   SampledView& out, bool fill);
  struct Staging;  // pinned rows and a copy stream on one GPU
  /// One per GPU the frames came from (a run of parts may span several), kept from call to call.
  std::vector<std::unique_ptr<Staging>> staging_;
  std::size_t bytes_copied_ = 0;
};

}  // namespace cuview
