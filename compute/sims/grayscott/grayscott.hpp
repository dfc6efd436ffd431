// Gray–Scott reaction–diffusion: fields u and v on a periodic grid,
//   du/dt = Du ∇²u − u v² + F (1 − u)
//   dv/dt = Dv ∇²v + u v² − (F + k) v
// integrated with forward Euler and the 5-point Laplacian (grid spacing 1). The per-cell update
// below is the only copy of the math: the CUDA kernels and the host loops both call it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuview/host_device.hpp"

namespace cuview::sim {

struct GrayScottParams {
  float F = 0.0545f;  ///< feed rate
  float k = 0.062f;   ///< kill rate
  float Du = 0.16f;   ///< diffusion of u
  float Dv = 0.08f;   ///< diffusion of v
  float dt = 1.0f;    ///< time step
};

/// The 5-point Laplacian (grid spacing 1), summed in one fixed order so that every kernel and
/// loop that calls it rounds alike.
CUVIEW_HD inline float laplacian5(float left, float right, float up, float down, float centre) {
  return left + right + up + down - 4.0f * centre;
}

/// The reaction–diffusion update of one cell from its values and their 5-point Laplacians.
/// The only copy of the equations: every loop and kernel ends here.
CUVIEW_HD inline void grayscott_update(float uc, float vc, float lap_u, float lap_v, const GrayScottParams& p,
                                       float& u_out, float& v_out) {
  const float uvv = uc * vc * vc;
  u_out = uc + p.dt * (p.Du * lap_u - uvv + p.F * (1.0f - uc));
  v_out = vc + p.dt * (p.Dv * lap_v + uvv - (p.F + p.k) * vc);
}

/// One Euler step of cell (x, y): reads u, v around it (periodic), writes u_out, v_out at it.
CUVIEW_HD inline void grayscott_cell(const float* __restrict__ u, const float* __restrict__ v,
                                     float* __restrict__ u_out, float* __restrict__ v_out, int x, int y, int width,
                                     int height, const GrayScottParams& p) {
  const int xl = x == 0 ? width - 1 : x - 1;
  const int xr = x == width - 1 ? 0 : x + 1;
  const int yu = y == 0 ? height - 1 : y - 1;
  const int yd = y == height - 1 ? 0 : y + 1;
  const std::size_t row = static_cast<std::size_t>(y) * width;
  const std::size_t up = static_cast<std::size_t>(yu) * width;
  const std::size_t down = static_cast<std::size_t>(yd) * width;
  const std::size_t i = row + x;
  const float uc = u[i];
  const float vc = v[i];
  const float lap_u = laplacian5(u[row + xl], u[row + xr], u[up + x], u[down + x], uc);
  const float lap_v = laplacian5(v[row + xl], v[row + xr], v[up + x], v[down + x], vc);
  grayscott_update(uc, vc, lap_u, lap_v, p, u_out[i], v_out[i]);
}

inline constexpr const char* kFieldNames[] = {"u", "v"};
inline constexpr const char* kFieldHelp[] = {"activator concentration", "inhibitor concentration"};
inline constexpr std::size_t kFieldCount = 2;

}  // namespace cuview::sim
