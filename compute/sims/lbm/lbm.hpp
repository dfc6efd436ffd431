// Lattice Boltzmann flow, D2Q9 with BGK collision, float32 arithmetic: one fused stream-and-collide
// update per cell (pull scheme: each cell gathers the populations streaming into it, then relaxes
// them towards equilibrium). Boundaries: solid cells (walls, obstacles) bounce back half-way; with
// flow=channel a velocity inlet half a cell left of the first column (a moving wall: gather) and a
// pressure outlet (density 1) in the last column (non-equilibrium extrapolation: open_edge); with
// `periodic` the x edges wrap instead. A body force along x (Guo's forcing, second order) drives a
// periodic channel. The per-cell update below is the only copy of the physics: the CUDA kernel and
// the host loop both call it. docs/physics.md says what it models, for a CFD user.
//
// Layout: populations f[i * plane + y * width + x] (one plane per direction; `plane` is at least
// width × stored rows: the host pads it, see padded_plane), stored shifted by their rest weight
// (f_i − w_i, as FluidX3D does) so that the stored number keeps its digits for the deviations that
// carry the flow: as float32 (storage=fp32) or as FP16S, binary16 of (f_i − w_i)·2^15
// (storage=fp16s: half the bytes; sims/fp16s.hpp). The functions below take the stored type T
// (float or std::uint16_t) and read and write through decode and encode<T>. `flags` one 16-bit word
// per cell: bit i (0-8) says the population arriving in direction i bounces back (its source is
// solid, or beyond the top or bottom edge), bit kSolidBit that the cell itself is solid. One load
// per cell instead of nine. A part of a y-decomposed grid (sims/slab.hpp) stores its rows between
// two ghost rows, copies of its neighbours' edge rows: `y` below is a stored row, and only the
// published values need to know where the rows lie in the global grid.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuview/host_device.hpp"
#include "sims/fp16s.hpp"

namespace cuview::sim::lbm {

struct LbmParams {
  float omega = 1.0f / 0.56f;  ///< 1/τ, τ = 3ν + ½
  float u_in = 0.08f;          ///< inlet velocity (lattice units), held by the left column (flow=channel)
  float force = 0.0f;          ///< body force along x per unit density
  int periodic = 0;            ///< x edges wrap instead of inlet/outlet
};

// D2Q9: rest, the four axes, the four diagonals.
inline constexpr int kQ = 9;
inline constexpr std::uint16_t kSolidBit = 1u << 9;
CUVIEW_HD CUVIEW_CELL_INLINE int cx(int i) {
  return i == 1 || i == 5 || i == 8 ? 1 : (i == 3 || i == 6 || i == 7 ? -1 : 0);
}
CUVIEW_HD CUVIEW_CELL_INLINE int cy(int i) {
  return i == 2 || i == 5 || i == 6 ? 1 : (i == 4 || i == 7 || i == 8 ? -1 : 0);
}
CUVIEW_HD CUVIEW_CELL_INLINE int opposite(int i) { return i == 0 ? 0 : (i <= 4 ? (i + 1) % 4 + 1 : (i - 3) % 4 + 5); }
CUVIEW_HD CUVIEW_CELL_INLINE float weight(int i) {
  return i == 0 ? 4.0f / 9.0f : (i <= 4 ? 1.0f / 9.0f : 1.0f / 36.0f);
}

/// The equilibrium population i at density rho and velocity (ux, uy), minus its rest weight:
/// w_i (ρ − 1 + ρ (3 c·u + 4.5 (c·u)² − 1.5 u²)), computed without ever forming ρ f-sized sums.
CUVIEW_HD CUVIEW_CELL_INLINE float shifted_equilibrium(int i, float drho, float rho, float ux, float uy) {
  const float cu = 3.0f * (static_cast<float>(cx(i)) * ux + static_cast<float>(cy(i)) * uy);
  const float uu = 1.5f * (ux * ux + uy * uy);
  return weight(i) * (drho + rho * (cu + 0.5f * cu * cu - uu));
}

/// Density deviation (ρ − 1) and velocity of one cell's shifted populations (f_i − w_i), the
/// force's half-step shift included. Σ w_i = 1 and Σ w_i c_i = 0, so the shifted sums are exact.
CUVIEW_HD CUVIEW_CELL_INLINE void moments(const float* ft, float force, float& drho, float& ux, float& uy) {
  drho = 0.0f, ux = 0.0f, uy = 0.0f;
  CUVIEW_UNROLL
  for (int i = 0; i < kQ; ++i) {
    drho += ft[i];
    ux += ft[i] * static_cast<float>(cx(i));
    uy += ft[i] * static_cast<float>(cy(i));
  }
  const float rho = 1.0f + drho, inverse = 1.0f / rho;  // one division, not two
  ux = (ux + 0.5f * force * rho) * inverse;
  uy = uy * inverse;
}

/// The collision of one cell's incoming (shifted) populations `ft`: BGK towards the equilibrium,
/// plus Guo's forcing, into `out`. All arithmetic on deviations from rest, which float32 resolves
/// finely. The only copy of it: lbm_cell and lbm_row_interior both end here.
CUVIEW_HD CUVIEW_CELL_INLINE void lbm_collide(const float* ft, const LbmParams& p, float* out) {
  float drho, ux, uy;
  moments(ft, p.force, drho, ux, uy);
  const float rho = 1.0f + drho;
  if (p.force == 0.0f) {  // no body force (a channel): BGK alone, without the forcing's arithmetic
    CUVIEW_UNROLL
    for (int i = 0; i < kQ; ++i) out[i] = ft[i] - p.omega * (ft[i] - shifted_equilibrium(i, drho, rho, ux, uy));
    return;
  }
  const float guo = (1.0f - 0.5f * p.omega) * p.force * rho;
  CUVIEW_UNROLL
  for (int i = 0; i < kQ; ++i) {
    const float feq = shifted_equilibrium(i, drho, rho, ux, uy);
    const float c_x = static_cast<float>(cx(i)), cu = c_x * ux + static_cast<float>(cy(i)) * uy;
    const float forcing = guo * weight(i) * (3.0f * (c_x - ux) + 9.0f * cu * c_x);
    out[i] = ft[i] - p.omega * (ft[i] - feq) + forcing;
  }
}

/// The populations streaming into fluid cell `here` = (x, y) (flags `fl`), into `ft`: each from
/// its source cell, or bounced back (the cell's own of the opposite direction) where the flags
/// say its source is solid or beyond the top or bottom edge. Beyond the left edge, a channel's
/// inlet: a wall at x = −½ moving at (u_in, 0), bounce-back with Ladd's momentum term
/// 6 w_i ρ c_i·u (ρ the cell's), so that every row takes in exactly ρ u_in a step whatever the
/// flow inside; with flow=periodic a source beyond an x edge wraps. A channel's outlet column is
/// open_edge's and gathers nothing here.
template <class T>
CUVIEW_HD CUVIEW_CELL_INLINE void gather(const T* __restrict__ f, unsigned fl, std::size_t here, int x, int y,
                                         int width, std::size_t plane, const LbmParams& p, float* ft) {
  if (fl == 0 && x > 0 && x < width - 1) {
    // A plain cell (nothing bounces, no x edge): every population streams from its neighbour, the
    // same loads as below without their branches (on the GPU most cells, and most of the time).
    const T* at = f + here;
    CUVIEW_UNROLL
    for (int i = 0; i < kQ; ++i)
      ft[i] = decode(at[static_cast<std::ptrdiff_t>(i) * static_cast<std::ptrdiff_t>(plane) -
                        static_cast<std::ptrdiff_t>(cy(i)) * width - cx(i)]);
    return;
  }
  float inlet_rho = 1.0f;
  if (x == 0 && !p.periodic) {
    CUVIEW_UNROLL
    for (int i = 0; i < kQ; ++i) inlet_rho += decode(f[i * plane + here]);
  }
  CUVIEW_UNROLL
  for (int i = 0; i < kQ; ++i) {
    if (fl & (1u << i)) {  // w_i = w_opposite: the shifted populations bounce back as they are
      ft[i] = decode(f[opposite(i) * plane + here]);
      continue;
    }
    int sx = x - cx(i);
    const int sy = y - cy(i);
    if (sx < 0 && !p.periodic) {  // c_x = 1: w_i ρ (6 c·u)
      ft[i] = decode(f[opposite(i) * plane + here]) + weight(i) * inlet_rho * (6.0f * p.u_in);
      continue;
    }
    if (sx < 0)
      sx = width - 1;
    else if (sx >= width)
      sx = 0;
    ft[i] = decode(f[i * plane + static_cast<std::size_t>(sy) * width + sx]);
  }
}

/// The incoming populations of a channel's outlet cell (x = width − 1, fluid), into `ft`, by
/// non-equilibrium extrapolation (Guo, Zheng & Shi 2002; FluidX3D's equilibrium boundaries plus
/// the neighbour's non-equilibrium part): the equilibrium at density 1 and the velocity of its
/// inner neighbour (x = width − 2, same row), plus the non-equilibrium part of the populations
/// that neighbour receives this step. The cell then collides as any other, which keeps both: the
/// outlet holds the pressure, and what reaches it leaves. A solid neighbour gives the rest state.
/// Reads only row y and the rows beside it, as any update: parts stay bit-identical.
template <class T>
CUVIEW_HD CUVIEW_CELL_INLINE void open_edge(const T* __restrict__ f, const std::uint16_t* __restrict__ flags, int y,
                                            int width, std::size_t plane, const LbmParams& p, float* ft) {
  const int inner = width - 2;
  const std::size_t at = static_cast<std::size_t>(y) * width + inner;
  const unsigned fl = flags[at];
  const bool fluid = (fl & kSolidBit) == 0;
  float drho = 0.0f, ux = 0.0f, uy = 0.0f;
  if (fluid) {
    gather(f, fl, at, inner, y, width, plane, p, ft);
    moments(ft, p.force, drho, ux, uy);
  }
  const float rho = 1.0f + drho;
  CUVIEW_UNROLL
  for (int i = 0; i < kQ; ++i) {
    const float non_equilibrium = fluid ? ft[i] - shifted_equilibrium(i, drho, rho, ux, uy) : 0.0f;
    ft[i] = shifted_equilibrium(i, 0.0f, 1.0f, ux, uy) + non_equilibrium;
  }
}

/// One update of cell (x, y) without storing it: gathers its incoming (shifted) populations from
/// `f` (gather, or open_edge at a channel's outlet), collides (lbm_collide) into `out`. Returns
/// false for a solid cell (kept at rest: it stores zeros, and `out` is left alone). Population i
/// of cell c is at [i * plane + c]: `plane` is the stored cells (width × stored rows) or more (the
/// host pads its planes).
template <class T>
CUVIEW_HD CUVIEW_CELL_INLINE bool lbm_update(const T* __restrict__ f, const std::uint16_t* __restrict__ flags, int x,
                                             int y, int width, std::size_t plane, const LbmParams& p, float* out) {
  const std::size_t here = static_cast<std::size_t>(y) * width + x;
  const unsigned fl = flags[here];
  if (fl & kSolidBit) return false;  // solid: kept at rest, so that density and velocity read 1 and 0 there
  float ft[kQ];
  if (!p.periodic && x == width - 1)
    open_edge(f, flags, y, width, plane, p, ft);
  else
    gather(f, fl, here, x, y, width, plane, p, ft);
  lbm_collide(ft, p, out);
  return true;
}

/// One update of cell (x, y) (lbm_update), stored into `fo` (zeros for a solid cell).
template <class T>
CUVIEW_HD CUVIEW_CELL_INLINE void lbm_cell(const T* __restrict__ f, T* __restrict__ fo,
                                           const std::uint16_t* __restrict__ flags, int x, int y, int width,
                                           std::size_t plane, const LbmParams& p) {
  const std::size_t here = static_cast<std::size_t>(y) * width + x;
  float out[kQ];
  const bool fluid = lbm_update(f, flags, x, y, width, plane, p, out);
  CUVIEW_UNROLL
  for (int i = 0; i < kQ; ++i) fo[i * plane + here] = encode<T>(fluid ? out[i] : 0.0f);
}

#if !defined(__CUDACC__)
/// lbm_cell for every cell of row y but the first and last column (which lbm_cell does: the
/// inlet, outlet or wrap), written for the host compiler to vectorize: away from the x edges
/// every source is affine in x, and a bounced population or a solid cell is a select rather than
/// a branch. The same arithmetic as lbm_cell, so the same bits. Reads rows y − 1 and y + 1, which
/// the host loop always stores (edge or ghost rows).
template <class T>
[[gnu::always_inline]] inline void lbm_row_interior(const T* __restrict__ f, T* __restrict__ fo,
                                                    const std::uint16_t* __restrict__ flags, int y, int width,
                                                    std::size_t plane, const LbmParams& p) {
  const std::ptrdiff_t row = static_cast<std::ptrdiff_t>(y) * width;
  // Per direction, the row its populations stream from and the row they bounce back from: then
  // every load of the loop below is [x] of one of them.
  const T* streamed[kQ];
  const T* bounced[kQ];
  T* out_row[kQ];
  CUVIEW_UNROLL
  for (int i = 0; i < kQ; ++i) {
    streamed[i] = f + i * plane + row - static_cast<std::ptrdiff_t>(cy(i)) * width - cx(i);
    bounced[i] = f + opposite(i) * plane + row;
    out_row[i] = fo + i * plane + row;
  }
  const std::uint16_t* fl_row = flags + row;
  const LbmParams q = p;  // a copy: stores through fo cannot change it
  // Most rows have no wall, obstacle or bounce in them: those need neither the bounced loads nor
  // the selects (the same arithmetic: a select of an unset flag takes the streamed value).
  unsigned any = 0;
  for (int x = 1; x < width - 1; ++x) any |= fl_row[x];
  if (any == 0) {
#pragma GCC ivdep
    for (int x = 1; x < width - 1; ++x) {
      float ft[kQ];
      CUVIEW_UNROLL
      for (int i = 0; i < kQ; ++i) ft[i] = decode(streamed[i][x]);
      float out[kQ];
      lbm_collide(ft, q, out);
      CUVIEW_UNROLL
      for (int i = 0; i < kQ; ++i) out_row[i][x] = encode<T>(out[i]);
    }
    return;
  }
  // No iteration reads what another writes (f and fo are distinct arrays); the row pointers above
  // stay as they are.
#pragma GCC ivdep
  for (int x = 1; x < width - 1; ++x) {
    const std::uint32_t fl = fl_row[x];
    float ft[kQ];
    CUVIEW_UNROLL
    for (int i = 0; i < kQ; ++i)
      ft[i] = select_bits(0u - ((fl >> i) & 1u), decode(bounced[i][x]), decode(streamed[i][x]));
    float out[kQ];
    lbm_collide(ft, q, out);
    const std::uint32_t solid = 0u - ((fl >> 9) & 1u);  // kSolidBit
    CUVIEW_UNROLL
    for (int i = 0; i < kQ; ++i) out_row[i][x] = encode<T>(select_bits(solid, 0.0f, out[i]));
  }
}

#endif

/// Density and velocity of a cell whose stored populations are `ft` (`fluid`), or of a solid cell
/// (1 and 0): what is published, from the populations in memory or from those a step just made
/// in registers (the same bits).
CUVIEW_HD CUVIEW_CELL_INLINE void stored_moments(bool fluid, const float* ft, float force, float& rho, float& ux,
                                                 float& uy) {
  if (!fluid) {
    rho = 1.0f, ux = 0.0f, uy = 0.0f;
    return;
  }
  float drho;
  moments(ft, force, drho, ux, uy);
  rho = 1.0f + drho;
}

/// Density and velocity of cell `at` from stored populations (solid cells: 1 and 0).
template <class T>
CUVIEW_HD CUVIEW_CELL_INLINE void cell_moments(const T* __restrict__ f, const std::uint16_t* __restrict__ flags,
                                               std::size_t at, std::size_t plane, float force, float& rho, float& ux,
                                               float& uy) {
  const bool fluid = (flags[at] & kSolidBit) == 0;
  float ft[kQ];
  if (fluid) {
    CUVIEW_UNROLL
    for (int i = 0; i < kQ; ++i) ft[i] = decode(f[i * plane + at]);
  }
  stored_moments(fluid, ft, force, rho, ux, uy);
}

/// The speed of velocity (ux, uy), as published.
CUVIEW_HD CUVIEW_CELL_INLINE float speed_of(float ux, float uy) { return sqrtf(ux * ux + uy * uy); }

/// The vorticity ∂uy/∂x − ∂ux/∂y from the velocities left, right, down and up of a cell (central
/// differences over dx and dy cells; 0 along an axis of a single cell), as published. dx and dy
/// are 1 or 2 cells, so the product by the reciprocal is the quotient, bit for bit, without a
/// division.
CUVIEW_HD CUVIEW_CELL_INLINE float vorticity_of(float uyl, float uyr, float uxd, float uxu, float dx, float dy) {
  return (dx > 0 ? (uyr - uyl) * (dx > 1 ? 0.5f : 1.0f) : 0.0f) -
         (dy > 0 ? (uxu - uxd) * (dy > 1 ? 0.5f : 1.0f) : 0.0f);
}

/// The published values of cell (x, y): velocity, speed, vorticity (∂uy/∂x − ∂ux/∂y, central
/// differences, one-sided at the edges) and density. `y` is a stored row (planes `plane` floats
/// apart, as lbm_cell) and `global_y` the same row in the grid of `global_height` rows: the
/// differences turn one-sided at the grid's top and bottom edges, while the rows beyond a part's
/// own are its ghost rows.
struct Observed {
  float ux, uy, speed, vorticity, rho;
};
template <class T>
CUVIEW_HD CUVIEW_CELL_INLINE Observed observe_cell(const T* __restrict__ f, const std::uint16_t* __restrict__ flags,
                                                   int x, int y, int width, std::size_t plane, int global_y,
                                                   int global_height, float force) {
  const std::size_t at = static_cast<std::size_t>(y) * width + x;
  Observed o{};
  cell_moments(f, flags, at, plane, force, o.rho, o.ux, o.uy);
  o.speed = speed_of(o.ux, o.uy);
  const int xl = x > 0 ? x - 1 : x, xr = x < width - 1 ? x + 1 : x;
  const int yd = global_y > 0 ? y - 1 : y, yu = global_y < global_height - 1 ? y + 1 : y;
  float r, uxl, uyl, uxr, uyr, uxd, uyd, uxu, uyu;
  cell_moments(f, flags, static_cast<std::size_t>(y) * width + xl, plane, force, r, uxl, uyl);
  cell_moments(f, flags, static_cast<std::size_t>(y) * width + xr, plane, force, r, uxr, uyr);
  cell_moments(f, flags, static_cast<std::size_t>(yd) * width + x, plane, force, r, uxd, uyd);
  cell_moments(f, flags, static_cast<std::size_t>(yu) * width + x, plane, force, r, uxu, uyu);
  const float dx = static_cast<float>(xr - xl), dy = static_cast<float>(yu - yd);
  o.vorticity = vorticity_of(uyl, uyr, uxd, uxu, dx, dy);
  return o;
}

/// Writes the published fields of stored cell (x, y) (observe_cell's arguments) at cell `out` of
/// the published frame: velocity (2 floats), speed, vorticity and density; returns what it wrote.
template <class T>
CUVIEW_HD CUVIEW_CELL_INLINE Observed lbm_observe(const T* __restrict__ f, const std::uint16_t* __restrict__ flags,
                                                  int x, int y, int width, std::size_t plane, int global_y,
                                                  int global_height, float force, std::size_t out, float* velocity,
                                                  float* speed, float* vorticity, float* density) {
  const Observed o = observe_cell(f, flags, x, y, width, plane, global_y, global_height, force);
  velocity[2 * out] = o.ux;
  velocity[2 * out + 1] = o.uy;
  speed[out] = o.speed;
  vorticity[out] = o.vorticity;
  density[out] = o.rho;
  return o;
}

}  // namespace cuview::sim::lbm
