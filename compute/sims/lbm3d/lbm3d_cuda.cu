// The 3-D lattice-Boltzmann flow on the CUDA executor: the populations in one array, updated in
// place (Esoteric Pull, lbm3d.hpp Esoteric: 19 populations read and written per cell update and a
// flag byte, 153 bytes in float32 and 77 with storage=fp16s), one thread per cell per step; the
// published fields are written by the last step before a frame, from the populations it stores
// (step_and_write), or by a second kernel straight into the ring slot (write_fields: a frame
// without a step). The cells beside an obstacle or a wall, and a periodic duct's x faces, step
// from a list before the rest (other_kernel); a channel's x faces, which read slots their
// neighbours write in the same step, are gathered before that (face_kernel) and then stepped with
// the plain cells. A part of a z-decomposed grid steps its two edge layers first and exchanges, on
// a high-priority stream while it steps the layers between (overlap=on), the five populations a
// side crosses to its neighbour and its edge layer's velocity (for the vorticity beside it).
// Compiled without FMA contraction and with flush-to-zero, as the host loop runs: the same bits.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "cuview/error.hpp"
#include "cuview/cuda/checksum.cuh"
#include "executor/executor.hpp"
#include "sims/flow_frame_cuda.hpp"
#include "sims/lbm3d/lbm3d_setup.hpp"
#include "sims/slab_overlap_cuda.hpp"

namespace cuview::sim::lbm3d {
namespace {

constexpr int kBlockX = 128;
/// The populations that cross a layer boundary: towards +z and towards −z (lbm3d.hpp's order).
__constant__ int kUp[5] = {5, 9, 11, 16, 18};
__constant__ int kDown[5] = {6, 10, 12, 15, 17};

/// The last step before a frame writes density, speed and velocity (FlowFrameOut) from the
/// populations it stores — the same bits as the separate pass (observe_kernel), which reads them
/// back from memory; vorticity, which needs the neighbours' velocities, comes from a kernel after
/// the step. A frame of every k-th cell (`packed`) stores only those cells, packed; its vorticity
/// then needs every cell's velocity: `velocity_full`.
struct FrameOut : FlowFrameOut {
  Packed packed;
  float* velocity_full = nullptr;  ///< the velocity vorticity's differences read (a packed frame's), or null
  /// Whether owned row (y, z) does a frame's work: every row of a whole frame; of a packed one, a
  /// row holding packed cells and, for vorticity, a row beside one along y or z (its differences
  /// read those velocities). advance() runs the frame's kernel on those rows only; the others step
  /// as any step — a packed frame's work is then a fraction of the rows.
  [[nodiscard]] CUVIEW_HD bool frame_row(int y, int z) const {
    const int e = packed.every;
    if (e == 1) return true;
    const int ry = y % e, rz = z % e;
    if (ry == 0 && rz == 0) return true;
    const auto beside = [e](int r) { return r == 0 || r == 1 || r == e - 1; };
    return velocity_full != nullptr && ((rz == 0 && beside(ry)) || (ry == 0 && beside(rz)));
  }
};

/// Writes v as the outgoing population i of stored cell (x, y, lz) (lbm3d.hpp outgoing), where
/// that slot lies within the stored cells (a ghost layer's may lie beyond them: nobody reads it).
template <class T>
__device__ void put_outgoing(const Esoteric<T>& f, int i, int x, int y, int lz, const Window& g, int periodic, T v) {
  const int o = opposite(i);
  const std::size_t here = g.at(x, y, lz), source = source_of(o, x, y, lz, g, periodic).cell;
  if (((o & 1) ? here : source) < g.cells()) f.f[f.back_at(o, here, source)] = v;
}

/// The velocity of a ghost layer's cell: the neighbouring part's, sent with the halo (`ghost`:
/// the layer before the owned ones, then the one after, 3 floats a cell each).
struct GhostVelocity {
  const float* ghost;
  Window g;
  __device__ void operator()(int x, int y, int lz, float* v) const {
    const std::size_t c = (lz == 0 ? 0 : g.layer_cells()) + static_cast<std::size_t>(y) * g.width + x;
    v[0] = ghost[3 * c], v[1] = ghost[3 * c + 1], v[2] = ghost[3 * c + 2];
  }
};

/// Where face_kernel's array holds face cell (side, y, lz)'s population i: at
/// ((i · 2 + side) · layers + lz − 1) · height + y, side 0 the inlet (x = 0), 1 the outlet.
struct FaceAt {
  std::size_t first;   ///< direction 0's
  std::size_t stride;  ///< from one direction to the next
  __device__ FaceAt(const Window& g, int side, int y, int lz)
      : first((static_cast<std::size_t>(side == 0 ? 0 : g.layers) + (lz - 1)) * g.height + y),
        stride(2 * static_cast<std::size_t>(g.layers) * g.height) {}
  __device__ std::size_t operator()(int i) const { return first + i * stride; }
};

/// The incoming populations of a channel's x-face cells (x = 0: the moving wall; x = width − 1:
/// open_face), gathered before the step: they read slots that other cells write in it (the inlet
/// its own outgoing populations, left in the cells beyond the face; the outlet its neighbour's).
/// Laid out as FaceAt says, in the populations' storage (incoming() rounds a face's to it):
/// step_kernel loads them as it loads a population.
template <class T>
__global__ void face_kernel(Esoteric<T> f, const std::uint8_t* __restrict__ flags, Window g, Params p,
                            T* __restrict__ face) {
  const int y = blockIdx.x * blockDim.x + threadIdx.x, lz = 1 + blockIdx.y, side = blockIdx.z;
  if (y >= g.height) return;
  const int x = side == 0 ? 0 : g.width - 1;
  const unsigned fl = flags[g.at(x, y, lz)];
  if (fl & kSolid) return;
  float ft[kQ];
  incoming(f, flags, fl, x, y, lz, g, p, ft);
  const FaceAt at(g, side, y, lz);
  for (int i = 0; i < kQ; ++i) face[at(i)] = encode<T>(ft[i]);
}

/// Whether fluid cell (x, flags fl) is step_kernel's: a plain one (no bounce beside it, away from
/// the x faces) or a channel's x-face cell (its incoming populations gathered by face_kernel). The
/// others (beside a bounce; a periodic duct's x faces) are stepped by other_kernel, from a list.
__device__ __forceinline__ bool stepped_by_step_kernel(unsigned fl, int x, const Window& g, int periodic) {
  return (x == 0 || x == g.width - 1) ? !periodic : fl == 0;
}

/// Writes a frame's values of owned cell (x, y, lz) — density, speed and velocity from the
/// moments of what it stores (a solid cell's: rest) — where `out` takes them; returns their
/// checksum terms.
__device__ std::uint64_t write_frame(const FrameOut& out, const Window& g, int x, int y, int lz, float rho, float ux,
                                     float uy, float uz) {
  std::uint64_t partial = 0;
  if (out.velocity_full) {
    const std::size_t c = g.at(x, y, lz - 1);
    out.velocity_full[3 * c] = ux, out.velocity_full[3 * c + 1] = uy, out.velocity_full[3 * c + 2] = uz;
  }
  std::size_t at = 0;  // in the published frame: owned layers only (every k-th cell, packed)
  if (out.packed.place(x, y, lz - 1, at)) {
    if (out.velocity) {
      out.velocity[3 * at] = ux;
      out.velocity[3 * at + 1] = uy;
      out.velocity[3 * at + 2] = uz;
      if (out.held & 1u)
        partial += float_term(ux, out.w_velocity + 3 * at) + float_term(uy, out.w_velocity + 3 * at + 1) +
                   float_term(uz, out.w_velocity + 3 * at + 2);
    }
    if (out.speed) {
      const float speed = speed_of(ux, uy, uz);
      out.speed[at] = speed;
      partial += float_term(speed, out.w_speed + at);
    }
    if (out.density) {
      out.density[at] = rho;
      partial += float_term(rho, out.w_density + at);
    }
  }
  return partial;
}

/// The moments of collided populations `ft` as they are stored (FP16S rounds them first).
template <class T>
__device__ __forceinline__ void stored_moments_of(float* ft, float force, float& rho, float& ux, float& uy,
                                                  float& uz) {
#pragma unroll
  for (int i = 0; i < kQ; ++i) ft[i] = stored<T>(ft[i]);
  stored_moments(true, ft, force, rho, ux, uy, uz);
}

/// A population's load through the read-only path (nothing writes its slot in this step), asking
/// the L2 to fetch the whole 256-byte block a miss falls in: the warps beside it, loading the same
/// plane, find it there. On a box of plain cells (H200, 2026-11-29, bench/flow3d_variants.cu
/// hints) it took float32 from 2.15 to 2.40 × 10¹⁰ cell updates/s at 512³ and FP16S from 3.76 to
/// 4.33; 128-byte blocks did the same, leaving L1 out (L1::no_allocate) lost 30 %. (The hint needs
/// sm_75; older GPUs load plainly.)
__device__ __forceinline__ float load_population(const float* a) {
#if __CUDA_ARCH__ >= 750
  float v;
  asm("ld.global.nc.L2::256B.f32 %0, [%1];" : "=f"(v) : "l"(a));
  return v;
#else
  return __ldg(a);
#endif
}
__device__ __forceinline__ std::uint16_t load_population(const std::uint16_t* a) {
#if __CUDA_ARCH__ >= 750
  unsigned short v;
  asm("ld.global.nc.L2::256B.u16 %0, [%1];" : "=h"(v) : "l"(a));
  return v;
#else
  return __ldg(a);
#endif
}

/// Steps the plain cells (stepped_by_step_kernel) of `count` stored layers: first, first + stride, … (every owned
/// layer, the two edge layers, or the layers between them: the same update whichever, so the
/// split changes no result), in place, at step parity kT (f.t). Blocks of kBlockX cells along x,
/// one block row per (y, layer): no division anywhere. A cell reads its 19 slots unconditionally,
/// their planes known at compile time — the loads issue back to back, none waits on a branch —
/// collides, and writes them back. A solid cell writes nothing; the other fluid cells are
/// other_kernel's: kept out of this kernel, their code would cost the plain cells registers and
/// time (measured on an H200, 512³ with walls: 1.95 × 10¹⁰ cell updates/s in float32 with it
/// inlined, 1.45 in a function of its own, against 2.33 for a box of plain cells alone).
/// Blocks per SM (a box of plain cells, 512³, H200, 2026-11-29): float32 2.33 × 10¹⁰ at 6 (85
/// registers), 2.16 at 8 (64); FP16S 3.63 × 10¹⁰ at 8, 3.51 at 16 or with 256-thread blocks;
/// streaming stores (__stcs) lost 7 % and 27 %.
/// kFrame: the last step before a frame, also writing `out` (FrameOut) for its cells, solid ones
/// included.
/// step_kernel's work for cell (x, y, lz); returns its frame's checksum terms (kFrame).
template <class T, bool kFrame, int kT>
__device__ __forceinline__ std::uint64_t step_cell(const Esoteric<T>& f, const std::uint8_t* __restrict__ flags,
                                                   const T* __restrict__ face, const Window& g, int x, int y, int lz,
                                                   const Params& p, const FrameOut& out) {
  if (x >= g.width) return 0;
  const std::size_t here = g.at(x, y, lz), plane = f.plane;
  const std::ptrdiff_t row = g.width, layer = static_cast<std::ptrdiff_t>(g.width) * g.height;
  const unsigned fl = __ldg(flags + here);
  if (fl & kSolid) {
    if constexpr (kFrame) return write_frame(out, g, x, y, lz, 1.0f, 0.0f, 0.0f, 0.0f);
    return 0;
  }
  if (!stepped_by_step_kernel(fl, x, g, p.periodic)) return 0;
  // FP16S's values as stored, unscaled: the collision carries the scale (collide<true>).
  constexpr bool kRaw = sizeof(T) == 2;
  float ft[kQ];
  T* __restrict__ pops = f.f;
#pragma unroll
  for (int i = 0; i < kQ; ++i) {
    const std::ptrdiff_t off = cx(i) + row * cy(i) + layer * cz(i);
    ft[i] =
        decode_raw(load_population(pops + Esoteric<T>::slot_at(i, kT, false) * plane + ((i & 1) ? here : here - off)));
  }
  // A channel's face cell (the check above returned for a periodic duct's) loads its slots as any
  // cell does (in bounds: the y and z faces are walls, and a part has its ghost layers), then what
  // face_kernel gathered over them. Every other warp passes by, and no cell's 19 loads wait on a
  // choice. (H200, 2026-11-29, a box of plain cells with faces, bench/flow3d_variants.cu faces, at
  // 1024³: FP16S 4.42 × 10¹⁰ this way against 4.62 without faces, 4.17 on a branch of their own,
  // 1.82 with each load's pointer chosen; float32 2.50, 2.54, 2.53, 2.51.)
  if (x == 0 || x == g.width - 1) {
    const FaceAt gathered(g, x == 0 ? 0 : 1, y, lz);
#pragma unroll
    for (int i = 0; i < kQ; ++i) ft[i] = decode_raw(load_population(face + gathered(i)));
  }
  collide<kRaw>(ft, p);
#pragma unroll
  for (int i = 0; i < kQ; ++i) {  // where the incoming opposite one was read
    const int o = opposite(i);
    const std::ptrdiff_t off = cx(i) + row * cy(i) + layer * cz(i);
    const T v = encode_raw<T>(ft[i]);
    pops[Esoteric<T>::slot_at(o, kT, false) * plane + ((o & 1) ? here : here + off)] = v;
    if constexpr (kFrame) ft[i] = decode(v);  // as stored
  }
  if constexpr (kFrame) {
    float rho, ux, uy, uz;
    stored_moments(true, ft, p.force, rho, ux, uy, uz);
    return write_frame(out, g, x, y, lz, rho, ux, uy, uz);
  }
  return 0;
}
template <class T, bool kFrame, int kT>
__global__ void __launch_bounds__(kBlockX, sizeof(T) == 2 ? 8 : 6)
    step_kernel(Esoteric<T> f, const std::uint8_t* __restrict__ flags, const T* __restrict__ face, Window g, int first,
                int stride, Params p, FrameOut out, int first_row = 0, int row_stride = 1) {
  const std::uint64_t partial = step_cell<T, kFrame, kT>(f, flags, face, g, blockIdx.x * kBlockX + threadIdx.x,
                                                          first_row + blockIdx.y * row_stride,
                                                          first + blockIdx.z * stride, p, out);
  // Every thread of the block, once: the sum synchronises the block.
  if constexpr (kFrame) add_checksum_spread(partial, out.sums);
}

/// Steps the fluid cells that are not plain (`cells`, stored indices: beside a bounce, or on a
/// periodic duct's x face), all owned layers, before step_kernel (each cell reads and writes only
/// its own slots, so the order changes nothing): their incoming populations through lbm3d.hpp
/// (bounces, the wrap of a periodic duct); collided and stored in place. With
/// `frame` (the frame's step), also the frame's values of those of its rows (FrameOut::frame_row).
template <class T>
__device__ __forceinline__ std::uint64_t other_cell(const Esoteric<T>& f, const std::uint8_t* __restrict__ flags,
                                                    const Window& g, const Params& p,
                                                    const std::uint32_t* __restrict__ cells, std::uint32_t count,
                                                    bool frame, const FrameOut& out) {
  const std::uint32_t k = blockIdx.x * kBlockX + threadIdx.x;
  if (k >= count) return 0;
  // A part's stored cells fit 32 bits (the list holds them so): two 32-bit divisions, not three of 64.
  const std::uint32_t c = cells[k], row = c / static_cast<std::uint32_t>(g.width);
  const int x = static_cast<int>(c - row * static_cast<std::uint32_t>(g.width)),
            y = static_cast<int>(row % static_cast<std::uint32_t>(g.height)),
            lz = static_cast<int>(row / static_cast<std::uint32_t>(g.height));
  const unsigned fl = flags[c];
  float ft[kQ];
  incoming(f, flags, fl, x, y, lz, g, p, ft);
  collide(ft, p);
  store_in_place(f, x, y, lz, g, p.periodic, ft);
  if (!frame || !out.frame_row(y, lz - 1)) return 0;
  float rho, ux, uy, uz;
  stored_moments_of<T>(ft, p.force, rho, ux, uy, uz);
  return write_frame(out, g, x, y, lz, rho, ux, uy, uz);
}
template <class T>
__global__ void __launch_bounds__(kBlockX)
    other_kernel(Esoteric<T> f, const std::uint8_t* __restrict__ flags, Window g, Params p,
                 const std::uint32_t* __restrict__ cells, std::uint32_t count, bool frame, FrameOut out) {
  const std::uint64_t partial = other_cell(f, flags, g, p, cells, count, frame, out);
  if (frame) add_checksum_spread(partial, out.sums);  // every thread of the block, once
}

/// The owned fluid cells that are not plain (other_kernel's), counted (`cells` null) or listed.
__global__ void list_other_kernel(const std::uint8_t* __restrict__ flags, Window g, int periodic,
                                  std::uint32_t* __restrict__ count, std::uint32_t* __restrict__ cells) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, lz = 1 + blockIdx.z;
  if (x >= g.width) return;
  const std::size_t c = g.at(x, y, lz);
  const unsigned fl = flags[c];
  if ((fl & kSolid) || stepped_by_step_kernel(fl, x, g, periodic)) return;
  const std::uint32_t k = atomicAdd(count, 1u);
  if (cells) cells[k] = static_cast<std::uint32_t>(c);
}

/// The packed layers one thread of vorticity_kernel walks down its column.
constexpr int kVorticityLayers = 16;
/// vorticity_kernel's tiles over packed grid `k`: kBlockX cells of a row by kVorticityLayers layers.
__host__ __device__ inline std::int64_t vorticity_tiles(const Packed& k) {
  return static_cast<std::int64_t>((k.width + kBlockX - 1) / kBlockX) * k.height *
         ((k.layers + kVorticityLayers - 1) / kVorticityLayers);
}
/// The vorticity of the owned layers after a frame's step, from the velocities it wrote (owned
/// layers) and the ghost layers' (a part's neighbours', sent with the halo): the same
/// differences, the same bits as observe_kernel. A tile is kBlockX cells of a row of the packed
/// grid, walked down kVorticityLayers of its layers: a thread keeps its column's velocities below,
/// at and above its cell, so that a whole frame's next layer reads one velocity of the column,
/// not three (the rows beside it, read by the tiles beside, are still in L2).
__global__ void __launch_bounds__(kBlockX)
    vorticity_kernel(Window g, const float* __restrict__ velocity, GhostVelocity ghost, float* __restrict__ vorticity,
                     std::uint64_t w_vorticity, std::uint64_t* sum, Packed k) {
  const int tiles_x = (k.width + kBlockX - 1) / kBlockX;
  const std::int64_t tiles = vorticity_tiles(k);
  // The velocity of stored cell (cx, cy, cl): the frame's, or a ghost layer's.
  const auto read = [&](int cx, int cy, int cl, float* v) {
    if (cl >= 1 && cl <= g.layers) {
      const std::size_t c = g.at(cx, cy, cl - 1);
      v[0] = velocity[3 * c], v[1] = velocity[3 * c + 1], v[2] = velocity[3 * c + 2];
    } else {
      ghost(cx, cy, cl, v);
    }
  };
  std::uint64_t partial = 0;
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int i = static_cast<int>(tile % tiles_x) * kBlockX + threadIdx.x;
    const std::int64_t r = tile / tiles_x;
    if (i >= k.width) continue;
    const int x = i * k.every, packed_y = static_cast<int>(r % k.height), y = packed_y * k.every;
    const int first = static_cast<int>(r / k.height) * kVorticityLayers,
              last = ::min(first + kVorticityLayers, k.layers);
    // The column's velocities at layers lz − 1, lz and lz + 1 (those that exist); `held`, the lz
    // they were read around.
    float below[3] = {}, here[3] = {}, above[3] = {};
    int held = -1;
    for (int m = first; m < last; ++m) {
      const int lz = 1 + m * k.every, z = g.global_layer(lz);
      if (held == lz - 1) {  // the layer before's: its cell and the one above
        for (int c = 0; c < 3; ++c) below[c] = here[c], here[c] = above[c];
      } else {
        if (z > 0) read(x, y, lz - 1, below);
        read(x, y, lz, here);
      }
      if (z < g.global_depth - 1) read(x, y, lz + 1, above);
      held = lz;
      // Its neighbours along x and y lie in its own layer, an owned one: offsets from its own cell.
      const float* at_cell = velocity + 3 * g.at(x, y, lz - 1);
      const float w = vorticity_at(x, y, lz, g, [&](int cx, int cy, int cl, float* v) {
        if (cx == x && cy == y) {
          for (int c = 0; c < 3; ++c) v[c] = cl < lz ? below[c] : cl > lz ? above[c] : here[c];
        } else {
          const float* u = at_cell + 3 * ((cx - x) + (cy - y) * g.width);
          v[0] = u[0], v[1] = u[1], v[2] = u[2];
        }
      });
      const std::size_t at = (static_cast<std::size_t>(m) * k.height + packed_y) * k.width + i;
      vorticity[at] = w;
      partial += float_term(w, w_vorticity + at);
    }
  }
  add_checksum(partial, sum);
}

/// The flags of stored layers [lz0, lz0 + gridDim.z) from the device's mask.
__global__ void flags_kernel(const std::uint8_t* __restrict__ solid, std::uint8_t* __restrict__ flags, Window g,
                             int lz0, int periodic) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, lz = lz0 + blockIdx.z;
  if (x < g.width) flags[g.at(x, blockIdx.y, lz)] = flags_of(solid, g, x, blockIdx.y, lz, periodic);
}

template <class T>
struct Equilibrium {
  T f[kQ];
};
/// The initial populations as the last step would have left them: `eq` (computed on the host, so
/// both backends start from the same bits) in fluid cells, 0 in solid ones, every stored cell.
template <class T>
__global__ void initial_kernel(Esoteric<T> f, const std::uint8_t* __restrict__ flags, Window g, int periodic,
                               Equilibrium<T> eq) {
  const std::size_t cells = g.cells();
  for (std::size_t c = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; c < cells;
       c += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int x = static_cast<int>(c % g.width), y = static_cast<int>(c / g.width % g.height),
              lz = static_cast<int>(c / g.layer_cells());
    const bool solid = (flags[c] & kSolid) != 0;
    for (int i = 0; i < kQ; ++i) put_outgoing(f, i, x, y, lz, g, periodic, solid ? T{} : eq.f[i]);
  }
}

/// The cells a stroke turned solid or fluid (`cells`, stored indices) start again at rest.
template <class T>
__global__ void rest_kernel(Esoteric<T> f, Window g, int periodic, const std::size_t* __restrict__ cells, int count) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const std::size_t c = cells[k];
  const int x = static_cast<int>(c % g.width), y = static_cast<int>(c / g.width % g.height),
            lz = static_cast<int>(c / g.layer_cells());
  for (int i = 0; i < kQ; ++i) put_outgoing(f, i, x, y, lz, g, periodic, T{});
}

/// Population i of owned layers [lz0, lz0 + layers) as a checkpoint holds it (the cell's outgoing
/// population, 0 in a solid cell), into or out of `buffer` (layer-major, as stored).
template <class T, bool kSave>
__global__ void state_kernel(Esoteric<T> f, const std::uint8_t* __restrict__ flags, Window g, int periodic, int i,
                             int lz0, int layers, T* __restrict__ buffer) {
  const std::size_t n = g.layer_cells() * layers;
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int x = static_cast<int>(k % g.width), y = static_cast<int>(k / g.width % g.height),
              lz = lz0 + static_cast<int>(k / g.layer_cells());
    const int o = opposite(i);
    const std::size_t here = g.at(x, y, lz), at = f.back_at(o, here, source_of(o, x, y, lz, g, periodic).cell);
    if constexpr (kSave)
      buffer[k] = (flags[here] & kSolid) ? T{} : f.f[at];
    else
      f.f[at] = buffer[k];
  }
}

/// What a part sends its neighbours after a step, for each cell of a layer: the velocity of its
/// first (to the part before) or last owned layer (to the part after), then the five populations
/// its cells send across, read where the neighbour's cells will read them (the slots of this
/// part's ghost layer's cells). `to_up`, `to_down`: 3 floats then 5 populations a cell.
template <class T>
__global__ void pack_kernel(Esoteric<T> f, const std::uint8_t* __restrict__ flags, Window g, int periodic, float force,
                            float* __restrict__ to_up, float* __restrict__ to_down) {
  const std::size_t l = g.layer_cells();
  for (std::size_t c = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; c < l;
       c += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int x = static_cast<int>(c % g.width), y = static_cast<int>(c / g.width);
    for (int side = 0; side < 2; ++side) {
      float* out = side == 0 ? to_up : to_down;
      const int edge = side == 0 ? 1 : g.layers, ghost = side == 0 ? 0 : g.layers + 1;
      float rho, v[3];
      cell_moments(f, flags, x, y, edge, g, periodic, force, rho, v[0], v[1], v[2]);
      out[3 * c] = v[0], out[3 * c + 1] = v[1], out[3 * c + 2] = v[2];
      T* pops = reinterpret_cast<T*>(out + 3 * l);
      for (int k = 0; k < 5; ++k) {
        const int i = side == 0 ? kDown[k] : kUp[k];
        pops[k * l + c] = f.f[f.in_at(i, g.at(x, y, ghost), source_of(i, x, y, ghost, g, periodic).cell)];
      }
    }
  }
}
/// What the neighbours sent, where this part's edge cells read it, and their velocities into
/// `ghost` (GhostVelocity), for each side that has a neighbour.
template <class T>
__global__ void unpack_kernel(Esoteric<T> f, Window g, int periodic, const float* __restrict__ from_up,
                              const float* __restrict__ from_down, float* __restrict__ ghost, bool up, bool down) {
  const std::size_t l = g.layer_cells();
  for (std::size_t c = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; c < l;
       c += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int x = static_cast<int>(c % g.width), y = static_cast<int>(c / g.width);
    for (int side = 0; side < 2; ++side) {
      if (!(side == 0 ? up : down)) continue;
      const float* in = side == 0 ? from_up : from_down;
      const int edge = side == 0 ? 1 : g.layers;
      float* v = ghost + 3 * (side * l + c);
      v[0] = in[3 * c], v[1] = in[3 * c + 1], v[2] = in[3 * c + 2];
      const T* pops = reinterpret_cast<const T*>(in + 3 * l);
      for (int k = 0; k < 5; ++k) {
        const int i = side == 0 ? kUp[k] : kDown[k];
        f.f[f.in_at(i, g.at(x, y, edge), source_of(i, x, y, edge, g, periodic).cell)] = pops[k * l + c];
      }
    }
  }
}

/// The published fields of the owned layers, written straight into the ring slot with their
/// checksum terms (Executor::sum_into): a fixed grid of blocks walks rows of kBlockX cells, so
/// each block adds its sum with one atomic.
struct ObserveTargets {
  float *velocity, *speed, *vorticity, *density;
  std::uint64_t w_velocity, w_speed, w_vorticity, w_density;  // first words in the slot
  std::uint64_t* sum;
  /// Which fields the frame holds (bits: velocity, speed, vorticity, density): only their terms
  /// are summed (the others are written, but nobody reads them).
  unsigned held;
};
template <class T>
__global__ void __launch_bounds__(kBlockX)
    observe_kernel(Esoteric<T> f, const std::uint8_t* __restrict__ flags, Window g, int periodic, float force,
                   GhostVelocity ghost, ObserveTargets t, Packed k) {
  const int tiles_x = (k.width + kBlockX - 1) / kBlockX;
  const std::int64_t tiles = static_cast<std::int64_t>(tiles_x) * k.height * k.layers;
  std::uint64_t partial = 0;
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int i = static_cast<int>(tile % tiles_x) * kBlockX + threadIdx.x;
    const std::int64_t row = tile / tiles_x;
    if (i >= k.width) continue;
    const int x = i * k.every, y = static_cast<int>(row % k.height) * k.every,
              lz = 1 + static_cast<int>(row / k.height) * k.every;
    // In the published frame: owned layers only (every k-th cell, packed).
    const std::size_t at = static_cast<std::size_t>(row) * k.width + i;
    const Observed o = observe_cell(f, flags, x, y, lz, g, periodic, force, ghost);
    publish_cell(o, at, t.velocity, t.speed, t.vorticity, t.density);
    if (t.held & 1u)
      partial += float_term(o.ux, t.w_velocity + 3 * at) + float_term(o.uy, t.w_velocity + 3 * at + 1) +
                 float_term(o.uz, t.w_velocity + 3 * at + 2);
    if (t.held & 2u) partial += float_term(o.speed, t.w_speed + at);
    if (t.held & 4u) partial += float_term(o.vorticity, t.w_vorticity + at);
    if (t.held & 8u) partial += float_term(o.rho, t.w_density + at);
  }
  add_checksum(partial, t.sum);
}


template <class T>
class Lbm3dCuda final : public Simulation {
 public:
  Lbm3dCuda(Executor& executor, const Window& g, Halo* halo, const Options& o)
      : executor_(executor), device_(executor.device_id()), stream_(executor.stream().get()), g_(g), halo_(halo),
        o_(o) {
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device_), "counting the GPU's SMs");
    check_memory();
    mask_ = obstacle_mask(g_, o_);
    mask_dev_ = cuda::DeviceBuffer(g_.cells());
    flags_ = cuda::DeviceBuffer(g_.cells());
    f_ = cuda::DeviceBuffer(g_.cells() * kQ * sizeof(T));
    // Slots no cell writes (beyond the grid's faces) are read by no one; zeros, not whatever was there.
    cuda::check(cudaMemsetAsync(f_.get(), 0, f_.size(), stream_), "clearing the populations");
    if (!o_.periodic) face_ = cuda::DeviceBuffer(face_bytes());
    if (halo_) {
      halo_layers_ = cuda::DeviceBuffer(4 * message_bytes());
      ghost_velocity_ = cuda::DeviceBuffer(6 * g_.layer_cells() * sizeof(float));
      cuda::check(cudaMemsetAsync(ghost_velocity_.get(), 0, ghost_velocity_.size(), stream_),
                  "clearing the ghost layers' velocities");
      overlap_.emplace("the 3-D flow");
    }
    upload_mask(0, g_.stored_layers());
  }
  std::vector<FieldSpec> fields() const override { return lbm3d::fields(); }
  std::vector<ParamSpec> params() const override { return lbm3d::params(); }
  std::vector<Preset> presets() const override { return lbm3d::presets(); }
  void set_params(const std::map<std::string, double>& values) override { p_ = from(values, o_); }

  void reset(std::uint64_t) override {
    cuda::DeviceGuard guard(device_);
    Equilibrium<T> eq{};
    for (int i = 0; i < kQ; ++i)
      eq.f[i] = encode<T>(shifted_equilibrium(i, 0.0f, 1.0f, o_.periodic ? 0.0f : p_.u_in, 0.0f, 0.0f));
    t_ = 0;
    initial_kernel<<<std::max(1, 8 * sms_), 256, 0, stream_>>>(pops(), flags(), g_, periodic(), eq);
    cuda::check(cudaGetLastError(), "launching the 3-D flow's initial-state kernel");
    exchange_populations(stream_);
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after reset");
  }

  void step(std::uint32_t steps) override {
    cuda::DeviceGuard guard(device_);
    advance(steps, nullptr);
  }

  bool writes_in_step() const override { return true; }
  bool writes_every() const override { return true; }
  void step_and_write(std::uint32_t steps, const std::vector<FieldTarget>& t) override {
    cuda::DeviceGuard guard(device_);
    if (steps > 1) advance(steps - 1, nullptr);
    executor_.frame_step_begins(1, executor_.stream());  // the frame's time: its step and kernels
    const FlowFrame frame = flow_frame(executor_, t, sums_, stream_);
    FrameOut out{frame.out, Packed(g_, t[0].every)};
    if (out.packed.every > 1) {  // the packed cells; vorticity's differences need every cell's velocity
      out.velocity = t[0].read ? static_cast<float*>(t[0].data) : nullptr;
      if (t[2].read) out.velocity_full = velocity_scratch();
    }
    advance(1, &out);
    sums_.add_into(frame.sum, stream_);
    if (t[2].read) {  // after the step and its exchange: the ghost velocities are the neighbours' new ones
      const Packed& k = out.packed;
      vorticity_kernel<<<static_cast<unsigned>(std::min<std::int64_t>(vorticity_tiles(k), 16 * sms_)), kBlockX, 0,
                         stream_>>>(
          g_, out.velocity_full ? out.velocity_full : static_cast<const float*>(t[0].data), ghost(),
          static_cast<float*>(t[2].data), frame.vorticity.first_word, frame.vorticity.sum, k);
    }
    cuda::check(cudaGetLastError(), "launching the 3-D flow's frame kernels");
  }

  std::vector<InputSpec> inputs() const override { return lbm3d::inputs(); }
  void draw(const Stroke& s) override {
    cuda::DeviceGuard guard(device_);
    // The previous upload reads mask_ (pageable memory): let it finish before changing it.
    cuda::check(cudaStreamSynchronize(stream_), "waiting before an obstacle edit");
    std::vector<std::size_t> changed;
    const Layers l = lbm3d::draw(s, mask_, g_, changed);
    if (!changed.empty()) {
      cuda::DeviceBuffer cells(changed.size() * sizeof(std::size_t));
      cuda::check(cudaMemcpyAsync(cells.get(), changed.data(), cells.size(), cudaMemcpyHostToDevice, stream_),
                  "uploading the cells a stroke changed");
      const int count = static_cast<int>(changed.size());
      rest_kernel<<<(count + 255) / 256, 256, 0, stream_>>>(pops(), g_, periodic(),
                                                             static_cast<const std::size_t*>(cells.get()), count);
      cuda::check(cudaGetLastError(), "launching the kernel that puts a stroke's cells at rest");
      cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after a stroke");
    }
    if (l.lz0 < l.lz1) upload_mask(l.lz0, l.lz1);
  }

  std::vector<StateSpec> state() const override { return lbm3d::state(g_, o_); }
  void save_state(const std::vector<void*>& out) override {
    cuda::DeviceGuard guard(device_);
    move_state<true>(static_cast<T*>(out[0]));
    std::memcpy(out[1], mask_.data() + g_.layer_cells(), g_.owned_cells());  // the host copy is the truth
  }
  void load_state(const std::vector<const void*>& in) override {
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaStreamSynchronize(stream_), "waiting before restoring the state");
    std::memcpy(mask_.data() + g_.layer_cells(), in[1], g_.owned_cells());
    exchange_mask_ghosts(halo_, g_, mask_);
    upload_mask(0, g_.stored_layers());
    t_ = 0;
    move_state<false>(const_cast<T*>(static_cast<const T*>(in[0])));
    exchange_populations(stream_);
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after restoring the state");
  }

  void write_fields(const std::vector<FieldTarget>& t) override {
    cuda::DeviceGuard guard(device_);
    const FieldChecksum v = executor_.sum_into(t[0]), s = executor_.sum_into(t[1]), w = executor_.sum_into(t[2]),
                        d = executor_.sum_into(t[3]);
    const ObserveTargets targets{static_cast<float*>(t[0].data), static_cast<float*>(t[1].data),
                                 static_cast<float*>(t[2].data), static_cast<float*>(t[3].data),
                                 v.first_word, s.first_word, w.first_word, d.first_word,
                                 // the frame's checksum: a held field's sink (an unheld one's goes nowhere)
                                 t[0].read ? v.sum : t[1].read ? s.sum : t[2].read ? w.sum : d.sum,
                                 (t[0].read ? 1u : 0u) | (t[1].read ? 2u : 0u) | (t[2].read ? 4u : 0u) | (t[3].read ? 8u : 0u)};
    const Packed k(g_, t[0].every);
    const std::int64_t tiles = static_cast<std::int64_t>((k.width + kBlockX - 1) / kBlockX) * k.height * k.layers;
    observe_kernel<<<static_cast<unsigned>(std::min<std::int64_t>(tiles, 16 * sms_)), kBlockX, 0, stream_>>>(
        pops(), flags(), g_, periodic(), p_.force, ghost(), targets, k);
    cuda::check(cudaGetLastError(), "launching the 3-D flow's field kernel");
  }

 private:
  [[nodiscard]] int periodic() const { return o_.periodic ? 1 : 0; }
  /// The populations at the parity of the next step (what the last one left, for reading).
  [[nodiscard]] Esoteric<T> pops() const { return {static_cast<T*>(f_.get()), g_.cells(), t_}; }
  [[nodiscard]] GhostVelocity ghost() const { return {static_cast<const float*>(ghost_velocity_.get()), g_}; }
  [[nodiscard]] std::size_t face_bytes() const {
    return 2 * kQ * static_cast<std::size_t>(g_.height) * g_.layers * sizeof(T);
  }
  /// One side's halo message: 3 floats and 5 populations a cell of a layer.
  [[nodiscard]] std::size_t message_bytes() const { return g_.layer_cells() * (3 * sizeof(float) + 5 * sizeof(T)); }
  /// Refuses a grid whose state does not fit in the GPU's free memory, naming what it needs.
  void check_memory() const {
    const double per_cell = kQ * sizeof(T) + 2.0;  // the populations, the mask and the flags
    const double need = per_cell * static_cast<double>(g_.cells()) + (o_.periodic ? 0.0 : face_bytes()) +
                        (halo_ ? 4.0 * message_bytes() + 24.0 * g_.layer_cells() : 0.0);
    std::size_t free = 0, total = 0;
    cuda::check(cudaMemGetInfo(&free, &total), "asking the GPU for its free memory");
    refuse_unless_fits(g_, o_, per_cell, "19 populations in place, the obstacle mask and flags", need,
                       static_cast<double>(free), "GPU " + std::to_string(device_) + " (before the frames' ring)");
  }
  /// Every owned cell's velocity, for a packed frame's vorticity (allocated the first time).
  float* velocity_scratch() {
    if (velocity_full_.get() == nullptr) velocity_full_ = cuda::DeviceBuffer(3 * g_.owned_cells() * sizeof(float));
    return static_cast<float*>(velocity_full_.get());
  }
  [[nodiscard]] const std::uint8_t* flags() const { return static_cast<const std::uint8_t*>(flags_.get()); }
  /// The checkpoint's populations to (kSave) or from `host`, a chunk of layers at a time through
  /// a device buffer of at most 64 MiB.
  template <bool kSave>
  void move_state(T* host) {
    const std::size_t layer = g_.layer_cells(), owned = g_.owned_cells();
    const int chunk = static_cast<int>(std::clamp<std::size_t>((64u << 20) / (layer * sizeof(T)), 1, g_.layers));
    cuda::DeviceBuffer staging(static_cast<std::size_t>(chunk) * layer * sizeof(T));
    auto* dev = static_cast<T*>(staging.get());
    for (int i = 0; i < kQ; ++i)
      for (int lz = 1; lz <= g_.layers; lz += chunk) {
        const int n = std::min(chunk, g_.layers + 1 - lz);
        T* part = host + i * owned + static_cast<std::size_t>(lz - 1) * layer;
        const std::size_t bytes = static_cast<std::size_t>(n) * layer * sizeof(T);
        const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((n * layer + 255) / 256, 16 * sms_));
        if constexpr (!kSave)
          cuda::check(cudaMemcpyAsync(dev, part, bytes, cudaMemcpyHostToDevice, stream_), "restoring the populations");
        state_kernel<T, kSave><<<blocks, 256, 0, stream_>>>(pops(), flags(), g_, periodic(), i, lz, n, dev);
        cuda::check(cudaGetLastError(), "launching the 3-D flow's state kernel");
        if constexpr (kSave)
          cuda::check(cudaMemcpyAsync(part, dev, bytes, cudaMemcpyDeviceToHost, stream_), "saving the populations");
        cuda::check(cudaStreamSynchronize(stream_), kSave ? "saving the populations" : "restoring the populations");
      }
  }
  /// `steps` steps; the last writes `out`'s fields when given (a frame's step).
  void advance(std::uint32_t steps, const FrameOut* out) {
    const int layers = g_.layers;
    for (std::uint32_t s = 0; s < steps; ++s) {
      const FrameOut* o = s + 1 == steps ? out : nullptr;
      if (!o_.periodic) {  // the channel's faces first: they read slots the step writes
        const dim3 grid((g_.height + kBlockX - 1) / kBlockX, layers, 2);
        face_kernel<<<grid, kBlockX, 0, stream_>>>(pops(), flags(), g_, p_, static_cast<T*>(face_.get()));
      }
      if (other_count_ > 0)  // then the cells that are not plain, every layer (edges included: before the exchange)
        other_kernel<<<(other_count_ + kBlockX - 1) / kBlockX, kBlockX, 0, stream_>>>(
            pops(), flags(), g_, p_, static_cast<const std::uint32_t*>(other_.get()), other_count_, o != nullptr,
            o ? *o : FrameOut{});
      if (o != nullptr && o->packed.every > 1) {
        // A packed frame (a whole grid: parts publish whole frames): the layers that hold its
        // cells, or lie beside them for vorticity, in the frame's kernel; the others as any step.
        const int e = o->packed.every;
        const auto count = [e](int n, int r) { return (n - r + e - 1) / e; };  // of 0..n-1, those ≡ r mod e
        // Row (y, z) does the frame's work when FrameOut::frame_row says so, which depends on y % e
        // and z % e only: one launch per pair of residues, the frame's kernel where it works.
        for (int rz = 0; rz < e; ++rz) {  // the owned layers z with z % e == rz
          const int n = count(layers, rz);
          if (n <= 0) continue;
          bool any = false;
          for (int ry = 0; ry < e; ++ry) any = any || o->frame_row(ry, rz);
          if (!any) {
            step_layers(1 + rz, e, n, nullptr);  // no row of these layers works for the frame
            continue;
          }
          for (int ry = 0; ry < e; ++ry) {
            const int rows = count(g_.height, ry);
            if (rows > 0) step_layers(1 + rz, e, n, o->frame_row(ry, rz) ? o : nullptr, ry, e, rows);
          }
        }
        t_ ^= 1;
        exchange_populations(stream_);
      } else if (!halo_ || !o_.overlap) {
        step_layers(1, 1, layers, o);
        t_ ^= 1;
        exchange_populations(stream_);
      } else {
        overlap_->step(
            stream_, [&](cudaStream_t) { step_layers(1, std::max(1, layers - 1), std::min(layers, 2), o); },
            [&](cudaStream_t halo) {
              t_ ^= 1;  // the exchange reads what this step wrote
              exchange_populations(halo);
            },
            [&](cudaStream_t) {
              t_ ^= 1;  // the layers between: this step's parity
              if (layers > 2) step_layers(2, 1, layers - 2, o);
              t_ ^= 1;
            });
      }
    }
    cuda::check(cudaGetLastError(), "launching the 3-D flow's step kernel");
  }
  /// Steps `count` stored layers from `first`, every `stride`-th; of each, `rows` rows from
  /// `first_row`, every `row_stride`-th (all rows by default).
  void step_layers(int first, int stride, int count, const FrameOut* out, int first_row = 0, int row_stride = 1,
                   int rows = -1) {
    const dim3 grid((g_.width + kBlockX - 1) / kBlockX, rows < 0 ? g_.height : rows, count);
    const FrameOut none{};
    const auto launch = [&](auto kernel, const FrameOut& o) {
      kernel<<<grid, kBlockX, 0, stream_>>>(pops(), flags(), static_cast<const T*>(face_.get()), g_, first, stride, p_,
                                            o, first_row, row_stride);
    };
    if (out)
      t_ ? launch(step_kernel<T, true, 1>, *out) : launch(step_kernel<T, true, 0>, *out);
    else
      t_ ? launch(step_kernel<T, false, 1>, none) : launch(step_kernel<T, false, 0>, none);
  }
  /// Queued on `stream`, after a step (t_ the next step's parity): sends what the neighbouring
  /// parts' edge cells read from this part (pack_kernel) and puts what they send where this
  /// part's edge cells read it. Nothing without a halo (the whole grid).
  void exchange_populations(cudaStream_t stream) {
    if (!halo_) return;
    auto* bytes = static_cast<std::byte*>(halo_layers_.get());
    const std::size_t m = message_bytes();
    auto* to_up = reinterpret_cast<float*>(bytes);
    auto* to_down = reinterpret_cast<float*>(bytes + m);
    auto* from_up = reinterpret_cast<float*>(bytes + 2 * m);
    auto* from_down = reinterpret_cast<float*>(bytes + 3 * m);
    const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((g_.layer_cells() + 255) / 256, 16 * sms_));
    pack_kernel<<<blocks, 256, 0, stream>>>(pops(), flags(), g_, periodic(), p_.force, to_up, to_down);
    cuda::check(cudaGetLastError(), "launching the halo pack kernel");
    halo_->exchange(to_up, from_up, to_down, from_down, m, true, stream);
    unpack_kernel<<<blocks, 256, 0, stream>>>(pops(), g_, periodic(), from_up, from_down,
                                              static_cast<float*>(ghost_velocity_.get()), halo_->has_up(),
                                              halo_->has_down());
    cuda::check(cudaGetLastError(), "launching the halo unpack kernel");
  }
  /// Stored layers [lz0, lz1) of the mask to the device, and the flags there computed again (a
  /// cell's flags read the mask one layer beyond: the device holds all of it).
  void upload_mask(int lz0, int lz1) {
    lz0 = std::max(lz0, 0), lz1 = std::min(lz1, g_.stored_layers());
    const std::size_t first = g_.layer_cells() * lz0, bytes = g_.layer_cells() * (lz1 - lz0);
    cuda::check(cudaMemcpyAsync(static_cast<std::uint8_t*>(mask_dev_.get()) + first, mask_.data() + first, bytes,
                                cudaMemcpyHostToDevice, stream_),
                "uploading the obstacle mask");
    const dim3 grid((g_.width + kBlockX - 1) / kBlockX, g_.height, lz1 - lz0);
    flags_kernel<<<grid, kBlockX, 0, stream_>>>(static_cast<const std::uint8_t*>(mask_dev_.get()),
                                                static_cast<std::uint8_t*>(flags_.get()), g_, lz0, periodic());
    cuda::check(cudaGetLastError(), "launching the obstacle-flags kernel");
    list_other_cells();
  }
  /// The list of owned fluid cells that are not plain (other_kernel's), from the flags: counted,
  /// then listed (in no particular order: each cell's update is its own).
  void list_other_cells() {
    if (other_counter_.get() == nullptr) other_counter_ = cuda::DeviceBuffer(sizeof(std::uint32_t));
    auto* counter = static_cast<std::uint32_t*>(other_counter_.get());
    const dim3 grid((g_.width + kBlockX - 1) / kBlockX, g_.height, g_.layers);
    std::uint32_t count = 0;
    for (const bool fill : {false, true}) {
      cuda::check(cudaMemsetAsync(counter, 0, sizeof(std::uint32_t), stream_), "clearing the other cells' count");
      list_other_kernel<<<grid, kBlockX, 0, stream_>>>(flags(), g_, periodic(), counter,
                                                    fill ? static_cast<std::uint32_t*>(other_.get()) : nullptr);
      cuda::check(cudaGetLastError(), "launching the kernel that lists the cells beside obstacles");
      if (!fill) {
        cuda::check(cudaMemcpyAsync(&count, counter, sizeof count, cudaMemcpyDeviceToHost, stream_),
                    "reading the count of cells beside obstacles");
        cuda::check(cudaStreamSynchronize(stream_), "counting the cells beside obstacles");
        if (count * sizeof(std::uint32_t) > other_.size())
          other_ = cuda::DeviceBuffer(std::max<std::size_t>(count, count + count / 4) * sizeof(std::uint32_t));
      }
    }
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after listing the cells beside obstacles");
    other_count_ = count;
  }
  Executor& executor_;
  int device_, sms_ = 1;
  cudaStream_t stream_;
  Window g_;
  Halo* halo_;
  Options o_;
  Params p_;
  std::vector<std::uint8_t> mask_;  ///< the stored layers' obstacles (ghost layers included)
  cuda::DeviceBuffer mask_dev_, flags_, f_;
  int t_ = 0;                        ///< the next step's parity (Esoteric)
  cuda::DeviceBuffer face_;          ///< a channel's face cells' incoming populations (face_kernel)
  cuda::DeviceBuffer other_, other_counter_;  ///< the fluid cells that are not plain (list_other_cells)
  std::uint32_t other_count_ = 0;
  cuda::DeviceBuffer velocity_full_;  ///< velocity_scratch()
  cuda::DeviceBuffer halo_layers_;    ///< to up, to down, from up, from down: message_bytes() each
  cuda::DeviceBuffer ghost_velocity_;  ///< the ghost layers' velocities (GhostVelocity)
  std::optional<SlabOverlap> overlap_;
  ChecksumSlots sums_;  ///< a frame step's partial checksums
};

}  // namespace

std::unique_ptr<Simulation> make_cuda(Executor& executor, const Window& g, Halo* halo, const Options& o) {
  if (o.fp16s) return std::make_unique<Lbm3dCuda<std::uint16_t>>(executor, g, halo, o);
  return std::make_unique<Lbm3dCuda<float>>(executor, g, halo, o);
}

}  // namespace cuview::sim::lbm3d
