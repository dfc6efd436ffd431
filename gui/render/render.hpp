// The viewer's render step: resample a field to the window's pixels (zoom, pan) and colour it.
// render_pixel is the only copy of that math; the CPU loop and the CUDA kernel both call it,
// so only screen-sized pixels ever cross from the GPU to the host.
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

  /// Fits the whole field in the view, times `zoom`, centred on (cx, cy) (cells).
  static ViewTransform fit(int fw, int fh, int vw, int vh, double zoom, double cx, double cy) {
    ViewTransform t;
    t.field_w = fw, t.field_h = fh, t.view_w = vw, t.view_h = vh;
    t.center_x = cx, t.center_y = cy;
    const double sx = static_cast<double>(vw) / fw, sy = static_cast<double>(vh) / fh;
    t.pixels_per_cell = (sx < sy ? sx : sy) * zoom;
    return t;
  }
  /// The cell under pixel (px, py); false when it lies outside the field.
  CUVIEW_HD bool cell_at(int px, int py, int& cx, int& cy) const {
    const double fx = center_x + (px + 0.5 - view_w * 0.5) / pixels_per_cell;
    const double fy = center_y + (py + 0.5 - view_h * 0.5) / pixels_per_cell;
    if (fx < 0 || fy < 0 || fx >= field_w || fy >= field_h) return false;
    cx = static_cast<int>(fx);
    cy = static_cast<int>(fy);
    return true;
  }
};

inline constexpr std::uint32_t kBackground = 0xff202020u;

/// Colour (0xAARRGGBB) and value of one pixel: nearest cell, value mapped linearly from
/// [lo, hi] onto the 256-entry `lut`. Outside the field: background and NaN.
CUVIEW_HD inline void render_pixel(const float* field, const std::uint32_t* lut, const ViewTransform& t, int px,
                                   int py, std::uint32_t& rgba, float& value) {
  int cx = 0, cy = 0;
  if (!t.cell_at(px, py, cx, cy)) {
    rgba = kBackground;
    value = NAN;
    return;
  }
  const float v = field[static_cast<std::size_t>(cy) * t.field_w + cx];
  const float span = t.hi > t.lo ? t.hi - t.lo : 1.0f;
  float u = (v - t.lo) / span;
  u = u < 0 ? 0 : (u > 1 ? 1 : u);
  int i = static_cast<int>(u * 255.0f + 0.5f);
  rgba = lut[i];
  value = v;
}

/// CPU path: fills `rgba` and `values` (view_w × view_h each).
void render_cpu(const float* field, const std::uint32_t* lut, const ViewTransform& t, std::uint32_t* rgba,
                float* values);

}  // namespace cuview::gui
