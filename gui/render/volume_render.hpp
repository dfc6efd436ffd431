// A volume seen whole (issue 40, first part): a ray caster on the CPU over a brick of float
// values — maximum-intensity projection, emission–absorption through a transfer function, and a
// shaded isosurface — with an orthographic camera orbiting the brick's centre. No Qt and no CUDA:
// the viewer, the gateway (rendered views) and the Python package can all call it.
//
// Geometry: a cell (x, y, z) of the brick (x fastest) has its centre at (x, y, z); the camera at
// azimuth 0 and elevation 0 looks along +z with x to the right and y down, so the default picture
// lies as a 2-D view of the same grid does. Azimuth a turns the camera about the y axis: it looks
// along (sin a, 0, cos a) with (cos a, 0, -sin a) to the right (90°: along +x, with -z to the
// right). Elevation e then turns it about its right axis: it looks along dir·cos e − y·sin e, with
// y·cos e + dir·sin e down (90°: along -y). A pixel's ray is the line through its centre along the
// view direction; samples every `step` cells, trilinear.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "render/colormap.hpp"

namespace cuview::gui {

enum class VolumeMode { mip, emission, isosurface };

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
  Lut lut{};
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
};

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

/// The transfer functions' presets: "ramp" (opacity rising with the value), "peak" (a band around
/// the middle of [lo, hi]), "flat" (the same everywhere), scaled so that a path of `depth` cells
/// of the highest opacity is nearly opaque.
std::array<float, 256> opacity_preset(const char* name, int depth);

}  // namespace cuview::gui
