// The viewer's render step: which cell each pixel shows (zoom, pan: nearest cell) and its colour.
// The sampling is separable — a pixel's cell row depends only on its pixel row, its column only on
// its pixel column — so a view needs only the cells of its sampled rows and visible columns, which
// is all that ever leaves the GPU (docs/architecture.md, "The viewer").
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "cuview/hd.hpp"

namespace cuview::gui {

/// Where the window looks: the field cell at the view's centre and the cells-to-pixels scale.
struct ViewTransform {
  int field_w = 0, field_h = 0;  ///< cells
  int view_w = 0, view_h = 0;    ///< pixels
  double center_x = 0, center_y = 0;
  double pixels_per_cell = 1;
  float lo = 0, hi = 1;  ///< value range mapped onto the colormap
  int components = 1;    ///< values per cell: 1 (a scalar), 2 or 3 (a vector, shown as its magnitude)

  /// Fits the whole field in the view, times `zoom`, centred on (cx, cy) (cells).
  static ViewTransform fit(int fw, int fh, int vw, int vh, double zoom, double cx, double cy) {
    ViewTransform t;
    t.field_w = fw, t.field_h = fh, t.view_w = vw, t.view_h = vh;
    t.center_x = cx, t.center_y = cy;
    const double sx = static_cast<double>(vw) / fw, sy = static_cast<double>(vh) / fh;
    t.pixels_per_cell = (sx < sy ? sx : sy) * zoom;
    return t;
  }
  /// The cell column under pixel column `px`; -1 outside the field.
  CUVIEW_HD int col_at(int px) const {
    const double fx = center_x + (px + 0.5 - view_w * 0.5) / pixels_per_cell;
    return fx < 0 || fx >= field_w ? -1 : static_cast<int>(fx);
  }
  /// The cell row under pixel row `py`; -1 outside the field.
  CUVIEW_HD int row_at(int py) const {
    const double fy = center_y + (py + 0.5 - view_h * 0.5) / pixels_per_cell;
    return fy < 0 || fy >= field_h ? -1 : static_cast<int>(fy);
  }
  /// The cell under pixel (px, py); false when it lies outside the field.
  CUVIEW_HD bool cell_at(int px, int py, int& cx, int& cy) const {
    cx = col_at(px);
    cy = row_at(py);
    return cx >= 0 && cy >= 0;
  }
};

inline constexpr std::uint32_t kBackground = 0xff202020u;

/// The colour (0xAARRGGBB) of value `v`: mapped linearly from [lo, hi] onto the 256-entry `lut`.
CUVIEW_HD inline std::uint32_t colour_of(float v, const std::uint32_t* lut, float lo, float hi) {
  const float span = hi > lo ? hi - lo : 1.0f;
  float u = (v - lo) / span;
  u = u < 0 ? 0 : (u > 1 ? 1 : u);
  return lut[static_cast<int>(u * 255.0f + 0.5f)];
}

/// The value a cell shows: the scalar itself, or the magnitude of a vector of `components`.
CUVIEW_HD inline float shown_value(const float* cell, int components) {
  if (components == 1) return cell[0];
  float s = 0;
  for (int k = 0; k < components; ++k) s += cell[k] * cell[k];
  return sqrtf(s);
}

/// Colour and value of one pixel read straight from a whole field. Outside the field: background
/// and NaN. The reference the row renderer is tested against (and what a kernel would run).
CUVIEW_HD inline void render_pixel(const float* field, const std::uint32_t* lut, const ViewTransform& t, int px, int py,
                                   std::uint32_t& rgba, float& value) {
  int cx = 0, cy = 0;
  if (!t.cell_at(px, py, cx, cy)) {
    rgba = kBackground;
    value = NAN;
    return;
  }
  value = shown_value(field + (static_cast<std::size_t>(cy) * t.field_w + cx) * t.components, t.components);
  rgba = colour_of(value, lut, t.lo, t.hi);
}

/// The cells a view samples: per pixel row its cell row, per pixel column its cell column (-1
/// outside the field), the distinct rows in order, and the span of visible columns.
struct ViewSampling {
  std::vector<int> rows, cols;
  std::vector<int> distinct_rows;  ///< increasing
  int col_lo = 0, col_count = 0;   ///< visible columns [col_lo, col_lo + col_count)
  static ViewSampling of(const ViewTransform& t);
};

/// Fills `rgba` and `values` (view_w × view_h each) from the sampled rows: `row_data[py]` points at
/// the first value of cell (col_lo, rows[py]), or is null where the row lies outside the field.
/// With `vectors` (2 floats per pixel) it also writes each pixel's first two components (vector
/// fields; NaN outside the field).
void render_rows(const std::vector<const float*>& row_data, const ViewSampling& s, const ViewTransform& t,
                 const std::uint32_t* lut, std::uint32_t* rgba, float* values, float* vectors = nullptr);

/// A field in this process's memory (host backend: shared memory, read in place).
void render_cpu(const float* field, const std::uint32_t* lut, const ViewTransform& t, std::uint32_t* rgba,
                float* values, float* vectors = nullptr);

}  // namespace cuview::gui
