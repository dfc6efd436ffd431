// A volume seen whole (issue 40, first part): a ray caster on the CPU over a brick of float
// values, every core casting the rays of cuview/volume_ray.hpp (the same code a GPU kernel runs).
// No Qt and no CUDA: the viewer, the gateway (rendered views) and the Python package can all call
// it.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "cuview/volume_ray.hpp"
#include "render/colormap.hpp"

namespace cuview::gui {

using cuview::VolumeBrick;
using cuview::VolumeCamera;
using cuview::VolumeMode;
using cuview::VolumeStyle;

/// The picture: ARGB32 pixels (row-major, as QImage::Format_ARGB32), and per pixel what it shows
/// in values: MIP the largest value on the ray, emission its accumulated opacity, isosurface the
/// distance along the ray to the surface from the ray's entry into the brick; NaN where the ray
/// misses the brick (or, for the isosurface, the surface).
struct VolumeImage {
  int width = 0, height = 0;
  std::vector<std::uint32_t> argb;
  std::vector<float> values;
};

/// Renders `brick` as `mode` into a width × height picture, on every core.
VolumeImage render_volume(const VolumeBrick& brick, const VolumeCamera& camera, VolumeMode mode,
                          const VolumeStyle& style, int width, int height);

/// Where the point (x, y, z) of `brick` (cell centres at integers) shows in a width × height
/// picture of `camera`: continuous picture coordinates (pixel k spans [k, k + 1)). The inverse of a
/// pixel's ray, for drawing over the picture (a slice plane's outline).
std::array<double, 2> volume_pixel(const VolumeBrick& brick, const VolumeCamera& camera, int width, int height,
                                   double x, double y, double z);

/// While the camera moves: the factor by which a picture is drawn at a lower resolution (rays
/// every `scale` pixels, scaled up) when one at full resolution took `full_ms` — 1 up to a 30 Hz
/// frame's time, then the smallest of 2..4 that brings it there (ParaView's interactive render).
int interactive_scale(double full_ms);

/// The opacity curve (0..1 over 256 entries of [lo, hi]) that shows a field's structure at first
/// sight: the values most of the `n` cells hold (a free stream, a resting fluid) clear, rarer ones
/// more opaque — (1 − share / largest share)² of the entry's share of the cells, smoothed over
/// neighbouring entries — and only near kShells evenly spaced values, lo and hi among them
/// (Gaussian bands kShellWidth of the range wide): nested shells, as contour surfaces, rather than
/// a fog. Values outside [lo, hi] count in the end entries; NaN in none.
inline constexpr int kShells = 5;
inline constexpr double kShellWidth = 0.03;
std::array<float, 256> opacity_by_rarity(const float* values, std::size_t n, float lo, float hi);

/// The range that all but `tail` of the values at each end lie in (NaN skipped), read from a
/// histogram of 4096 entries over [lo, hi] (the values' own range): a colour range that a few
/// extreme cells (a corner of the inflow) do not squeeze. {lo, hi} when nothing is between.
std::array<float, 2> robust_range(const float* values, std::size_t n, float lo, float hi, double tail = 0.005);

/// What 1 on an opacity curve means, per cell of path: a path of a quarter of `depth` cells (the
/// brick's longest axis) of it lets e^-4 through, nearly opaque — dense enough that a shell a few
/// cells thick shows in its full colour (at 4 / depth a 512³ flow's default picture was a faint
/// haze).
[[nodiscard]] inline float full_opacity(int depth) { return 16.0f / static_cast<float>(depth > 1 ? depth : 1); }

/// The presets' highest point on the editor's curve: a path of `depth` cells of it (the whole
/// longest side) is nearly opaque, a volumetric glow; the curve's 1 is four times denser (shells).
inline constexpr float kPresetTop = 0.25f;
/// The transfer functions' presets as the editor's curve (0..1): "ramp" (opacity rising with the
/// value), "peak" (a band around the middle of [lo, hi]), "flat" (the same everywhere), each up
/// to kPresetTop.
std::array<float, 256> opacity_preset_curve(const char* name);
/// The same per cell of path, for a brick whose longest side is `depth` cells (× full_opacity).
std::array<float, 256> opacity_preset(const char* name, int depth);

}  // namespace cuview::gui
