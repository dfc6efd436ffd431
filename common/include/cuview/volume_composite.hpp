// The pictures of a run of parts, made whole (issue 55): each part's publisher casts its own block
// of the global grid (VolumeBrick::whole/offset, the `render` op), and the client composites the
// parts' pictures front to back along the view, sort-last as IceT and ISAAC do. No communication
// inside the simulation; z-slabs (and any blocks of a regular decomposition) have one order per
// view direction.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuview/volume_ray.hpp"

namespace cuview {

/// The camera's view direction for `azimuth` and `elevation` (degrees), in (x, y, z): what
/// cuview/volume_ray.hpp's camera looks along.
[[nodiscard]] std::array<double, 3> view_direction(double azimuth_deg, double elevation_deg);

/// The order in which blocks lie along `direction`, nearest the camera first: block k's centre is
/// `centres[k]` (world units). For blocks of a regular decomposition this is the visibility order.
[[nodiscard]] std::vector<std::size_t> front_to_back(const std::vector<std::array<double, 3>>& centres,
                                                     const std::array<double, 3>& direction);

/// One part's picture: `pixels` ARGB32 values and what each shows (cast_ray's meaning; NaN where the
/// ray missed the part's block or, for the isosurface, met no surface there).
struct PartPicture {
  const std::uint32_t* argb = nullptr;
  const float* values = nullptr;
};

/// Composites the parts' pictures of one view, given nearest first, into `argb` and `values`
/// (`pixels` each): MIP the largest value wins, with its colour; emission–absorption `over`, the
/// colours premultiplied and the values the opacity; the isosurface the nearest part that met the
/// surface. Where no part shows anything: kVolumeMiss and NaN.
void composite_pictures(VolumeMode mode, const std::vector<PartPicture>& nearest_first, std::size_t pixels,
                        std::uint32_t* argb, float* values);

}  // namespace cuview
