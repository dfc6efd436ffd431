// One ray of a volume picture, the same code on the CPU and on the GPU: maximum-intensity
// projection, emission–absorption through a transfer function, and a shaded isosurface, with an
// orthographic camera orbiting the brick's centre. The CPU caster (gui/render/volume_render.hpp)
// runs cast_ray for each pixel on every core; a kernel runs it for each pixel on the GPU that
// holds the field, over every cell (issue 55). No Qt, no CUDA runtime: a header of types and
// CUVIEW_HD functions.
//
// Geometry: a cell (x, y, z) of the brick (x fastest) has its centre at (x, y, z); the camera at
// azimuth 0 and elevation 0 looks along +z with x to the right and y down, so the default picture
// lies as a 2-D view of the same grid does. Azimuth a turns the camera about the y axis: it looks
// along (sin a, 0, cos a) with (cos a, 0, -sin a) to the right (90°: along +x, with -z to the
// right). Elevation e then turns it about its right axis: it looks along dir·cos e − y·sin e, with
// y·cos e + dir·sin e down (90°: along -y). A pixel's ray is the line through its centre along the
// view direction; samples every `step` cells, trilinear.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "cuview/host_device.hpp"

namespace cuview {

enum class VolumeMode { mip, emission, isosurface };
/// Each mode's name, as the protocol's `render`, the C API, Python and the command lines say it.
constexpr const char* volume_mode_name(VolumeMode m) noexcept {
  return m == VolumeMode::emission ? "emission" : m == VolumeMode::isosurface ? "isosurface" : "mip";
}
/// The mode named so; nullopt for none of them (kVolumeModeNames lists them, for errors).
inline std::optional<VolumeMode> volume_mode_of(std::string_view name) noexcept {
  for (const auto m : {VolumeMode::mip, VolumeMode::emission, VolumeMode::isosurface})
    if (name == volume_mode_name(m)) return m;
  return std::nullopt;
}
inline constexpr const char* kVolumeModeNames = "mip, emission, isosurface";

/// Where the view looks from: orthographic, orbiting the brick's centre.
struct VolumeCamera {
  double azimuth_deg = 0;    ///< about the brick's y axis; 0: looking along +z
  double elevation_deg = 0;  ///< about the camera's right axis, after the azimuth
  double zoom = 1;           ///< 1: the brick's diagonal spans the view's shorter side
  double pan_x = 0, pan_y = 0;  ///< the view's centre moved by this many cells, right and down
};

/// How values become colour: [lo, hi] onto the colormap; in emission–absorption also onto
/// `opacity` (per cell of path length, 256 entries over [lo, hi]); `level` for the isosurface.
struct VolumeStyle {
  std::array<std::uint32_t, 256> lut{};  ///< 0xAARRGGBB
  float lo = 0, hi = 1;
  std::array<float, 256> opacity{};
  float level = 0.5f;
  double step = 0.5;  ///< sample spacing along a ray, in cells
};

/// A brick of d × h × w values, x fastest (a frame's volume field, or one downsampled).
struct VolumeBrick {
  const float* data = nullptr;
  int width = 0, height = 0, depth = 0;
  /// A cell's sides along x, y and z (the grid's spacing, any unit): the brick is drawn with that
  /// aspect ratio. Lengths in the picture (zoom, pan, isosurface distances, the step) are in units
  /// of the shortest side.
  std::array<double, 3> cell{1, 1, 1};
  /// A block of a larger grid (one part of a run): the whole grid's cells along x, y and z, and
  /// this brick's first cell in it. The camera frames the whole grid as it frames a whole brick;
  /// rays are cast through this block alone, so that the parts' pictures composite into the
  /// whole's (composite_pictures). {0, 0, 0}: the brick is the whole grid.
  std::array<int, 3> whole{0, 0, 0}, offset{0, 0, 0};
};

/// A ray's colour where it shows nothing: black.
inline constexpr std::uint32_t kVolumeMiss = 0xff000000u;

/// The style's tables as a ray reads them: the colormap, the opacity of one step and the
/// colour as floats, per colormap entry.
struct VolumeTables {
  std::array<std::uint32_t, 256> lut{};
  std::array<float, 256> step_alpha{};
  std::array<float, 3 * 256> rgb{};
  std::array<int, 257> opaque_below{};  ///< entries below i with a nonzero step_alpha
};

/// Everything a ray of one picture needs, set up once (volume_rays) and read by cast_ray. The
/// brick's values and the tables are pointers: host memory for the CPU, device memory in a kernel.
struct VolumeRays {
  const float* data = nullptr;
  int w = 0, h = 0, d = 0;   ///< the brick
  double cell[3] = {1, 1, 1};  ///< a cell's sides in world units (the shortest 1)
  double centre[3] = {}, right[3] = {}, down[3] = {}, dir[3] = {};
  double lo[3] = {}, hi[3] = {};  ///< the brick's faces in world units
  double first[3] = {};           ///< the brick's first cell in the whole grid (VolumeBrick::offset)
  bool part = false;              ///< the brick is a block of the whole grid
  double whole_lo[3] = {}, whole_hi[3] = {};  ///< the whole grid's faces in world units
  double scale = 1;               ///< pixels per world unit
  double pan_x = 0, pan_y = 0, step = 0.5;
  int width = 0, height = 0;      ///< the picture
  VolumeMode mode = VolumeMode::mip;
  float lo_value = 0, hi_value = 1, level = 0.5f;
  const std::uint32_t* lut = nullptr;
  const float* step_alpha = nullptr;
  const float* rgb = nullptr;
  /// Empty-space skipping (optional): the brick's smallest and largest value per block of
  /// kVolumeBlock³ cells — over its cells and the next one along each axis, all that a trilinear
  /// sample inside it reads (volume_blocks) — `bw` × `bh` × `bd` blocks, x fastest, two floats
  /// each. A ray crosses a block that cannot change its pixel in one stride: MIP where the block's
  /// largest is no more than the ray's largest so far, emission where every value in it is clear,
  /// the isosurface where all lie below the level. Null: every sample is taken.
  const float* blocks = nullptr;
  int bw = 0, bh = 0, bd = 0;
  /// Emission: how many of the entries below i have a nonzero opacity (257 entries; VolumeTables).
  const int* opaque_below = nullptr;
};

/// The side of a block of cells that empty-space skipping steps over at once.
inline constexpr int kVolumeBlock = 8;

/// The blocks along an axis of n cells.
CUVIEW_HD inline int volume_blocks_along(int n) { return (n + kVolumeBlock - 1) / kVolumeBlock; }

/// Block (bx, by, bz)'s smallest and largest value over its cells and the next one along each axis
/// (VolumeRays::blocks); the CPU fills every block with it, a kernel one block a thread.
CUVIEW_HD inline void volume_block_range(const float* data, int w, int h, int d, int bx, int by, int bz, float* out) {
  float lo = INFINITY, hi = -INFINITY;
  const int x1 = (bx + 1) * kVolumeBlock < w - 1 ? (bx + 1) * kVolumeBlock : w - 1;
  const int y1 = (by + 1) * kVolumeBlock < h - 1 ? (by + 1) * kVolumeBlock : h - 1;
  const int z1 = (bz + 1) * kVolumeBlock < d - 1 ? (bz + 1) * kVolumeBlock : d - 1;
  for (int z = bz * kVolumeBlock; z <= z1; ++z)
    for (int y = by * kVolumeBlock; y <= y1; ++y) {
      const float* row = data + (static_cast<std::ptrdiff_t>(z) * h + y) * w;
      for (int x = bx * kVolumeBlock; x <= x1; ++x) {
        const float v = row[x];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
      }
    }
  out[0] = lo, out[1] = hi;
}

namespace volume_detail {
constexpr double kPi = 3.14159265358979323846;

/// Trilinear at (x, y, z) of the brick, cell centres at integers; clamped at the faces.
CUVIEW_HD inline float sample(const VolumeRays& r, float x, float y, float z) {
  const float mx = r.w - 1.0f, my = r.h - 1.0f, mz = r.d - 1.0f;
  x = x < 0.0f ? 0.0f : (x > mx ? mx : x);
  y = y < 0.0f ? 0.0f : (y > my ? my : y);
  z = z < 0.0f ? 0.0f : (z > mz ? mz : z);
  const int lx = r.w - 2 > 0 ? r.w - 2 : 0, ly = r.h - 2 > 0 ? r.h - 2 : 0, lz = r.d - 2 > 0 ? r.d - 2 : 0;
  const int x0 = static_cast<int>(x) < lx ? static_cast<int>(x) : lx;
  const int y0 = static_cast<int>(y) < ly ? static_cast<int>(y) : ly;
  const int z0 = static_cast<int>(z) < lz ? static_cast<int>(z) : lz;
  const std::ptrdiff_t sy = r.w, sz = static_cast<std::ptrdiff_t>(r.w) * r.h;
  const std::ptrdiff_t dx = r.w > 1 ? 1 : 0, dy = r.h > 1 ? sy : 0, dz = r.d > 1 ? sz : 0;
  const float fx = x - x0, fy = y - y0, fz = z - z0;
  const float* p = r.data + z0 * sz + y0 * sy + x0;
  const float c00 = p[0] + (p[dx] - p[0]) * fx;
  const float c10 = p[dy] + (p[dy + dx] - p[dy]) * fx;
  const float c01 = p[dz] + (p[dz + dx] - p[dz]) * fx;
  const float c11 = p[dz + dy] + (p[dz + dy + dx] - p[dz + dy]) * fx;
  const float c0 = c00 + (c10 - c00) * fy, c1 = c01 + (c11 - c01) * fy;
  return c0 + (c1 - c0) * fz;
}

CUVIEW_HD inline std::uint32_t argb(double r, double g, double b) {
  auto c = [](double v) {
    v = v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v);
    return static_cast<std::uint32_t>(v * 255.0 + 0.5);
  };
  return 0xff000000u | (c(r) << 16) | (c(g) << 8) | c(b);
}
CUVIEW_HD inline double channel(std::uint32_t c, int shift) { return ((c >> shift) & 0xff) / 255.0; }

/// The block (VolumeRays::blocks) holding index-space point (x, y, z): its range, and how many
/// steps of (sx, sy, sz) leave it (at least 1).
CUVIEW_HD inline const float* block_at(const VolumeRays& r, float x, float y, float z, float sx, float sy, float sz,
                                       int& steps_out) {
  const float p[3] = {x, y, z}, s[3] = {sx, sy, sz};
  const int n[3] = {r.bw, r.bh, r.bd};
  int b[3];
  float along = INFINITY;  // steps to the block's far face, the nearest of the three
  for (int k = 0; k < 3; ++k) {
    const float c = p[k] < 0.0f ? 0.0f : p[k];
    int i = static_cast<int>(c) / kVolumeBlock;
    i = i < n[k] - 1 ? i : n[k] - 1;
    b[k] = i;
    if (s[k] > 1e-12f) {
      const float t = (static_cast<float>((i + 1) * kVolumeBlock) - p[k]) / s[k];
      along = t < along ? t : along;
    } else if (s[k] < -1e-12f) {
      const float t = (p[k] - static_cast<float>(i * kVolumeBlock)) / -s[k];
      along = t < along ? t : along;
    }
  }
  const float whole = ceilf(along);
  steps_out = whole > 1.0f ? (whole < 1e6f ? static_cast<int>(whole) : 1000000) : 1;
  return r.blocks + 2 * ((static_cast<std::ptrdiff_t>(b[2]) * r.bh + b[1]) * r.bw + b[0]);
}

/// The colormap entry of value v over [lo, hi] (NaN: 0).
CUVIEW_HD inline int index_of(float v, const VolumeRays& r) {
  const float t = r.hi_value > r.lo_value ? (v - r.lo_value) / (r.hi_value - r.lo_value) : 0.f;
  const float f = t * 255.f + 0.5f;
  if (!(f > 0.f)) return 0;  // also NaN
  return f >= 255.f ? 255 : static_cast<int>(f);
}
}  // namespace volume_detail

/// The picture's rays for `brick` seen by `camera`: its world frame, the camera's axes and scale,
/// and pointers to `tables` (filled here from `style`) and to the brick's values.
inline VolumeRays volume_rays(const VolumeBrick& brick, const VolumeCamera& camera, VolumeMode mode,
                              const VolumeStyle& style, int width, int height, VolumeTables& tables) {
  VolumeRays r;
  r.data = brick.data;
  r.w = brick.width, r.h = brick.height, r.d = brick.depth;
  r.width = width > 0 ? width : 0, r.height = height > 0 ? height : 0;
  r.mode = mode;
  r.lo_value = style.lo, r.hi_value = style.hi, r.level = style.level;
  // A cell's sides in world units: the brick's `cell`, scaled so that the shortest is 1 (a side
  // that is not positive and finite counts as 1).
  std::array<double, 3> c = brick.cell;
  for (auto& side : c)
    if (!(side > 0) || !std::isfinite(side)) side = 1;
  const double shortest = std::min({c[0], c[1], c[2]});
  for (int k = 0; k < 3; ++k) r.cell[k] = c[k] / shortest;
  // The camera frames the whole grid; the rays cross this brick, placed in it.
  const bool part = brick.whole[0] > 0 && brick.whole[1] > 0 && brick.whole[2] > 0;
  const int n[3] = {brick.width, brick.height, brick.depth};
  const int all[3] = {part ? brick.whole[0] : n[0], part ? brick.whole[1] : n[1], part ? brick.whole[2] : n[2]};
  const double sides[3] = {all[0] * r.cell[0], all[1] * r.cell[1], all[2] * r.cell[2]};
  const double diagonal = std::sqrt(sides[0] * sides[0] + sides[1] * sides[1] + sides[2] * sides[2]);
  for (int k = 0; k < 3; ++k) {
    r.first[k] = part ? brick.offset[static_cast<std::size_t>(k)] : 0;
    r.centre[k] = (all[k] - 1) / 2.0 * r.cell[k];
    r.lo[k] = (r.first[k] - 0.5) * r.cell[k];
    r.hi[k] = (r.first[k] + n[k] - 0.5) * r.cell[k];
    r.whole_lo[k] = -0.5 * r.cell[k];
    r.whole_hi[k] = (all[k] - 0.5) * r.cell[k];
  }
  r.part = part;
  const double a = camera.azimuth_deg * volume_detail::kPi / 180, e = camera.elevation_deg * volume_detail::kPi / 180;
  const double dir0[3] = {std::sin(a), 0, std::cos(a)}, down0[3] = {0, 1, 0};
  // Elevation turns dir and down about `right`: positive looks from above (from -y), down.
  r.right[0] = std::cos(a), r.right[1] = 0, r.right[2] = -std::sin(a);
  for (int k = 0; k < 3; ++k) {
    r.down[k] = down0[k] * std::cos(e) + dir0[k] * std::sin(e);
    r.dir[k] = dir0[k] * std::cos(e) + down0[k] * (-std::sin(e));
  }
  r.scale = std::max(camera.zoom, 1e-6) * std::min(r.width, r.height) / (diagonal > 0 ? diagonal : 1);
  r.pan_x = camera.pan_x, r.pan_y = camera.pan_y;
  r.step = std::clamp(style.step, 0.05, 4.0);
  tables.lut = style.lut;
  for (std::size_t i = 0; i < 256; ++i) {
    tables.step_alpha[i] = static_cast<float>(1 - std::exp(-static_cast<double>(style.opacity[i]) * r.step));
    for (int k = 0; k < 3; ++k)
      tables.rgb[3 * i + k] = static_cast<float>(volume_detail::channel(style.lut[i], 16 - 8 * k));
  }
  tables.opaque_below[0] = 0;
  for (std::size_t i = 0; i < 256; ++i) tables.opaque_below[i + 1] = tables.opaque_below[i] + (tables.step_alpha[i] > 0 ? 1 : 0);
  r.lut = tables.lut.data(), r.step_alpha = tables.step_alpha.data(), r.rgb = tables.rgb.data();
  r.opaque_below = tables.opaque_below.data();
  return r;
}

/// Pixel (px, py)'s colour (ARGB) and what it shows: MIP the largest value on the ray, emission
/// its accumulated opacity, isosurface the distance along the ray to the surface from the ray's
/// entry into the (whole) grid; NaN (and kVolumeMiss) where the ray misses the brick or the surface.
CUVIEW_HD inline void cast_ray(const VolumeRays& r, int px, int py, std::uint32_t& out_argb, float& out_value) {
  using namespace volume_detail;
  out_argb = kVolumeMiss;
  out_value = NAN;
  if (r.data == nullptr || r.w < 1 || r.h < 1 || r.d < 1) return;
  const double u = (px + 0.5 - r.width / 2.0) / r.scale + r.pan_x;
  const double v = (py + 0.5 - r.height / 2.0) / r.scale + r.pan_y;
  double o[3];
  for (int k = 0; k < 3; ++k) o[k] = r.centre[k] + r.right[k] * u + r.down[k] * v;
  // Where the line o + t·dir is inside the box [lo, hi]: [t0, t1] (the slab method); false: nowhere.
  auto inside = [&](const double* lo, const double* hi, double& t0, double& t1) {
    t0 = -INFINITY, t1 = INFINITY;
    for (int k = 0; k < 3; ++k) {
      if (fabs(r.dir[k]) < 1e-12) {
        if (o[k] < lo[k] || o[k] > hi[k]) return false;
        continue;
      }
      double a = (lo[k] - o[k]) / r.dir[k], b = (hi[k] - o[k]) / r.dir[k];
      if (a > b) {
        const double s = a;
        a = b, b = s;
      }
      t0 = t0 > a ? t0 : a;
      t1 = t1 < b ? t1 : b;
    }
    return t0 <= t1;
  };
  double t0 = 0, t1 = 0;
  if (!inside(r.lo, r.hi, t0, t1)) return;
  // A part's samples lie where the whole grid's would (every step from the ray's entry into the
  // whole grid), so that the parts' pictures composite into the whole's; distances count from
  // that entry too.
  double entry = t0, start = t0;
  if (r.part) {
    double w1 = 0;
    if (!inside(r.whole_lo, r.whole_hi, entry, w1)) return;
    start = entry + ceil((t0 - entry) / r.step - 1e-9) * r.step;
    if (start > t1) return;  // the ray crosses this block between two samples: nothing of it here
  }
  // A point of the ray in the brick's index space (world / cell).
  auto index = [&](double t, int k) { return (o[k] + r.dir[k] * t) / r.cell[k] - r.first[k]; };
  const double step = r.step;
  // Marching in float through index space: the position advances by a fixed step vector.
  const float sx = static_cast<float>(r.dir[0] * step / r.cell[0]), sy = static_cast<float>(r.dir[1] * step / r.cell[1]),
              sz = static_cast<float>(r.dir[2] * step / r.cell[2]);
  const int samples = static_cast<int>((t1 - start) / step) + 1;
  float x = static_cast<float>(index(start, 0)), y = static_cast<float>(index(start, 1)),
        z = static_cast<float>(index(start, 2));
  if (r.mode == VolumeMode::mip) {
    float best = -INFINITY;
    for (int i = 0; i < samples; ++i, x += sx, y += sy, z += sz) {
      if (r.blocks != nullptr) {
        int n = 1;
        const float* b = block_at(r, x, y, z, sx, sy, sz, n);
        if (b[1] <= best) {  // nothing here beats the largest so far
          n = n < samples - i ? n : samples - i;
          i += n - 1, x += sx * (n - 1), y += sy * (n - 1), z += sz * (n - 1);
          continue;
        }
      }
      const float s = sample(r, x, y, z);
      best = s > best ? s : best;
    }
    out_value = best;
    out_argb = r.lut[index_of(best, r)];
  } else if (r.mode == VolumeMode::emission) {
    float cr = 0, cg = 0, cb = 0, alpha = 0;
    for (int k = 0; k < samples && alpha < 0.995f; ++k, x += sx, y += sy, z += sz) {
      if (r.blocks != nullptr) {
        int n = 1;
        const float* b = block_at(r, x, y, z, sx, sy, sz, n);
        if (r.opaque_below[index_of(b[1], r) + 1] == r.opaque_below[index_of(b[0], r)]) {  // all clear here
          n = n < samples - k ? n : samples - k;
          k += n - 1, x += sx * (n - 1), y += sy * (n - 1), z += sz * (n - 1);
          continue;
        }
      }
      const int i = index_of(sample(r, x, y, z), r);
      const float a = r.step_alpha[i];
      if (a <= 0) continue;
      const float w = (1 - alpha) * a;
      cr += w * r.rgb[3 * i], cg += w * r.rgb[3 * i + 1], cb += w * r.rgb[3 * i + 2];
      alpha += w;
    }
    out_value = alpha;
    out_argb = argb(cr, cg, cb);  // over black
  } else {
    auto at = [&](double t) {
      return sample(r, static_cast<float>(index(t, 0)), static_cast<float>(index(t, 1)), static_cast<float>(index(t, 2)));
    };
    const std::uint32_t surface = r.lut[index_of(r.level, r)];
    double hit = 0;
    bool found = false;
    if (at(t0) >= r.level) {
      if (!r.part || t0 - entry < 1e-9) {  // the ray enters the grid inside the surface: its face shows
        out_value = 0;
        out_argb = surface;
        return;
      }
      hit = t0, found = true;  // a part entered at its seam inside the surface: it lies within half a cell before
    }
    const float dsx = static_cast<float>(r.dir[0] * step / r.cell[0]), dsy = static_cast<float>(r.dir[1] * step / r.cell[1]),
                dsz = static_cast<float>(r.dir[2] * step / r.cell[2]);
    for (double t = t0 + step; !found && t <= t1 + 1e-9; t += step) {
      if (r.blocks != nullptr) {
        int n = 1;
        const float* b = block_at(r, static_cast<float>(index(t, 0)), static_cast<float>(index(t, 1)),
                                  static_cast<float>(index(t, 2)), dsx, dsy, dsz, n);
        if (b[1] < r.level) {  // all below the level here: no crossing
          t += step * (n - 1);
          continue;
        }
      }
      if (at(t < t1 ? t : t1) < r.level) continue;
      // Crossed between t - step and t: bisect to the level.
      double a = t - step, b = t < t1 ? t : t1;
      for (int k = 0; k < 12; ++k) {
        const double m = (a + b) / 2;
        (at(m) >= r.level ? b : a) = m;
      }
      hit = b, found = true;
    }
    if (found) {
      const double b = hit;
      const auto hx = static_cast<float>(index(b, 0)), hy = static_cast<float>(index(b, 1)),
                 hz = static_cast<float>(index(b, 2));
      // The gradient in index space (central differences, one-sided within a cell of the brick's
      // faces, where a part's seam lies: its neighbour's cells are not here), then in world
      // space; a headlight's Lambert shading.
      const float p[3] = {hx, hy, hz};
      const float top[3] = {r.w - 1.0f, r.h - 1.0f, r.d - 1.0f};
      double n[3];
      for (int k = 0; k < 3; ++k) {
        float a[3] = {hx, hy, hz}, c[3] = {hx, hy, hz};
        a[k] = p[k] - 1 < 0.0f ? p[k] : p[k] - 1;
        c[k] = p[k] + 1 > top[k] ? p[k] : p[k] + 1;
        const float span = c[k] - a[k];
        n[k] = span > 0 ? (sample(r, c[0], c[1], c[2]) - sample(r, a[0], a[1], a[2])) * 2.0 / span : 0.0;
      }
      double len2 = 0, along = 0;
      for (int k = 0; k < 3; ++k) {
        n[k] /= r.cell[k];
        len2 += n[k] * n[k];
        along += n[k] * r.dir[k];
      }
      const double len = sqrt(len2);
      const double lambert = len > 0 ? fabs(along) / len : 1.0;
      const double shade = 0.25 + 0.75 * lambert;
      out_value = static_cast<float>(b - entry);
      out_argb = argb(channel(surface, 16) * shade, channel(surface, 8) * shade, channel(surface, 0) * shade);
    }
  }
}

}  // namespace cuview
