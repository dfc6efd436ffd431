// Lattice Boltzmann flow in 3-D: D3Q19, BGK collision, float32, one fused stream-and-collide update
// per cell (pull: each cell gathers the populations streaming into it from two arrays, A → B, then
// relaxes them). A duct along x: solid walls at the grid's y and z faces, an obstacle (a sphere)
// and whatever is drawn; with flow=channel a velocity inlet (u_in, 0, 0) half a cell before the
// x = 0 face (a moving wall: gather) and a pressure outlet (density 1) in the last layer along x
// (non-equilibrium extrapolation: open_face); with `periodic` the x faces wrap, driven by a body
// force along x. The per-cell update below is the only copy of the physics: the CUDA kernel and
// the host loops both call it, both compiled without contraction (the collision's multiply-adds
// are spelt out: fused) and with subnormals flushed: the same bits. docs/physics.md says what it
// models, for a CFD user.
//
// Layout: populations f[i * plane + n], n = x + width·(y + height·lz), one plane per direction
// (structure of arrays: a warp's 32 cells read 128 contiguous bytes per direction), stored shifted
// by their rest weight (f_i − w_i, as FluidX3D does) so that the stored number keeps its digits for
// the deviations that carry the flow: as float32 (storage=fp32) or as binary16 of (f_i − w_i)·2^15
// (storage=fp16s, FluidX3D's FP16S: half the bytes; the arithmetic stays float32). Two ways to lay
// a step over memory, the same numbers: A → B (Pulled: the host loop; each cell's outgoing
// populations at the cell, in a second array) and in place (Esoteric: the CUDA kernel; Lehmann's
// Esoteric Pull, one array, each cell reading and writing the same 19 slots, its own and its
// neighbours', which swap roles every step). Both are an accessor of the same gather below. `flags`: one byte per cell, kSolid (the cell is solid) and kNear
// (a population it pulls comes from a solid cell: only those cells read their neighbours' flags).
// A part of a z-decomposed grid (sims/slab.hpp) stores its layers between two ghost layers, copies
// of its neighbours' edge layers: `lz` is a stored layer, 0 … layers + 1.
//
// Directions (FluidX3D's order: 2k−1 and 2k opposite): 0 rest; 1-6 the axes ±x, ±y, ±z; 7-18 the
// edges (+x+y, −x−y), (+x+z, −x−z), (+y+z, −y−z), (+x−y, −x+y), (+x−z, −x+z), (+y−z, −y+z).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cuview/host_device.hpp"
#include "sims/fp16s.hpp"

// Unrolls a loop over the 19 directions fully, on both compilers, so that the direction's
// constants fold and the populations stay in registers.
#if defined(__CUDA_ARCH__)
#define CUVIEW_UNROLL19 _Pragma("unroll")
#elif defined(__CUDACC__)  // the host half of a .cu file: nvcc's front end knows no GCC pragma
#define CUVIEW_UNROLL19
#elif defined(__GNUC__) && !defined(__clang__)
#define CUVIEW_UNROLL19 _Pragma("GCC unroll 19")
#else
#define CUVIEW_UNROLL19
#endif

namespace cuview::sim::lbm3d {

struct Params {
  float omega = 1.0f / 0.56f;  ///< 1/τ, τ = 3ν + ½
  float u_in = 0.05f;          ///< inlet velocity (lattice units), held by the x = 0 face (flow=channel)
  float force = 0.0f;          ///< body force along x per unit density
  int periodic = 0;            ///< x faces wrap instead of inlet/outlet
};

inline constexpr int kQ = 19;
inline constexpr std::uint8_t kSolid = 1, kNear = 2;

namespace detail {
constexpr unsigned bits(int a, int b, int c, int d, int e) { return 1u << a | 1u << b | 1u << c | 1u << d | 1u << e; }
inline constexpr unsigned kXPos = bits(1, 7, 9, 13, 15), kXNeg = bits(2, 8, 10, 14, 16);
inline constexpr unsigned kYPos = bits(3, 7, 11, 14, 17), kYNeg = bits(4, 8, 12, 13, 18);
inline constexpr unsigned kZPos = bits(5, 9, 11, 16, 18), kZNeg = bits(6, 10, 12, 15, 17);
}  // namespace detail
CUVIEW_HD constexpr int cx(int i) { return int(detail::kXPos >> i & 1u) - int(detail::kXNeg >> i & 1u); }
CUVIEW_HD constexpr int cy(int i) { return int(detail::kYPos >> i & 1u) - int(detail::kYNeg >> i & 1u); }
CUVIEW_HD constexpr int cz(int i) { return int(detail::kZPos >> i & 1u) - int(detail::kZNeg >> i & 1u); }
CUVIEW_HD constexpr int opposite(int i) { return i == 0 ? 0 : ((i & 1) ? i + 1 : i - 1); }
CUVIEW_HD constexpr float weight(int i) { return i == 0 ? 1.0f / 3.0f : (i < 7 ? 1.0f / 18.0f : 1.0f / 36.0f); }

/// c_i · u, written without multiplying by the direction's constants: no compiler may fold a
/// product by 0 or ±1 differently from another (x · 0 is not 0 to IEEE), so every build rounds alike.
CUVIEW_HD CUVIEW_CELL_INLINE float c_dot(int i, float ux, float uy, float uz) {
  switch (i) {
    case 1: return ux;
    case 2: return -ux;
    case 3: return uy;
    case 4: return -uy;
    case 5: return uz;
    case 6: return -uz;
    case 7: return ux + uy;
    case 8: return -(ux + uy);
    case 9: return ux + uz;
    case 10: return -(ux + uz);
    case 11: return uy + uz;
    case 12: return -(uy + uz);
    case 13: return ux - uy;
    case 14: return -(ux - uy);
    case 15: return ux - uz;
    case 16: return -(ux - uz);
    case 17: return uy - uz;
    case 18: return -(uy - uz);
    default: return 0.0f;
  }
}

/// The equilibrium population i at density rho = 1 + drho and velocity u, minus its rest weight:
/// w_i (ρ − 1 + ρ (3 c·u + 4.5 (c·u)² − 1.5 u²)).
CUVIEW_HD CUVIEW_CELL_INLINE float shifted_equilibrium(int i, float drho, float rho, float ux, float uy, float uz) {
  const float cu = 3.0f * c_dot(i, ux, uy, uz);
  const float uu = 1.5f * ((ux * ux + uy * uy) + uz * uz);
  return weight(i) * (drho + rho * (cu + 0.5f * cu * cu - uu));
}

/// The sums over one cell's shifted populations: Σ f_i (ρ − 1, as Σ w_i = 1) and the momentum
/// Σ f_i c_i (Σ w_i c_i = 0: the shifted sums are exact).
CUVIEW_HD CUVIEW_CELL_INLINE void population_sums(const float* ft, float& drho, float& jx, float& jy, float& jz) {
  drho = 0.0f;
  CUVIEW_UNROLL19
  for (int i = 0; i < kQ; ++i) drho += ft[i];
  jx = (((ft[1] - ft[2]) + (ft[7] - ft[8])) + ((ft[9] - ft[10]) + (ft[13] - ft[14]))) + (ft[15] - ft[16]);
  jy = (((ft[3] - ft[4]) + (ft[7] - ft[8])) + ((ft[11] - ft[12]) + (ft[14] - ft[13]))) + (ft[17] - ft[18]);
  jz = (((ft[5] - ft[6]) + (ft[9] - ft[10])) + ((ft[11] - ft[12]) + (ft[16] - ft[15]))) + (ft[18] - ft[17]);
}
/// The velocity from those sums, the force's half-step shift included.
CUVIEW_HD CUVIEW_CELL_INLINE void velocity_of(float drho, float jx, float jy, float jz, float force, float& ux,
                                              float& uy, float& uz) {
  const float rho = 1.0f + drho, inverse = 1.0f / rho;  // one division, not three
  ux = (jx + 0.5f * force * rho) * inverse;
  uy = jy * inverse;
  uz = jz * inverse;
}
/// Density deviation (ρ − 1) and velocity of one cell's shifted populations.
CUVIEW_HD CUVIEW_CELL_INLINE void moments(const float* ft, float force, float& drho, float& ux, float& uy, float& uz) {
  float jx, jy, jz;
  population_sums(ft, drho, jx, jy, jz);
  velocity_of(drho, jx, jy, jz, force, ux, uy, uz);
}

/// The collision of one cell's incoming (shifted) populations, in place: BGK,
/// f ← (1 − ω) f + ω f_eq, plus Guo's forcing (force along x). A direction i and its opposite
/// share the even part of their equilibrium: ω f_eq = S ± A, S = ω w (δρ + ρ (4.5 (c·u)² − 1.5 u²)),
/// A = 3 ω w ρ c·u — each operation written out, the multiply-adds `fused` (rounded once, on both
/// backends): ~100 operations a cell where the equilibrium of each direction on its own took ~250
/// (FP16S's in-place kernel is bound by instructions, not bytes). kRaw: the populations are FP16S's values
/// as stored (decode_raw: f · 2^15); the sums are scaled back and the equilibrium's factors
/// scaled up, by a power of two — exact: the same bits as decoding each population first.
/// Returns nothing else: the moments are recomputed where they are published.
template <bool kRaw = false>
CUVIEW_HD CUVIEW_CELL_INLINE void collide(float* ft, const Params& p) {
  float drho, jx, jy, jz, ux, uy, uz;
  population_sums(ft, drho, jx, jy, jz);
  if constexpr (kRaw) {
    drho *= kFp16sInverseUnit, jx *= kFp16sInverseUnit, jy *= kFp16sInverseUnit, jz *= kFp16sInverseUnit;
  }
  velocity_of(drho, jx, jy, jz, p.force, ux, uy, uz);
  const float rho = 1.0f + drho;
  const float uu = 1.5f * fused(uz, uz, fused(uy, uy, ux * ux));
  const float keep = 1.0f - p.omega;
  // ω w for the rest, axis and diagonal directions, in the populations' unit.
  float o0 = p.omega * weight(0), o1 = p.omega * weight(1), o2 = p.omega * weight(7);
  if constexpr (kRaw) o0 *= kFp16sUnit, o1 *= kFp16sUnit, o2 *= kFp16sUnit;
  const float r1 = o1 * rho, d1 = o1 * drho, a1 = 3.0f * r1;
  const float r2 = o2 * rho, d2 = o2 * drho, a2 = 3.0f * r2;
  ft[0] = fused(ft[0], keep, fused(o0 * rho, -uu, o0 * drho));
  CUVIEW_UNROLL19
  for (int i = 1; i < kQ; i += 2) {  // i and its opposite i + 1 (c·u of the opposite: −c)
    const bool axis = i < 7;
    const float c = c_dot(i, ux, uy, uz);
    const float even = fused(axis ? r1 : r2, fused(4.5f * c, c, -uu), axis ? d1 : d2);
    const float odd = (axis ? a1 : a2) * c;
    ft[i] = fused(ft[i], keep, even + odd);
    ft[i + 1] = fused(ft[i + 1], keep, even - odd);
  }
  if (p.force == 0.0f) return;  // no body force (a channel): BGK alone
  // Guo's term w_i (1 − ω/2) F ρ (3 (c_x − u_x) + 9 (c·u) c_x), c_x one of 1, 0, −1 written out (see c_dot).
  float guo = (1.0f - 0.5f * p.omega) * p.force * rho;
  if constexpr (kRaw) guo *= kFp16sUnit;
  const float g1 = guo * weight(1), g2 = guo * weight(7);
  const float plus = 3.0f * (1.0f - ux), minus = 3.0f * (-1.0f - ux), across = -3.0f * ux;
  ft[0] = fused(guo * weight(0), across, ft[0]);
  CUVIEW_UNROLL19
  for (int i = 1; i < kQ; i += 2) {
    const float g = i < 7 ? g1 : g2;
    if (cx(i) == 0) {
      ft[i] = fused(g, across, ft[i]);
      ft[i + 1] = fused(g, across, ft[i + 1]);
    } else {  // c_x = 1 for i, −1 for its opposite, whose c·u is −c: −9 (−c) = 9 c
      const float nine = 9.0f * c_dot(i, ux, uy, uz);
      ft[i] = fused(g, plus + nine, ft[i]);
      ft[i + 1] = fused(g, minus + nine, ft[i + 1]);
    }
  }
}

/// The cells a simulation stores: a part owning global layers [first_layer, first_layer + layers)
/// of a grid width × height × global_depth, between two ghost layers (the whole grid is
/// {w, h, 0, d, d}). Stored layer lz is global layer first_layer − 1 + lz.
struct Window {
  int width = 0, height = 0, first_layer = 0, layers = 0, global_depth = 0;
  [[nodiscard]] CUVIEW_HD int stored_layers() const { return layers + 2; }
  [[nodiscard]] CUVIEW_HD std::size_t layer_cells() const { return static_cast<std::size_t>(width) * height; }
  [[nodiscard]] CUVIEW_HD std::size_t cells() const { return layer_cells() * stored_layers(); }
  [[nodiscard]] CUVIEW_HD std::size_t owned_cells() const { return layer_cells() * layers; }
  [[nodiscard]] CUVIEW_HD int global_layer(int lz) const { return first_layer - 1 + lz; }
  [[nodiscard]] CUVIEW_HD std::size_t at(int x, int y, int lz) const {
    return static_cast<std::size_t>(x) + static_cast<std::size_t>(width) * (y + static_cast<std::size_t>(height) * lz);
  }
};

/// A frame of every k-th cell (FieldTarget::every) of a window's owned layers: the packed grid's
/// cells per axis; packed cell (i, j, l) is owned cell (i·k, j·k, l·k), at (l·height + j)·width + i.
/// every 1: the owned layers themselves.
struct Packed {
  int every = 1, width = 0, height = 0, layers = 0;
  Packed() = default;
  CUVIEW_HD Packed(const Window& g, unsigned k)
      : every(k > 1 ? static_cast<int>(k) : 1),
        width((g.width + every - 1) / every),
        height((g.height + every - 1) / every),
        layers((g.layers + every - 1) / every) {}
  /// Where owned cell (x, y, z) goes in the frame; false when it is not one of the packed cells.
  CUVIEW_HD bool place(int x, int y, int z, std::size_t& at) const {
    if (every == 1) {
      at = static_cast<std::size_t>(x) + static_cast<std::size_t>(width) * (y + static_cast<std::size_t>(height) * z);
      return true;
    }
    if (x % every != 0 || y % every != 0 || z % every != 0) return false;
    at = static_cast<std::size_t>(x / every) +
         static_cast<std::size_t>(width) * (y / every + static_cast<std::size_t>(height) * (z / every));
    return true;
  }
};

/// Where population i of cell (x, y, lz) streams from: its source cell, or "inlet" (beyond an x
/// face of a channel: `cell` is then the cell the row-major index gives, x = −1 or width, the
/// slot the in-place layout keeps there). Beyond an x face of a periodic duct it wraps; a
/// channel's outlet cells gather nothing (open_face). y and lz are never beyond the stored cells
/// for a fluid cell: the grid's y and z faces are solid walls.
struct Source {
  std::size_t cell;
  bool inlet;
};
CUVIEW_HD CUVIEW_CELL_INLINE Source source_of(int i, int x, int y, int lz, const Window& g, int periodic) {
  int sx = x - cx(i);
  bool beyond = false;
  if (sx < 0 || sx >= g.width) {
    if (periodic)
      sx = sx < 0 ? g.width - 1 : 0;
    else
      beyond = true;
  }
  return {g.at(sx, y - cy(i), lz - cz(i)), beyond};
}

/// A step's view of the populations, A → B: the incoming population i of a cell is its source's
/// outgoing one, at the source; a bounced one is the cell's own outgoing opposite one.
template <class T>
struct Pulled {
  using Stored = T;  ///< the storage's type (fp16s.hpp)
  const T* __restrict__ f;
  std::size_t plane;
  CUVIEW_HD CUVIEW_CELL_INLINE float in(int i, std::size_t, std::size_t source) const {
    return decode(f[i * plane + source]);
  }
  CUVIEW_HD CUVIEW_CELL_INLINE float back(int i, std::size_t here, std::size_t) const {
    return decode(f[opposite(i) * plane + here]);
  }
};

/// A step's view in place (Esoteric Pull; Lehmann, Computation 10, 92 (2022)), at step parity
/// `t`: the incoming population i of a cell lies in one of the two slots of its direction pair
/// (2k−1, 2k): at the cell for odd i, at its source cell for even i, in the pair's first or
/// second plane as i and t say. The other slot of that pair, at the same cell, holds the cell's own
/// outgoing population opposite to i (a bounce reads it), and a collided population i is
/// written where the incoming opposite one was read: each cell reads and writes the same 19
/// slots, and no two cells share one, so every cell can step at once in one array.
template <class T>
struct Esoteric {
  using Stored = T;  ///< the storage's type (fp16s.hpp)
  T* f;
  std::size_t plane;
  int t;  ///< the step's parity: 0 or 1
  /// The plane of incoming population i's slot at parity t, or of the other slot of its pair (`swap`).
  CUVIEW_HD static constexpr int slot_at(int i, int t, bool swap) {
    if (i == 0) return 0;
    const int first = (i & 1) ? i : i - 1;
    return ((((i & 1) != 0) == (t != 0)) != swap) ? first : first + 1;
  }
  CUVIEW_HD CUVIEW_CELL_INLINE int slot(int i, bool swap) const { return slot_at(i, t, swap); }
  CUVIEW_HD CUVIEW_CELL_INLINE std::size_t in_at(int i, std::size_t here, std::size_t source) const {
    return slot(i, false) * plane + ((i & 1) ? here : source);
  }
  CUVIEW_HD CUVIEW_CELL_INLINE std::size_t back_at(int i, std::size_t here, std::size_t source) const {
    return slot(i, true) * plane + ((i & 1) ? here : source);
  }
  CUVIEW_HD CUVIEW_CELL_INLINE float in(int i, std::size_t here, std::size_t source) const {
    return decode(f[in_at(i, here, source)]);
  }
  CUVIEW_HD CUVIEW_CELL_INLINE float back(int i, std::size_t here, std::size_t source) const {
    return decode(f[back_at(i, here, source)]);
  }
};

/// Where the populations of stored cell (x, y, lz) left by the last step lie: outgoing population
/// i is the one a bounce of the opposite direction reads (its source: the cell beyond it along i).
template <class Pops>
CUVIEW_HD CUVIEW_CELL_INLINE float outgoing(const Pops& f, int i, int x, int y, int lz, const Window& g,
                                            int periodic) {
  return f.back(opposite(i), g.at(x, y, lz), source_of(opposite(i), x, y, lz, g, periodic).cell);
}

/// The populations streaming into fluid cell (x, y, lz) (flags `fl`), into `ft`: each from its
/// source cell, or bounced back (the cell's own outgoing population of the opposite direction)
/// where the source is solid. From beyond the inlet face: a wall at x = −½ moving at
/// (u_in, 0, 0), bounce-back with Ladd's momentum term 6 w_i ρ c_i·u (ρ the cell's), so that
/// every cell of the face takes in exactly ρ u_in a step whatever the flow inside.
template <class Pops>
CUVIEW_HD CUVIEW_CELL_INLINE void gather(const Pops& f, const std::uint8_t* __restrict__ flags, unsigned fl, int x,
                                         int y, int lz, const Window& g, const Params& p, float* ft) {
  const std::size_t here = g.at(x, y, lz);
  float inlet_rho = 1.0f;
  if (x == 0 && !p.periodic) {
    CUVIEW_UNROLL19
    for (int i = 0; i < kQ; ++i) inlet_rho += outgoing(f, i, x, y, lz, g, p.periodic);
  }
  CUVIEW_UNROLL19
  for (int i = 0; i < kQ; ++i) {
    const Source s = source_of(i, x, y, lz, g, p.periodic);
    if (s.inlet)  // c_x = 1: w_i ρ (6 c·u)
      ft[i] = f.back(i, here, s.cell) + weight(i) * inlet_rho * (6.0f * p.u_in);
    else if ((fl & kNear) && (flags[s.cell] & kSolid))
      ft[i] = f.back(i, here, s.cell);
    else
      ft[i] = f.in(i, here, s.cell);
  }
}

/// The incoming populations of a channel's outlet cell (x = width − 1, fluid), into `ft`, by
/// non-equilibrium extrapolation (Guo, Zheng & Shi 2002; FluidX3D's equilibrium boundaries plus
/// the neighbour's non-equilibrium part): the equilibrium at density 1 and the velocity of its
/// inner neighbour (x = width − 2, same y and layer), plus the non-equilibrium part of the
/// populations that neighbour receives this step. The cell then collides as any other, which
/// keeps both: the outlet holds the pressure, and what reaches it leaves. A solid neighbour gives
/// the rest state. Reads only the layers beside lz, as any update: parts stay bit-identical.
template <class Pops>
CUVIEW_HD inline void open_face(const Pops& f, const std::uint8_t* __restrict__ flags, int y, int lz, const Window& g,
                                const Params& p, float* ft) {
  const int inner = g.width - 2;
  const unsigned fl = flags[g.at(inner, y, lz)];
  const bool fluid = (fl & kSolid) == 0;
  float drho = 0.0f, ux = 0.0f, uy = 0.0f, uz = 0.0f;
  if (fluid) {
    gather(f, flags, fl, inner, y, lz, g, p, ft);
    moments(ft, p.force, drho, ux, uy, uz);
  }
  const float rho = 1.0f + drho;
  CUVIEW_UNROLL19
  for (int i = 0; i < kQ; ++i) {
    const float non_equilibrium = fluid ? ft[i] - shifted_equilibrium(i, drho, rho, ux, uy, uz) : 0.0f;
    ft[i] = shifted_equilibrium(i, 0.0f, 1.0f, ux, uy, uz) + non_equilibrium;
  }
}

/// The incoming populations of fluid cell (x, y, lz): gather, or open_face at a channel's outlet.
/// A channel's x-face cell takes them in as the storage holds them (in FP16S, rounded to it): the
/// CUDA kernel gathers them before the step into an array of that storage and steps the face
/// cells with the rest, loading them from there (lbm3d_cuda.cu face_kernel).
template <class Pops>
CUVIEW_HD inline void incoming(const Pops& f, const std::uint8_t* __restrict__ flags, unsigned fl, int x, int y,
                               int lz, const Window& g, const Params& p, float* ft) {
  if (!p.periodic && x == g.width - 1)
    open_face(f, flags, y, lz, g, p, ft);
  else
    gather(f, flags, fl, x, y, lz, g, p, ft);
  if (!p.periodic && (x == 0 || x == g.width - 1)) {
    CUVIEW_UNROLL19
    for (int i = 0; i < kQ; ++i) ft[i] = stored<typename Pops::Stored>(ft[i]);
  }
}

/// One update of cell (x, y, lz) without storing it: its incoming populations, collided, into
/// `ft`. Returns false for a solid cell (`ft` is left alone).
template <class Pops>
CUVIEW_HD inline bool cell_collided(const Pops& f, const std::uint8_t* __restrict__ flags, int x, int y, int lz,
                                    const Window& g, const Params& p, float* ft) {
  const unsigned fl = flags[g.at(x, y, lz)];
  if (fl & kSolid) return false;
  incoming(f, flags, fl, x, y, lz, g, p, ft);
  collide(ft, p);
  return true;
}

/// One A → B update of cell (x, y, lz) (cell_collided), stored into `fo` (zeros for a solid
/// cell). `plane`: populations between two directions.
template <class T>
CUVIEW_HD inline void cell_update(const T* __restrict__ f, T* __restrict__ fo, const std::uint8_t* __restrict__ flags,
                                  int x, int y, int lz, const Window& g, std::size_t plane, const Params& p) {
  const std::size_t here = g.at(x, y, lz);
  float ft[kQ];
  const bool fluid = cell_collided(Pulled<T>{f, plane}, flags, x, y, lz, g, p, ft);
  CUVIEW_UNROLL19
  for (int i = 0; i < kQ; ++i) fo[i * plane + here] = encode<T>(fluid ? ft[i] : 0.0f);
}

/// Collided populations `ft` of cell (x, y, lz) into their slots in place (Esoteric): each where
/// the incoming opposite one was read.
template <class T>
CUVIEW_HD CUVIEW_CELL_INLINE void store_in_place(const Esoteric<T>& f, int x, int y, int lz, const Window& g,
                                                 int periodic, const float* ft) {
  const std::size_t here = g.at(x, y, lz);
  CUVIEW_UNROLL19
  for (int i = 0; i < kQ; ++i)
    f.f[f.in_at(opposite(i), here, source_of(opposite(i), x, y, lz, g, periodic).cell)] = encode<T>(ft[i]);
}

/// The flags of stored cell (x, y, lz) of `g` from the obstacle mask `solid` of its stored cells:
/// kSolid, and kNear where a population the cell pulls comes from a solid cell. Ghost layers only
/// say whether they are solid (nothing updates them).
CUVIEW_HD inline std::uint8_t flags_of(const std::uint8_t* solid, const Window& g, int x, int y, int lz,
                                       int periodic) {
  const std::size_t here = g.at(x, y, lz);
  if (solid[here]) return kSolid;
  if (lz == 0 || lz == g.layers + 1 || y == 0 || y == g.height - 1) return 0;
  if (!periodic && x == g.width - 1) return 0;  // open_face gathers at the neighbour, with its flags
  for (int i = 1; i < kQ; ++i) {
    const Source s = source_of(i, x, y, lz, g, periodic);
    if (!s.inlet && solid[s.cell]) return kNear;
  }
  return 0;
}

/// Density and velocity of a cell whose stored populations are `ft` (`fluid`), or of a solid cell
/// (1 and 0): what is published, from the populations in memory or from those a step just made
/// in registers (the same bits).
CUVIEW_HD inline void stored_moments(bool fluid, const float* ft, float force, float& rho, float& ux, float& uy,
                                     float& uz) {
  if (!fluid) {
    rho = 1.0f, ux = 0.0f, uy = 0.0f, uz = 0.0f;
    return;
  }
  float drho;
  moments(ft, force, drho, ux, uy, uz);
  rho = 1.0f + drho;
}

/// Density and velocity of stored cell (x, y, lz) from the populations the last step left
/// (solid cells: 1 and 0).
template <class Pops>
CUVIEW_HD inline void cell_moments(const Pops& f, const std::uint8_t* __restrict__ flags, int x, int y, int lz,
                                   const Window& g, int periodic, float force, float& rho, float& ux, float& uy,
                                   float& uz) {
  const bool fluid = (flags[g.at(x, y, lz)] & kSolid) == 0;
  float ft[kQ];
  if (fluid) {
    CUVIEW_UNROLL19
    for (int i = 0; i < kQ; ++i) ft[i] = outgoing(f, i, x, y, lz, g, periodic);
  }
  stored_moments(fluid, ft, force, rho, ux, uy, uz);
}

/// The speed of velocity u, as published.
CUVIEW_HD inline float speed_of(float ux, float uy, float uz) { return sqrtf((ux * ux + uy * uy) + uz * uz); }

/// The vorticity magnitude |∇ × u| from the velocities on either side of a cell along x (a, b),
/// y and z, over dx, dy and dz cells (central differences; 0 along an axis of a single cell), as
/// published.
CUVIEW_HD inline float vorticity_of(const float* ax, const float* bx, const float* ay, const float* by, const float* az,
                                    const float* bz, float dx, float dy, float dz) {
  // ∂u_c/∂axis for component c: 0 where the axis has a single cell. h is 1 or 2 cells, so the
  // product by its reciprocal is the quotient, bit for bit, without a division (a sequence of
  // instructions on a GPU, six a cell in the vorticity kernel).
  auto d = [](const float* a, const float* b, int c, float h) {
    return h > 0 ? (b[c] - a[c]) * (h > 1 ? 0.5f : 1.0f) : 0.0f;
  };
  const float wx = d(ay, by, 2, dy) - d(az, bz, 1, dz);
  const float wy = d(az, bz, 0, dz) - d(ax, bx, 2, dx);
  const float wz = d(ax, bx, 1, dx) - d(ay, by, 0, dy);
  return sqrtf((wx * wx + wy * wy) + wz * wz);
}

/// The vorticity magnitude of stored cell (x, y, lz), `velocity(x, y, lz, v)` giving its
/// neighbours' velocities: central differences, one-sided at the grid's faces (a part's
/// neighbours beyond its own layers are in its ghost layers), as published.
template <class Velocity>
CUVIEW_HD inline float vorticity_at(int x, int y, int lz, const Window& g, const Velocity& velocity) {
  const int z = g.global_layer(lz);
  const int xl = x > 0 ? x - 1 : x, xr = x < g.width - 1 ? x + 1 : x;
  const int yd = y > 0 ? y - 1 : y, yu = y < g.height - 1 ? y + 1 : y;
  const int zb = z > 0 ? lz - 1 : lz, zf = z < g.global_depth - 1 ? lz + 1 : lz;
  float ax[3], bx[3], ay[3], by[3], az[3], bz[3];
  velocity(xl, y, lz, ax);
  velocity(xr, y, lz, bx);
  velocity(x, yd, lz, ay);
  velocity(x, yu, lz, by);
  velocity(x, y, zb, az);
  velocity(x, y, zf, bz);
  return vorticity_of(ax, bx, ay, by, az, bz, static_cast<float>(xr - xl), static_cast<float>(yu - yd),
                      static_cast<float>(zf - zb));
}

/// The published values of one cell: velocity, speed, vorticity magnitude |∇ × u| (central
/// differences, one-sided at the grid's faces; a part's neighbours beyond its own layers are its
/// ghost layers, read through `ghost(x, y, lz, u)`; elsewhere from the populations) and density.
struct Observed {
  float ux, uy, uz, speed, vorticity, rho;
};
template <class Pops, class Ghost>
CUVIEW_HD inline Observed observe_cell(const Pops& f, const std::uint8_t* __restrict__ flags, int x, int y, int lz,
                                       const Window& g, int periodic, float force, const Ghost& ghost) {
  Observed o{};
  cell_moments(f, flags, x, y, lz, g, periodic, force, o.rho, o.ux, o.uy, o.uz);
  o.speed = speed_of(o.ux, o.uy, o.uz);
  o.vorticity = vorticity_at(x, y, lz, g, [&](int ux_, int uy_, int ul, float* v) {
    if (ul < 1 || ul > g.layers) {
      ghost(ux_, uy_, ul, v);
    } else {
      float r;
      cell_moments(f, flags, ux_, uy_, ul, g, periodic, force, r, v[0], v[1], v[2]);
    }
  });
  return o;
}

/// Writes observed values `o` at cell `out` of the published frame: velocity (3 floats), speed,
/// vorticity and density.
CUVIEW_HD inline void publish_cell(const Observed& o, std::size_t out, float* velocity, float* speed, float* vorticity,
                                   float* density) {
  velocity[3 * out] = o.ux;
  velocity[3 * out + 1] = o.uy;
  velocity[3 * out + 2] = o.uz;
  speed[out] = o.speed;
  vorticity[out] = o.vorticity;
  density[out] = o.rho;
}

#if !defined(__CUDACC__)
/// cell_update for every cell of row (y, lz) but the first and last column (the faces: inlet,
/// outlet or wrap, which cell_update does), written for the host compiler to vectorise: away
/// from the x faces every source is affine in x, and a bounce or a solid cell is a select. The
/// same arithmetic as cell_update, so the same bits. The row must have stored rows around it
/// (0 < y < height − 1, 0 < lz < layers + 1).
template <class T>
[[gnu::always_inline]] inline void row_interior(const T* __restrict__ f, T* __restrict__ fo,
                                                const std::uint8_t* __restrict__ flags, int y, int lz,
                                                const Window& g, std::size_t plane, const Params& p) {
  const std::ptrdiff_t row = static_cast<std::ptrdiff_t>(g.at(0, y, lz));
  const T* streamed[kQ];
  const T* bounced[kQ];
  const std::uint8_t* source_flags[kQ];
  T* out_row[kQ];
  CUVIEW_UNROLL19
  for (int i = 0; i < kQ; ++i) {
    const std::ptrdiff_t shift =
        -(cx(i) + static_cast<std::ptrdiff_t>(g.width) * (cy(i) + static_cast<std::ptrdiff_t>(g.height) * cz(i)));
    streamed[i] = f + i * plane + row + shift;
    source_flags[i] = flags + row + shift;
    bounced[i] = f + opposite(i) * plane + row;
    out_row[i] = fo + i * plane + row;
  }
  const std::uint8_t* fl_row = flags + row;
  const Params q = p;  // a copy: stores through fo cannot change it
  const int last = g.width - 1;
  unsigned any = 0;
  for (int x = 1; x < last; ++x) any |= fl_row[x];
  if (any == 0) {  // no wall, obstacle or bounce in the row: neither the selects nor their loads
#pragma GCC ivdep
    for (int x = 1; x < last; ++x) {
      float ft[kQ];
      CUVIEW_UNROLL19
      for (int i = 0; i < kQ; ++i) ft[i] = decode(streamed[i][x]);
      collide(ft, q);
      CUVIEW_UNROLL19
      for (int i = 0; i < kQ; ++i) out_row[i][x] = encode<T>(ft[i]);
    }
    return;
  }
#pragma GCC ivdep
  for (int x = 1; x < last; ++x) {
    const std::uint32_t fl = fl_row[x];
    const std::uint32_t near = 0u - ((fl >> 1) & 1u);
    float ft[kQ];
    CUVIEW_UNROLL19
    for (int i = 0; i < kQ; ++i) {
      const std::uint32_t bounce = near & (0u - (static_cast<std::uint32_t>(source_flags[i][x]) & 1u));
      ft[i] = select_bits(bounce, decode(bounced[i][x]), decode(streamed[i][x]));
    }
    collide(ft, q);
    const std::uint32_t solid = 0u - (fl & 1u);
    CUVIEW_UNROLL19
    for (int i = 0; i < kQ; ++i) out_row[i][x] = encode<T>(select_bits(solid, 0.0f, ft[i]));
  }
}
#endif

}  // namespace cuview::sim::lbm3d
