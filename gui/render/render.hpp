// The viewer's colouring: a sampled value's colour under a colormap and a range. Which cell each
// pixel shows, and its value, is the client library's (cuview/view_sampler.hpp); nothing here
// needs Qt or a CUDA compiler, and render_pixel also compiles for the GPU (cuview-bench's kernel).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "cuview/host_device.hpp"
#include "cuview/view_sampler.hpp"

namespace cuview::gui {

/// Where the window looks (the region of the grid its pixels sample) and how values are coloured.
struct ViewTransform : ViewRegion {
  float lo = 0, hi = 1;  ///< value range mapped onto the colormap
  int components = 1;    ///< values per cell: 1 (a scalar), 2 to 4 (a vector, shown as its magnitude)

  /// Fits the whole field in the view, times `zoom`, centred on (cx, cy) (cells).
  static ViewTransform fit(int fw, int fh, int vw, int vh, double zoom, double cx, double cy) {
    ViewTransform t;
    static_cast<ViewRegion&>(t) = ViewRegion::fit(fw, fh, vw, vh, zoom, cx, cy);
    return t;
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

/// Colour and value of one pixel read straight from a whole field. Outside the field: background
/// and NaN. The reference the sampled picture is tested against (and what a kernel would run).
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

/// Colours `count` sampled values into `rgba`: NaN (nothing there) as the background.
void colour_values(const float* values, std::size_t count, const std::uint32_t* lut, float lo, float hi,
                   std::uint32_t* rgba);

}  // namespace cuview::gui
