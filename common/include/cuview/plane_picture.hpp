// A picture of one plane of a field — a 2-D grid, or a plane of a volume across x, y or z — as the
// publisher makes it for `render` mode "plane" (protocol 11): the whole plane fitted into the
// picture (ViewRegion::fit, zoom and pan), the nearest cell under each pixel, its value (a
// vector's magnitude) as float32 and its colour from the lut over [lo, hi]. The same code runs on
// the host backend's CPU and in a kernel on the GPU that holds the frame: what a viewer shows
// before its own CUDA context has started (issue 55, "first pixels"). A part of a decomposed run
// fills the pixels of its block's cells only; the others are misses, which the client fills from
// the other parts (Run::render).
//
// No CUDA header and no client header: device code includes it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "cuview/host_device.hpp"
#include "cuview/view_sampler.hpp"
#include "cuview/volume_ray.hpp"

namespace cuview {

/// The cells of a plane one picture samples, in memory: the block's plane (its cell (0, 0) at
/// `data`, rows and cells `row_bytes` and `col_bytes` apart) and where that block lies in the whole
/// plane the region fits (cells [x0, x0 + cols) × [y0, y0 + rows); a whole publisher's is all of it).
struct PlaneCells {
  const unsigned char* data = nullptr;  ///< nullptr: the block holds none of the plane (a miss everywhere)
  std::int64_t row_bytes = 0, col_bytes = 0;
  int dtype = 0;  ///< a cuview::DType, as its integer (schema.hpp; static_asserts in plane_picture.cpp)
  int components = 1;
  int x0 = 0, y0 = 0, cols = 0, rows = 0;
  ViewRegion region;  ///< the whole plane into the picture
};

namespace plane_detail {
/// IEEE half to float, bit by bit (the same on the host and the GPU).
CUVIEW_HD inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);  // inf, NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    exp = 113;
    while ((man & 0x400u) == 0) man <<= 1, --exp;
    bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
template <class T>
CUVIEW_HD inline T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
/// Component k of the cell at `p`, as float. The dtypes' integers: schema.hpp's DType order.
CUVIEW_HD inline float component(const unsigned char* p, int dtype, int k) {
  switch (dtype) {
    case 0: return load<float>(p + 4 * k);
    case 1: return half_to_float(load<std::uint16_t>(p + 2 * k));
    case 2: return static_cast<float>(load<std::int32_t>(p + 4 * k));
    case 3: return static_cast<float>(p[k]);
    case 4: return static_cast<float>(load<double>(p + 8 * k));
    case 5: return static_cast<float>(load<std::int64_t>(p + 8 * k));
    case 6: {
      const std::uint32_t bits = static_cast<std::uint32_t>(load<std::uint16_t>(p + 2 * k)) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    default: return NAN;
  }
}
}  // namespace plane_detail

/// The value pixel (px, py) shows: its cell's (a vector's magnitude); NaN off the plane or off
/// this block.
CUVIEW_HD inline float plane_value(const PlaneCells& p, int px, int py) {
  const int col = p.region.col_at(px), row = p.region.row_at(py);
  if (p.data == nullptr || col < p.x0 || row < p.y0 || col >= p.x0 + p.cols || row >= p.y0 + p.rows) return NAN;
  const unsigned char* cell = p.data + (row - p.y0) * p.row_bytes + (col - p.x0) * p.col_bytes;
  if (p.components == 1) return plane_detail::component(cell, p.dtype, 0);
  float s = 0;
  for (int k = 0; k < p.components; ++k) {
    const float c = plane_detail::component(cell, p.dtype, k);
    s += c * c;
  }
  return sqrtf(s);
}

/// Value v's colour from `lut` (256 entries over [lo, hi], clamped); kVolumeMiss for NaN.
CUVIEW_HD inline std::uint32_t plane_colour(float v, const std::uint32_t* lut, float lo, float hi) {
  if (v != v) return kVolumeMiss;
  const float t = hi > lo ? (v - lo) / (hi - lo) : 0.f;
  const float f = t * 255.f + 0.5f;
  return lut[!(f > 0.f) ? 0 : f >= 255.f ? 255 : static_cast<int>(f)];
}

/// The picture of `cells` on this thread: width × height pixels into `argb` and `values`.
void cast_plane(const PlaneCells& cells, const std::uint32_t* lut, float lo, float hi, int width, int height,
                std::uint32_t* argb, float* values);

}  // namespace cuview
