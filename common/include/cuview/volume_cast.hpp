// Volume pictures cast on this machine's CPU cores (cuview/volume_ray.hpp's rays, every core, with
// empty-space skipping over blocks of kVolumeBlock³ cells): the viewer's brick, the host backend's
// pictures for `render`, Python notebooks. The GPU's are compute/render/volume_caster.
#pragma once

#include <cstdint>
#include <vector>

#include "cuview/volume_ray.hpp"

namespace cuview {

/// Each block's smallest and largest value (VolumeRays::blocks) of `brick`, on every core.
void volume_blocks(const VolumeBrick& brick, std::vector<float>& out);

/// Casts a width × height picture of `brick` into `argb` and `values` (width × height each; what
/// cast_ray writes), on every core (at most `threads`; 0: all of them).
void cast_volume(const VolumeBrick& brick, const VolumeCamera& camera, VolumeMode mode, const VolumeStyle& style,
                 int width, int height, std::uint32_t* argb, float* values, int threads = 0);

}  // namespace cuview
