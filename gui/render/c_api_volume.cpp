// cuview_render_volume (cuview/client.h): the volume renderer through the C API, for Python's
// Frame.view_volume and other languages. Compiled into libcuview.so (gui/CMakeLists.txt).
#include <algorithm>
#include <cstring>
#include <string>

#include "c_api/status.hpp"
#include "cuview/client.h"
#include "render/volume_render.hpp"

using namespace cuview::capi;

extern "C" cuview_status cuview_render_volume(const float* data, uint32_t width, uint32_t height, uint32_t depth,
                                              const char* mode, double azimuth, double elevation, double zoom,
                                              double pan_x, double pan_y, const char* colormap, float lo, float hi,
                                              const char* opacity, float level, uint32_t view_w, uint32_t view_h,
                                              uint32_t* argb, float* values) {
  if (data == nullptr || mode == nullptr || argb == nullptr) return null_argument("cuview_render_volume");
  return guarded([&] {
    using cuview::Errc;
    using cuview::Error;
    using namespace cuview::gui;
    const std::string m = mode;
    const VolumeMode vm = m == "mip"          ? VolumeMode::mip
                          : m == "emission"   ? VolumeMode::emission
                          : m == "isosurface" ? VolumeMode::isosurface
                                              : throw Error(Errc::bad_value, "cuview_render_volume: mode '" + m +
                                                                                 "' is none of mip, emission, isosurface");
    if (width == 0 || height == 0 || depth == 0 || view_w == 0 || view_h == 0 || view_w > 16384 || view_h > 16384)
      throw Error(Errc::out_of_range, "cuview_render_volume: a brick of " + std::to_string(width) + "x" +
                                          std::to_string(height) + "x" + std::to_string(depth) + " into " +
                                          std::to_string(view_w) + "x" + std::to_string(view_h) +
                                          " pixels; give every size from 1 (a picture of at most 16384 a side)");
    const std::string cm = colormap != nullptr && *colormap != '\0' ? colormap : "viridis";
    const auto map = parse_colormap(cm);
    if (!map)
      throw Error(Errc::bad_value, "cuview_render_volume: colormap '" + cm +
                                       "' is none of viridis, magma, grayscale, diverging");
    const std::string op = opacity != nullptr && *opacity != '\0' ? opacity : "ramp";
    if (op != "ramp" && op != "peak" && op != "flat")
      throw Error(Errc::bad_value, "cuview_render_volume: opacity preset '" + op + "' is none of ramp, peak, flat");
    VolumeStyle style;
    style.lut = make_lut(*map);
    style.lo = lo;
    style.hi = hi;
    style.level = level;
    style.opacity = opacity_preset(op.c_str(), static_cast<int>(std::max({width, height, depth})));
    const VolumeCamera camera{azimuth, elevation, zoom, pan_x, pan_y};
    const auto img = render_volume({data, static_cast<int>(width), static_cast<int>(height), static_cast<int>(depth)},
                                   camera, vm, style, static_cast<int>(view_w), static_cast<int>(view_h));
    std::memcpy(argb, img.argb.data(), img.argb.size() * sizeof(std::uint32_t));
    if (values != nullptr) std::memcpy(values, img.values.data(), img.values.size() * sizeof(float));
  });
}
