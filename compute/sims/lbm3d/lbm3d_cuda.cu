// The 3-D lattice-Boltzmann flow on the CUDA executor: populations double-buffered on the device
// (A → B pull, 153 bytes of traffic per cell update: 19 floats read and written and a flag byte),
// one thread per cell running cell_update (lbm3d.hpp) per step; the published fields are written
// by the last step before a frame, from the moments its collision holds (step_and_write), or by a
// second kernel straight into the ring slot (write_fields: a frame without a step). A part of a
// z-decomposed grid steps its two edge layers first and exchanges them on a high-priority stream
// while it steps the layers between (overlap=on). Compiled without FMA contraction and with flush-to-zero, as the host loop runs:
// the same bits.
#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "cuview/error.hpp"
#include "executor/checksum.cuh"
#include "executor/executor.hpp"
#include "sims/flow_frame_cuda.hpp"
#include "sims/lbm3d/lbm3d_setup.hpp"
#include "sims/slab_overlap_cuda.hpp"

namespace cuview::sim::lbm3d {
namespace {

constexpr int kBlockX = 128;

/// The last step before a frame writes density, speed and velocity (FlowFrameOut) from the
/// populations it has just collided, in registers — the same bits as the separate pass
/// (observe_kernel), which reads them back from memory;
/// vorticity, which needs the neighbours' velocities, comes from a kernel after the step. A frame
/// of every k-th cell (`packed`) stores only those cells, packed; its vorticity then needs every
/// cell's velocity: `velocity_full`.
struct FrameOut : FlowFrameOut {
  Packed packed;
  float* velocity_full = nullptr;  ///< the velocity vorticity's differences read (a packed frame's), or null
  /// Whether owned row (y, z) does a frame's work: every row of a whole frame; of a packed one, a
  /// row holding packed cells and, for vorticity, a row beside one along y or z (its differences
  /// read those velocities). advance() runs the frame's kernel on those rows only; the others step
  /// as any step — a packed frame's work is then a fraction of the rows.
  [[nodiscard]] bool frame_row(int y, int z) const {
    const int e = packed.every;
    if (e == 1) return true;
    const int ry = y % e, rz = z % e;
    if (ry == 0 && rz == 0) return true;
    const auto beside = [e](int r) { return r == 0 || r == 1 || r == e - 1; };
    return velocity_full != nullptr && ((rz == 0 && beside(ry)) || (ry == 0 && beside(rz)));
  }
};

/// Steps `count` stored layers: first, first + stride, … (every owned layer, the two edge layers,
/// or the layers between them: the same update whichever, so the split changes no result).
/// Blocks of kBlockX cells along x, one block row per (y, layer): no division anywhere. A cell
/// away from the x faces with no flag (most of them) pulls its 19 populations unconditionally —
/// the loads issue back to back, none waits on a branch — and collides as cell_update does (the
/// same bits); the others take cell_update. Measured on an H200 (512³, variants of this kernel side by side):
/// 2.2 × 10¹⁰ cell updates/s against 1.8 × 10¹⁰ with cell_update alone; 64 registers cap
/// (__launch_bounds__ 8 blocks) or 256-thread blocks changed it by under 2 %.
/// kFrame: the last step before a frame, also writing `out` (FrameOut).
template <bool kFrame>
__global__ void __launch_bounds__(kBlockX, 8)
    step_kernel(const float* __restrict__ f, float* __restrict__ fo, const std::uint8_t* __restrict__ flags, Window g,
                int first, int stride, Params p, FrameOut out, int first_row = 0, int row_stride = 1) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = first_row + blockIdx.y * row_stride, lz = first + blockIdx.z * stride;
  const std::size_t plane = g.cells(), here = g.at(x, y, lz);
  const std::ptrdiff_t row = g.width, layer = static_cast<std::ptrdiff_t>(g.width) * g.height;
  if constexpr (!kFrame) {
    if (x >= g.width) return;
    if (__ldg(flags + here) != 0 || x == 0 || x == g.width - 1) {
      cell_update(f, fo, flags, x, y, lz, g, plane, p);
      return;
    }
    float ft[kQ];
#pragma unroll
    for (int i = 0; i < kQ; ++i)
      ft[i] = __ldg(f + i * plane + (static_cast<std::ptrdiff_t>(here) - cx(i) - row * cy(i) - layer * cz(i)));
    collide(ft, p);
#pragma unroll
    for (int i = 0; i < kQ; ++i) fo[i * plane + here] = ft[i];
  } else {
    std::uint64_t partial = 0;
    if (x < g.width) {
      float ft[kQ];
      bool fluid = true;
      if (__ldg(flags + here) != 0 || x == 0 || x == g.width - 1) {
        fluid = cell_collided(f, flags, x, y, lz, g, plane, p, ft);
      } else {
#pragma unroll
        for (int i = 0; i < kQ; ++i)
          ft[i] = __ldg(f + i * plane + (static_cast<std::ptrdiff_t>(here) - cx(i) - row * cy(i) - layer * cz(i)));
        collide(ft, p);
      }
#pragma unroll
      for (int i = 0; i < kQ; ++i) fo[i * plane + here] = fluid ? ft[i] : 0.0f;
      float rho, ux, uy, uz;
      stored_moments(fluid, ft, p.force, rho, ux, uy, uz);
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
    }
    add_checksum_spread(partial, out.sums);
  }
}

/// The vorticity of the owned layers after a frame's step, from the velocities it wrote (owned
/// layers) and the ghost layers' populations (a part's neighbours'): the same differences, the
/// same bits as observe_kernel.
__global__ void __launch_bounds__(kBlockX)
    vorticity_kernel(const float* __restrict__ f, const std::uint8_t* __restrict__ flags, Window g, float force,
                     const float* __restrict__ velocity, float* __restrict__ vorticity, std::uint64_t w_vorticity,
                     std::uint64_t* sum, Packed k) {
  // The frame's cells (every k-th of a packed frame), a row of the packed grid per tile row.
  const int tiles_x = (k.width + kBlockX - 1) / kBlockX;
  const std::int64_t tiles = static_cast<std::int64_t>(tiles_x) * k.height * k.layers;
  std::uint64_t partial = 0;
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int i = static_cast<int>(tile % tiles_x) * kBlockX + threadIdx.x;
    const std::int64_t r = tile / tiles_x;
    if (i >= k.width) continue;
    const int x = i * k.every, y = static_cast<int>(r % k.height) * k.every,
              lz = 1 + static_cast<int>(r / k.height) * k.every;
    const int z = g.global_layer(lz);
    const int xl = x > 0 ? x - 1 : x, xr = x < g.width - 1 ? x + 1 : x;
    const int yd = y > 0 ? y - 1 : y, yu = y < g.height - 1 ? y + 1 : y;
    const int zb = z > 0 ? lz - 1 : lz, zf = z < g.global_depth - 1 ? lz + 1 : lz;
    // The velocity of stored cell (cx, cy, cl): the frame's, or a ghost layer's from its populations.
    auto u = [&](int cx_, int cy_, int cl, float* v) {
      if (cl >= 1 && cl <= g.layers) {
        const std::size_t k = g.at(cx_, cy_, cl - 1);
        v[0] = velocity[3 * k], v[1] = velocity[3 * k + 1], v[2] = velocity[3 * k + 2];
      } else {
        float rho;
        cell_moments(f, flags, g.at(cx_, cy_, cl), g.cells(), force, rho, v[0], v[1], v[2]);
      }
    };
    float ax[3], bx[3], ay[3], by[3], az[3], bz[3];
    u(xl, y, lz, ax);
    u(xr, y, lz, bx);
    u(x, yd, lz, ay);
    u(x, yu, lz, by);
    u(x, y, zb, az);
    u(x, y, zf, bz);
    const float w = vorticity_of(ax, bx, ay, by, az, bz, static_cast<float>(xr - xl), static_cast<float>(yu - yd),
                                 static_cast<float>(zf - zb));
    const std::size_t at = static_cast<std::size_t>(r) * k.width + i;  // g.at(x, y, lz - 1) when whole
    vorticity[at] = w;
    partial += float_term(w, w_vorticity + at);
  }
  add_checksum(partial, sum);
}

/// The flags of stored layers [lz0, lz0 + gridDim.z) from the device's mask.
__global__ void flags_kernel(const std::uint8_t* __restrict__ solid, std::uint8_t* __restrict__ flags, Window g,
                             int lz0, int periodic) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, lz = lz0 + blockIdx.z;
  if (x < g.width) flags[g.at(x, blockIdx.y, lz)] = flags_of(solid, g, x, blockIdx.y, lz, periodic);
}

struct Equilibrium {
  float f[kQ];
};
/// The initial populations: `eq` (computed on the host, so both backends start from the same bits)
/// in fluid cells, 0 in solid ones.
__global__ void initial_kernel(const std::uint8_t* __restrict__ flags, std::size_t cells, Equilibrium eq,
                               float* __restrict__ f) {
  for (std::size_t c = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; c < cells;
       c += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const bool solid = (flags[c] & kSolid) != 0;
    for (int i = 0; i < kQ; ++i) f[i * cells + c] = solid ? 0.0f : eq.f[i];
  }
}

/// The first and last owned layers of every population, packed one after the other into `to_up`
/// and `to_down` (kQ × layer floats each): what the halo sends.
__global__ void pack_kernel(const float* __restrict__ f, float* __restrict__ to_up, float* __restrict__ to_down,
                            Window g) {
  const std::size_t l = g.layer_cells();
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < kQ * l;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t plane = k / l * g.cells(), c = k % l;
    to_up[k] = f[plane + l + c];
    to_down[k] = f[plane + l * g.layers + c];
  }
}
/// What the halo received, into the ghost layers of a side that has a neighbour.
__global__ void unpack_kernel(float* __restrict__ f, const float* __restrict__ from_up,
                              const float* __restrict__ from_down, Window g, bool up, bool down) {
  const std::size_t l = g.layer_cells();
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < kQ * l;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t plane = k / l * g.cells(), c = k % l;
    if (up) f[plane + c] = from_up[k];
    if (down) f[plane + l * (g.layers + 1) + c] = from_down[k];
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
__global__ void __launch_bounds__(kBlockX)
    observe_kernel(const float* __restrict__ f, const std::uint8_t* __restrict__ flags, Window g, float force,
                   ObserveTargets t, Packed k) {
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
    const Observed o =
        observe(f, flags, x, y, lz, g, g.cells(), force, at, t.velocity, t.speed, t.vorticity, t.density);
    if (t.held & 1u)
      partial += float_term(o.ux, t.w_velocity + 3 * at) + float_term(o.uy, t.w_velocity + 3 * at + 1) +
                 float_term(o.uz, t.w_velocity + 3 * at + 2);
    if (t.held & 2u) partial += float_term(o.speed, t.w_speed + at);
    if (t.held & 4u) partial += float_term(o.vorticity, t.w_vorticity + at);
    if (t.held & 8u) partial += float_term(o.rho, t.w_density + at);
  }
  add_checksum(partial, t.sum);
}


class Lbm3dCuda final : public Simulation {
 public:
  Lbm3dCuda(Executor& executor, const Window& g, Halo* halo, const Options& o)
      : executor_(executor), device_(executor.device_id()), stream_(executor.stream().get()), g_(g), halo_(halo),
        o_(o) {
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device_), "counting the GPU's SMs");
    mask_ = obstacle_mask(g_, o_);
    mask_dev_ = cuda::DeviceBuffer(g_.cells());
    flags_ = cuda::DeviceBuffer(g_.cells());
    for (auto& f : f_) {
      f = cuda::DeviceBuffer(g_.cells() * kQ * sizeof(float));
      // The ghost layers beyond the grid's faces are never written: zeros, not whatever was there.
      cuda::check(cudaMemsetAsync(f.get(), 0, f.size(), stream_), "clearing the populations");
    }
    if (halo_) {
      halo_layers_ = cuda::DeviceBuffer(4 * layer_floats() * sizeof(float));
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
    Equilibrium eq{};
    for (int i = 0; i < kQ; ++i) eq.f[i] = shifted_equilibrium(i, 0.0f, 1.0f, o_.periodic ? 0.0f : p_.u_in, 0.0f, 0.0f);
    cur_ = 0;
    for (auto& f : f_)
      initial_kernel<<<std::max(1, 8 * sms_), 256, 0, stream_>>>(flags(), g_.cells(), eq, static_cast<float*>(f.get()));
    cuda::check(cudaGetLastError(), "launching the 3-D flow's initial-state kernel");
    exchange_populations(static_cast<float*>(f_[0].get()), stream_);
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
    if (t[2].read) {  // after the step and its exchange: the ghost layers hold the neighbours' new layers
      const Packed& k = out.packed;
      const std::int64_t tiles = static_cast<std::int64_t>((k.width + kBlockX - 1) / kBlockX) * k.height * k.layers;
      vorticity_kernel<<<static_cast<unsigned>(std::min<std::int64_t>(tiles, 16 * sms_)), kBlockX, 0, stream_>>>(
          static_cast<const float*>(f_[cur_].get()), flags(), g_, p_.force,
          out.velocity_full ? out.velocity_full : static_cast<const float*>(t[0].data), static_cast<float*>(t[2].data),
          frame.vorticity.first_word, frame.vorticity.sum, k);
    }
    cuda::check(cudaGetLastError(), "launching the 3-D flow's frame kernels");
  }

  std::vector<InputSpec> inputs() const override { return lbm3d::inputs(); }
  void draw(const Stroke& s) override {
    cuda::DeviceGuard guard(device_);
    // The previous upload reads mask_ (pageable memory): let it finish before changing it.
    cuda::check(cudaStreamSynchronize(stream_), "waiting before an obstacle edit");
    const Layers l = lbm3d::draw(s, mask_, g_);
    if (l.lz0 < l.lz1) upload_mask(l.lz0, l.lz1);
  }

  std::vector<StateSpec> state() const override { return lbm3d::state(g_); }
  void save_state(const std::vector<void*>& out) override {
    cuda::DeviceGuard guard(device_);
    const auto* f = static_cast<const float*>(f_[cur_].get());
    const std::size_t owned = g_.owned_cells();
    for (int i = 0; i < kQ; ++i)
      cuda::check(cudaMemcpyAsync(static_cast<float*>(out[0]) + i * owned, f + i * g_.cells() + g_.layer_cells(),
                                  owned * sizeof(float), cudaMemcpyDeviceToHost, stream_),
                  "saving the populations");
    std::memcpy(out[1], mask_.data() + g_.layer_cells(), owned);  // the host copy is the truth
  }
  void load_state(const std::vector<const void*>& in) override {
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaStreamSynchronize(stream_), "waiting before restoring the state");
    std::memcpy(mask_.data() + g_.layer_cells(), in[1], g_.owned_cells());
    exchange_mask_ghosts(halo_, g_, mask_);
    upload_mask(0, g_.stored_layers());
    cur_ = 0;
    auto* f = static_cast<float*>(f_[0].get());
    for (int i = 0; i < kQ; ++i)
      cuda::check(cudaMemcpyAsync(f + i * g_.cells() + g_.layer_cells(),
                                  static_cast<const float*>(in[0]) + i * g_.owned_cells(),
                                  g_.owned_cells() * sizeof(float), cudaMemcpyHostToDevice, stream_),
                  "restoring the populations");
    exchange_populations(f, stream_);
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
        static_cast<const float*>(f_[cur_].get()), flags(), g_, p_.force, targets, k);
    cuda::check(cudaGetLastError(), "launching the 3-D flow's field kernel");
  }

 private:
  [[nodiscard]] std::size_t layer_floats() const { return kQ * g_.layer_cells(); }
  /// Every owned cell's velocity, for a packed frame's vorticity (allocated the first time).
  float* velocity_scratch() {
    if (velocity_full_.get() == nullptr) velocity_full_ = cuda::DeviceBuffer(3 * g_.owned_cells() * sizeof(float));
    return static_cast<float*>(velocity_full_.get());
  }
  [[nodiscard]] const std::uint8_t* flags() const { return static_cast<const std::uint8_t*>(flags_.get()); }
  /// `steps` steps; the last writes `out`'s fields when given (a frame's step).
  void advance(std::uint32_t steps, const FrameOut* out) {
    const int layers = g_.layers;
    for (std::uint32_t s = 0; s < steps; ++s) {
      const auto* f = static_cast<const float*>(f_[cur_].get());
      auto* fo = static_cast<float*>(f_[1 - cur_].get());
      const FrameOut* o = s + 1 == steps ? out : nullptr;
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
            step_layers(f, fo, 1 + rz, e, n, nullptr);  // no row of these layers works for the frame
            continue;
          }
          for (int ry = 0; ry < e; ++ry) {
            const int rows = count(g_.height, ry);
            if (rows > 0) step_layers(f, fo, 1 + rz, e, n, o->frame_row(ry, rz) ? o : nullptr, ry, e, rows);
          }
        }
        exchange_populations(fo, stream_);
      } else if (!halo_ || !o_.overlap) {
        step_layers(f, fo, 1, 1, layers, o);
        exchange_populations(fo, stream_);
      } else {
        overlap_->step(
            stream_, [&](cudaStream_t) { step_layers(f, fo, 1, std::max(1, layers - 1), std::min(layers, 2), o); },
            [&](cudaStream_t halo) { exchange_populations(fo, halo); },
            [&](cudaStream_t) { if (layers > 2) step_layers(f, fo, 2, 1, layers - 2, o); });
      }
      cur_ = 1 - cur_;
    }
    cuda::check(cudaGetLastError(), "launching the 3-D flow's step kernel");
  }
  /// Steps `count` stored layers from `first`, every `stride`-th; of each, `rows` rows from
  /// `first_row`, every `row_stride`-th (all rows by default).
  void step_layers(const float* f, float* fo, int first, int stride, int count, const FrameOut* out, int first_row = 0,
                   int row_stride = 1, int rows = -1) {
    const dim3 grid((g_.width + kBlockX - 1) / kBlockX, rows < 0 ? g_.height : rows, count);
    if (out)
      step_kernel<true><<<grid, kBlockX, 0, stream_>>>(f, fo, flags(), g_, first, stride, p_, *out, first_row, row_stride);
    else
      step_kernel<false>
          <<<grid, kBlockX, 0, stream_>>>(f, fo, flags(), g_, first, stride, p_, FrameOut{}, first_row, row_stride);
  }
  /// Queued on `stream`: sends the edge layers of `f` to the neighbouring parts and writes what
  /// they send into its ghost layers. Nothing without a halo (the whole grid).
  void exchange_populations(float* f, cudaStream_t stream) {
    if (!halo_) return;
    auto* to_up = static_cast<float*>(halo_layers_.get());
    float *to_down = to_up + layer_floats(), *from_up = to_down + layer_floats(), *from_down = from_up + layer_floats();
    const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((layer_floats() + 255) / 256, 16 * sms_));
    pack_kernel<<<blocks, 256, 0, stream>>>(f, to_up, to_down, g_);
    cuda::check(cudaGetLastError(), "launching the halo pack kernel");
    halo_->exchange(to_up, from_up, to_down, from_down, layer_floats() * sizeof(float), true, stream);
    unpack_kernel<<<blocks, 256, 0, stream>>>(f, from_up, from_down, g_, halo_->has_up(), halo_->has_down());
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
                                                static_cast<std::uint8_t*>(flags_.get()), g_, lz0, o_.periodic ? 1 : 0);
    cuda::check(cudaGetLastError(), "launching the obstacle-flags kernel");
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after computing the obstacle flags");
  }
  Executor& executor_;
  int device_, sms_ = 1;
  cudaStream_t stream_;
  Window g_;
  Halo* halo_;
  Options o_;
  Params p_;
  std::vector<std::uint8_t> mask_;  ///< the stored layers' obstacles (ghost layers included)
  cuda::DeviceBuffer mask_dev_, flags_, f_[2];
  int cur_ = 0;
  cuda::DeviceBuffer velocity_full_;  ///< velocity_scratch()
  cuda::DeviceBuffer halo_layers_;  ///< to up, to down, from up, from down: one layer of every plane each
  std::optional<SlabOverlap> overlap_;
  ChecksumSlots sums_;  ///< a frame step's partial checksums
};

}  // namespace

std::unique_ptr<Simulation> make_cuda(Executor& executor, const Window& g, Halo* halo, const Options& o) {
  return std::make_unique<Lbm3dCuda>(executor, g, halo, o);
}

}  // namespace cuview::sim::lbm3d
