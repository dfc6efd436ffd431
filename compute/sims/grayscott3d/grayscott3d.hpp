// Gray–Scott in three dimensions: the reaction of grayscott.hpp (grayscott_update, the only copy
// of the equations) with the 7-point Laplacian on a periodic volume of width × height × depth
// cells, x fastest. Forward Euler needs 12·D·dt well below 2 (the reaction takes part of the
// margin): the parameters' ranges keep every allowed combination there (params()). The host loops and the CUDA kernel both end in cell()'s math.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cuview/host_device.hpp"
#include "sims/grayscott/grayscott.hpp"
#include "sims/simulation.hpp"

namespace cuview::sim::grayscott3d {

/// The 7-point Laplacian (grid spacing 1), summed in one fixed order so that every loop and kernel
/// that calls it rounds alike.
CUVIEW_HD inline float laplacian7(float xl, float xr, float yu, float yd, float zb, float zf, float centre) {
  return ((xl + xr) + (yu + yd)) + (zb + zf) - 6.0f * centre;
}

/// One Euler step of cell (x, y, z): reads u, v around it (periodic), writes u_out, v_out at it.
CUVIEW_HD inline void cell(const float* __restrict__ u, const float* __restrict__ v, float* __restrict__ u_out,
                           float* __restrict__ v_out, int x, int y, int z, int w, int h, int d,
                           const GrayScottParams& p) {
  const std::size_t plane = static_cast<std::size_t>(w) * h;
  const std::size_t layer = static_cast<std::size_t>(z) * plane, row = layer + static_cast<std::size_t>(y) * w;
  const std::size_t at = row + x;
  const std::size_t xl = row + (x == 0 ? w - 1 : x - 1), xr = row + (x == w - 1 ? 0 : x + 1);
  const std::size_t yu = layer + static_cast<std::size_t>(y == 0 ? h - 1 : y - 1) * w + x;
  const std::size_t yd = layer + static_cast<std::size_t>(y == h - 1 ? 0 : y + 1) * w + x;
  const std::size_t zb = static_cast<std::size_t>(z == 0 ? d - 1 : z - 1) * plane + (at - layer);
  const std::size_t zf = static_cast<std::size_t>(z == d - 1 ? 0 : z + 1) * plane + (at - layer);
  const float lap_u = laplacian7(u[xl], u[xr], u[yu], u[yd], u[zb], u[zf], u[at]);
  const float lap_v = laplacian7(v[xl], v[xr], v[yu], v[yd], v[zb], v[zf], v[at]);
  grayscott_update(u[at], v[at], lap_u, lap_v, p, u_out[at], v_out[at]);
}

[[nodiscard]] std::vector<FieldSpec> fields();
/// What a checkpoint holds: u and v, {depth, height, width} each.
[[nodiscard]] std::vector<StateSpec> state(int w, int h, int d);
[[nodiscard]] std::vector<ParamSpec> params();
[[nodiscard]] std::vector<Preset> presets();

/// The seeded cubes of the initial state: how many, their side, and where cube s begins among the
/// generator's outputs (its x0, y0, z0, then one noise value per cell, x fastest).
struct Cubes {
  int count, side;
  [[nodiscard]] CUVIEW_HD std::uint64_t first_output(int s) const {
    return static_cast<std::uint64_t>(s) * (3 + static_cast<std::uint64_t>(side) * side * side);
  }
};
[[nodiscard]] Cubes cubes_of(int w, int h, int d);
/// u = 1, v = 0 with the seeded cubes (u = 0.5, v = 0.25, plus ±0.01 noise: grayscott's generator),
/// the same bits on every executor for one seed.
void initial_state(int w, int h, int d, std::uint64_t seed, float* u, float* v);

/// The CUDA implementation (grayscott3d_cuda.cu).
std::unique_ptr<Simulation> make_cuda(Executor& executor, int w, int h, int d);

}  // namespace cuview::sim::grayscott3d
