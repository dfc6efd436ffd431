#include "cuview/volume_cast.hpp"

#include <algorithm>

#include "every_core.hpp"

namespace cuview {
using detail::cores;
using detail::on_every_core;

void volume_blocks(const VolumeBrick& b, std::vector<float>& out) {
  const int bw = volume_blocks_along(b.width), bh = volume_blocks_along(b.height), bd = volume_blocks_along(b.depth);
  out.resize(std::size_t{2} * bw * bh * bd);
  on_every_core(cores(0), bd * bh, [&](int zy) {
    const int bz = zy / bh, by = zy % bh;
    for (int bx = 0; bx < bw; ++bx)
      volume_block_range(b.data, b.width, b.height, b.depth, bx, by, bz,
                         out.data() + 2 * ((static_cast<std::size_t>(bz) * bh + by) * bw + bx));
  });
}

void cast_volume(const VolumeBrick& brick, const VolumeCamera& camera, VolumeMode mode, const VolumeStyle& style,
                 int width, int height, std::uint32_t* argb, float* values, int threads) {
  const std::size_t pixels = static_cast<std::size_t>(std::max(width, 0)) * std::max(height, 0);
  std::fill_n(argb, pixels, kVolumeMiss);
  std::fill_n(values, pixels, NAN);
  if (brick.data == nullptr || brick.width < 1 || brick.height < 1 || brick.depth < 1 || pixels == 0) return;
  VolumeTables tables;
  VolumeRays rays = volume_rays(brick, camera, mode, style, width, height, tables);
  std::vector<float> blocks;
  volume_blocks(brick, blocks);
  rays.blocks = blocks.data();
  rays.bw = volume_blocks_along(brick.width), rays.bh = volume_blocks_along(brick.height);
  rays.bd = volume_blocks_along(brick.depth);
  on_every_core(cores(threads), height, [&](int py) {
    for (int px = 0; px < width; ++px) {
      const std::size_t at = static_cast<std::size_t>(py) * width + px;
      cast_ray(rays, px, py, argb[at], values[at]);
    }
  });
}

}  // namespace cuview
