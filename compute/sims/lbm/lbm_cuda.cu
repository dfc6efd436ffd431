// The lattice-Boltzmann flow on the CUDA executor: populations (float32, or FP16S with
// storage=fp16s: the kernels take the stored type T) double-buffered on the device, one
// thread per cell running lbm_cell (lbm.hpp) per step; the published fields are written by the
// last step before a frame, from the moments its collision holds (step_and_write), or by a second
// kernel straight into the ring slot (write_fields: a frame without a step, e.g. while paused). A part of a decomposed grid (sims/slab.hpp) steps
// its two edge rows first and exchanges them on a high-priority stream while it steps the rows
// between (overlap=on), so the neighbours' rows arrive while the GPU is still busy.
#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "cuview/error.hpp"
#include "cuview/cuda/checksum.cuh"
#include "executor/executor.hpp"
#include "sims/flow_frame_cuda.hpp"
#include "sims/lbm/lbm_setup.hpp"
#include "sims/slab_overlap_cuda.hpp"

namespace cuview::sim::lbm {
namespace {

constexpr int kBlockX = 256, kBlockY = 1;

/// The last step before a frame writes density, speed and velocity (FlowFrameOut) from the
/// populations it has just collided, in registers — the same bits as the separate pass
/// (lbm_observe_kernel), which reads them back from memory; vorticity, which needs the
/// neighbours' velocities, comes from a kernel after the step.
using FrameOut = FlowFrameOut;

/// Steps `count` stored rows: first, first + stride, … (every owned row, the two edge rows, or the
/// rows between them: the same lbm_cell whichever, so the results do not depend on the split).
/// kFrame: the last step before a frame, also writing `out` (FrameOut).
template <class T, bool kFrame>
__global__ void __launch_bounds__(kBlockX* kBlockY)
    lbm_step_kernel(const T* __restrict__ f, T* __restrict__ fo, const std::uint16_t* __restrict__ flags,
                    int width, int height, int first, int stride, int count, LbmParams p, FrameOut out) {
  const int x = blockIdx.x * kBlockX + threadIdx.x, j = blockIdx.y * kBlockY + threadIdx.y;
  const std::size_t plane = static_cast<std::size_t>(width) * height;
  if constexpr (!kFrame) {
    if (x < width && j < count) lbm_cell(f, fo, flags, x, first + j * stride, width, plane, p);
  } else {
    std::uint64_t partial = 0;
    if (x < width && j < count) {
      const int y = first + j * stride;
      const std::size_t here = static_cast<std::size_t>(y) * width + x;
      float ft[kQ];
      const bool fluid = lbm_update(f, flags, x, y, width, plane, p, ft);
      CUVIEW_UNROLL
      for (int i = 0; i < kQ; ++i) {
        fo[i * plane + here] = encode<T>(fluid ? ft[i] : 0.0f);
        ft[i] = stored<T>(ft[i]);  // the moments of what is stored, as write_fields reads them
      }
      float rho, ux, uy;
      stored_moments(fluid, ft, p.force, rho, ux, uy);
      const std::size_t at = here - width;  // in the published frame: owned rows only
      if (out.velocity) {
        out.velocity[2 * at] = ux;
        out.velocity[2 * at + 1] = uy;
        if (out.held & 1u) partial += float_term(ux, out.w_velocity + 2 * at) + float_term(uy, out.w_velocity + 2 * at + 1);
      }
      if (out.speed) {
        const float speed = speed_of(ux, uy);
        out.speed[at] = speed;
        partial += float_term(speed, out.w_speed + at);
      }
      if (out.density) {
        out.density[at] = rho;
        partial += float_term(rho, out.w_density + at);
      }
    }
    add_checksum_spread(partial, out.sums);
  }
}

/// The vorticity of the owned rows after a frame's step, from the velocities it wrote (owned rows)
/// and the ghost rows' populations (a part's neighbours' rows): the same differences, the same bits
/// as lbm_observe_kernel. Blocks of 256 cells of a row; blockIdx.x picks the block of the row,
/// blockIdx.y and the stride the rows (no 64-bit division a cell).
template <class T>
__global__ void __launch_bounds__(256)
    lbm_vorticity_kernel(const T* __restrict__ f, const std::uint16_t* __restrict__ flags, Window g, float force,
                         const float* __restrict__ velocity, float* __restrict__ vorticity, std::uint64_t w_vorticity,
                         std::uint64_t* sum) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  std::uint64_t partial = 0;
  for (int row = blockIdx.y; row < g.rows && x < g.width; row += gridDim.y) {
    const int y = row + 1, gy = g.first_row + row;  // y: a stored row
    const int xl = x > 0 ? x - 1 : x, xr = x < g.width - 1 ? x + 1 : x;
    const int yd = gy > 0 ? y - 1 : y, yu = gy < g.global_height - 1 ? y + 1 : y;
    const std::size_t at = static_cast<std::size_t>(row) * g.width + x;
    // A stored row's velocity at column c: the frame's, or a ghost row's from its populations.
    auto u = [&](int c, int stored, float& ux, float& uy) {
      if (stored >= 1 && stored <= g.rows) {
        const float* v = velocity + 2 * (at + (c - x) + static_cast<std::ptrdiff_t>(stored - y) * g.width);
        ux = v[0], uy = v[1];
      } else {
        float r;
        cell_moments(f, flags, static_cast<std::size_t>(stored) * g.width + c, g.cells(), force, r, ux, uy);
      }
    };
    float uxl, uyl, uxr, uyr, uxd, uyd, uxu, uyu;
    u(xl, y, uxl, uyl);
    u(xr, y, uxr, uyr);
    u(x, yd, uxd, uyd);
    u(x, yu, uxu, uyu);
    const float w = vorticity_of(uyl, uyr, uxd, uxu, static_cast<float>(xr - xl), static_cast<float>(yu - yd));
    vorticity[at] = w;
    partial += float_term(w, w_vorticity + at);
  }
  add_checksum(partial, sum);
}

/// Every stored cell's flags from the mask (stored_flags, as the host computes them).
__global__ void lbm_flags_kernel(const std::uint8_t* __restrict__ solid, std::uint16_t* __restrict__ flags, Window g,
                                 bool periodic) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < g.width && y < g.stored_rows())
    flags[static_cast<std::size_t>(y) * g.width + x] = stored_flags(solid, g, x, y, periodic);
}

struct Equilibrium {
  float f[kQ];
};
/// The initial populations: `eq` (computed on the host, so both backends start from the same bits)
/// in fluid cells, 0 in solid ones.
template <class T>
__global__ void lbm_initial_kernel(const std::uint16_t* __restrict__ flags, std::size_t cells, Equilibrium eq,
                                   T* __restrict__ f) {
  for (std::size_t c = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; c < cells;
       c += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const bool solid = (flags[c] & kSolidBit) != 0;
    for (int i = 0; i < kQ; ++i) f[i * cells + c] = encode<T>(solid ? 0.0f : eq.f[i]);
  }
}

/// The first and last owned rows of every population plane, packed one after the other into
/// `to_up` and `to_down` (kQ × width values each): what the halo sends.
template <class T>
__global__ void lbm_pack_kernel(const T* __restrict__ f, T* __restrict__ to_up, T* __restrict__ to_down, Window g) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x,
                    w = static_cast<std::size_t>(g.width);
  if (k >= kQ * w) return;
  const std::size_t plane = k / w * g.cells(), x = k % w;
  to_up[k] = f[plane + w + x];
  to_down[k] = f[plane + w * g.rows + x];
}
/// What the halo received, into the ghost rows of a side that has a neighbour.
template <class T>
__global__ void lbm_unpack_kernel(T* __restrict__ f, const T* __restrict__ from_up, const T* __restrict__ from_down,
                                  Window g, bool up, bool down) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x,
                    w = static_cast<std::size_t>(g.width);
  if (k >= kQ * w) return;
  const std::size_t plane = k / w * g.cells(), x = k % w;
  if (up) f[plane + x] = from_up[k];
  if (down) f[plane + w * (g.rows + 1) + x] = from_down[k];
}

/// The published fields of the owned rows, written straight into the ring slot, their checksum
/// terms added as they are written (Executor::sum_into): a fixed grid of blocks walks 32×8 tiles,
/// so each block adds its sum with one atomic.
struct ObserveTargets {
  float *velocity, *speed, *vorticity, *density;
  std::uint64_t w_velocity, w_speed, w_vorticity, w_density;  // first words in the slot
  std::uint64_t* sum;
  /// Which fields the frame holds (bits: velocity, speed, vorticity, density): only their terms
  /// are summed (the others are written, but nobody reads them).
  unsigned held;
};
constexpr int kTileW = 32, kTileH = 8;

template <class T>
__global__ void __launch_bounds__(kTileW* kTileH)
    lbm_observe_kernel(const T* __restrict__ f, const std::uint16_t* __restrict__ flags, Window g, float force,
                       ObserveTargets t) {
  const int tiles_x = (g.width + kTileW - 1) / kTileW, tiles = tiles_x * ((g.rows + kTileH - 1) / kTileH);
  std::uint64_t partial = 0;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int x = (tile % tiles_x) * kTileW + threadIdx.x, y = (tile / tiles_x) * kTileH + threadIdx.y;
    if (x >= g.width || y >= g.rows) continue;
    const std::size_t at = static_cast<std::size_t>(y) * g.width + x;  // in the published frame: owned rows only
    const Observed o = lbm_observe(f, flags, x, y + 1, g.width, g.cells(), g.first_row + y, g.global_height,
                                   force, at, t.velocity, t.speed, t.vorticity, t.density);
    if (t.held & 1u) partial += float_term(o.ux, t.w_velocity + 2 * at) + float_term(o.uy, t.w_velocity + 2 * at + 1);
    if (t.held & 2u) partial += float_term(o.speed, t.w_speed + at);
    if (t.held & 4u) partial += float_term(o.vorticity, t.w_vorticity + at);
    if (t.held & 8u) partial += float_term(o.rho, t.w_density + at);
  }
  add_checksum(partial, t.sum);
}

/// Populations of type T (float, or FP16S's binary16 bits).
template <class T>
class LbmCuda final : public Simulation {
 public:
  LbmCuda(Executor& executor, const Window& g, Halo* halo, const LbmOptions& o)
      : executor_(executor),
        device_(executor.device_id()),
        stream_(executor.stream().get()),
        g_(g),
        halo_(halo),
        o_(o) {
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device_), "counting the GPU's SMs");
    mask_ = obstacle_mask(g_, o_);
    flags_ = cuda::DeviceBuffer(g_.cells() * sizeof(std::uint16_t));
    for (auto& f : f_) {
      f = cuda::DeviceBuffer(g_.cells() * kQ * sizeof(T));
      // The ghost rows of a grid's outer edges are never written: zeros, not whatever was there.
      cuda::check(cudaMemsetAsync(f.get(), 0, f.size(), stream_), "clearing the populations");
    }
    if (halo_) {
      halo_rows_ = cuda::DeviceBuffer(4 * row_values() * sizeof(T));
      overlap_.emplace("the lattice-Boltzmann flow");
    }
    upload_mask();
  }
  std::vector<FieldSpec> fields() const override { return lbm::fields(); }
  std::vector<ParamSpec> params() const override { return lbm::params(); }
  std::vector<Preset> presets() const override { return lbm::presets(); }
  void set_params(const std::map<std::string, double>& values) override { p_ = from(values, o_); }

  void reset(std::uint64_t) override {
    cuda::DeviceGuard guard(device_);
    Equilibrium eq{};
    for (int i = 0; i < kQ; ++i) eq.f[i] = shifted_equilibrium(i, 0.0f, 1.0f, o_.periodic ? 0.0f : p_.u_in, 0.0f);
    cur_ = 0;
    lbm_initial_kernel<<<std::max(1, 8 * sms_), 256, 0, stream_>>>(static_cast<const std::uint16_t*>(flags_.get()),
                                                                   g_.cells(), eq, static_cast<T*>(f_[0].get()));
    cuda::check(cudaGetLastError(), "launching the lattice-Boltzmann initial-state kernel");
    exchange_populations(static_cast<T*>(f_[0].get()), stream_);
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after reset");
  }

  void step(std::uint32_t steps) override {
    cuda::DeviceGuard guard(device_);
    advance(steps, nullptr);
  }

  bool writes_in_step() const override { return true; }
  void step_and_write(std::uint32_t steps, const std::vector<FieldTarget>& t) override {
    cuda::DeviceGuard guard(device_);
    if (steps > 1) advance(steps - 1, nullptr);
    executor_.frame_step_begins(1, executor_.stream());  // the frame's time: its step and kernels
    const FlowFrame frame = flow_frame(executor_, t, sums_, stream_);
    advance(1, &frame.out);
    sums_.add_into(frame.sum, stream_);
    if (t[2].read)  // after the step and its exchange: the ghost rows hold the neighbours' new rows
      lbm_vorticity_kernel<<<vorticity_grid(), 256, 0, stream_>>>(
          static_cast<const T*>(f_[cur_].get()), static_cast<const std::uint16_t*>(flags_.get()), g_, p_.force,
          static_cast<const float*>(t[0].data), static_cast<float*>(t[2].data), frame.vorticity.first_word,
          frame.vorticity.sum);
    cuda::check(cudaGetLastError(), "launching the lattice-Boltzmann frame kernels");
  }

  std::vector<InputSpec> inputs() const override { return lbm::inputs(); }
  void draw(const Stroke& s) override {
    cuda::DeviceGuard guard(device_);
    // The previous upload reads flags_host_ (pageable memory): let it finish before changing it.
    cuda::check(cudaStreamSynchronize(stream_), "waiting before an obstacle edit");
    if (flags_host_.empty()) {  // made on the GPU at the start: fetched at the first edit
      flags_host_.resize(g_.cells());
      cuda::check(
          cudaMemcpy(flags_host_.data(), flags_.get(), g_.cells() * sizeof(std::uint16_t), cudaMemcpyDeviceToHost),
          "fetching the obstacle flags");
    }
    const Touched t = lbm::draw(s, mask_, flags_host_, g_, o_);
    if (t.y0 >= t.y1) return;  // the stroke misses this part's rows
    const std::size_t pitch = static_cast<std::size_t>(g_.width) * sizeof(std::uint16_t);
    const std::size_t first = static_cast<std::size_t>(t.y0) * g_.width + t.x0;
    cuda::check(cudaMemcpy2DAsync(static_cast<std::uint16_t*>(flags_.get()) + first, pitch, flags_host_.data() + first,
                                  pitch, static_cast<std::size_t>(t.x1 - t.x0) * sizeof(std::uint16_t),
                                  static_cast<std::size_t>(t.y1 - t.y0), cudaMemcpyHostToDevice, stream_),
                "uploading an obstacle edit");
  }

  std::vector<StateSpec> state() const override { return lbm::state(g_.width, g_.rows, o_); }
  void save_state(const std::vector<void*>& out) override {
    cuda::DeviceGuard guard(device_);
    // The owned rows of each plane, one after the other (a whole grid's rows, in a checkpoint).
    // One copy per plane: a plane's pitch may exceed what cudaMemcpy2D takes (cudaDevAttrMaxPitch).
    const auto* f = static_cast<const T*>(f_[cur_].get());
    for (int i = 0; i < kQ; ++i)
      cuda::check(cudaMemcpyAsync(static_cast<T*>(out[0]) + i * g_.owned_cells(), f + i * g_.cells() + g_.width,
                                  g_.owned_cells() * sizeof(T), cudaMemcpyDeviceToHost, stream_),
                  "saving the populations");
    // The host copy is the truth (draw() keeps it).
    std::memcpy(out[1], mask_.data() + g_.width, g_.owned_cells());
  }
  void load_state(const std::vector<const void*>& in) override {
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaStreamSynchronize(stream_), "waiting before restoring the state");  // flags_host_ may be in flight
    std::memcpy(mask_.data() + g_.width, in[1], g_.owned_cells());
    exchange_mask_ghosts(halo_, g_, mask_);
    upload_mask();
    cur_ = 0;
    auto* f = static_cast<T*>(f_[0].get());
    for (int i = 0; i < kQ; ++i)
      cuda::check(
          cudaMemcpyAsync(f + i * g_.cells() + g_.width, static_cast<const T*>(in[0]) + i * g_.owned_cells(),
                          g_.owned_cells() * sizeof(T), cudaMemcpyHostToDevice, stream_),
          "restoring the populations");
    exchange_populations(f, stream_);
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after restoring the state");
  }

  void write_fields(const std::vector<FieldTarget>& t) override {
    cuda::DeviceGuard guard(device_);
    const FieldChecksum v = executor_.sum_into(t[0]), s = executor_.sum_into(t[1]), w = executor_.sum_into(t[2]),
                        d = executor_.sum_into(t[3]);
    const ObserveTargets targets{static_cast<float*>(t[0].data),
                                 static_cast<float*>(t[1].data),
                                 static_cast<float*>(t[2].data),
                                 static_cast<float*>(t[3].data),
                                 v.first_word,
                                 s.first_word,
                                 w.first_word,
                                 d.first_word,
                                 // the frame's checksum: a held field's sink (an unheld one's goes nowhere)
                                 t[0].read ? v.sum : t[1].read ? s.sum : t[2].read ? w.sum : d.sum,
                                 (t[0].read ? 1u : 0u) | (t[1].read ? 2u : 0u) | (t[2].read ? 4u : 0u) | (t[3].read ? 8u : 0u)};
    const int tiles = ((g_.width + kTileW - 1) / kTileW) * ((g_.rows + kTileH - 1) / kTileH);
    lbm_observe_kernel<<<std::min(tiles, 8 * sms_), dim3(kTileW, kTileH), 0, stream_>>>(
        static_cast<const T*>(f_[cur_].get()), static_cast<const std::uint16_t*>(flags_.get()), g_, p_.force,
        targets);
    cuda::check(cudaGetLastError(), "launching the lattice-Boltzmann field kernel");
  }

 private:
  /// lbm_vorticity_kernel's grid: the blocks across a row, by enough rows for 8 blocks an SM.
  [[nodiscard]] dim3 vorticity_grid() const {
    const int across = (g_.width + 255) / 256;
    return dim3(across, std::clamp(8 * sms_ / across, 1, std::clamp(g_.rows, 1, 65535)));
  }
  [[nodiscard]] std::size_t row_values() const { return static_cast<std::size_t>(kQ) * g_.width; }
  /// `steps` steps; the last writes `out`'s fields when given (a frame's step).
  void advance(std::uint32_t steps, const FrameOut* out) {
    const int rows = g_.rows;
    for (std::uint32_t s = 0; s < steps; ++s) {
      const auto* f = static_cast<const T*>(f_[cur_].get());
      auto* fo = static_cast<T*>(f_[1 - cur_].get());
      const FrameOut* o = s + 1 == steps ? out : nullptr;
      if (!halo_ || !o_.overlap) {
        step_rows(f, fo, 1, 1, rows, o);
        exchange_populations(fo, stream_);
      } else {
        overlap_->step(
            stream_, [&](cudaStream_t) { step_rows(f, fo, 1, std::max(1, rows - 1), std::min(rows, 2), o); },
            [&](cudaStream_t halo) { exchange_populations(fo, halo); },
            [&](cudaStream_t) { if (rows > 2) step_rows(f, fo, 2, 1, rows - 2, o); });
      }
      cur_ = 1 - cur_;
    }
    cuda::check(cudaGetLastError(), "launching the lattice-Boltzmann step kernel");
  }
  /// Steps `count` stored rows from `first`, `stride` apart, on the executor's stream, writing
  /// `out` when given.
  void step_rows(const T* f, T* fo, int first, int stride, int count, const FrameOut* out) {
    const dim3 block(kBlockX, kBlockY), grid((g_.width + kBlockX - 1) / kBlockX, (count + kBlockY - 1) / kBlockY);
    const auto* flags = static_cast<const std::uint16_t*>(flags_.get());
    if (out)
      lbm_step_kernel<T, true><<<grid, block, 0, stream_>>>(f, fo, flags, g_.width, g_.stored_rows(), first, stride, count,
                                                         p_, *out);
    else
      lbm_step_kernel<T, false><<<grid, block, 0, stream_>>>(f, fo, flags, g_.width, g_.stored_rows(), first, stride,
                                                          count, p_, FrameOut{});
  }
  /// Queued on `stream`: sends the edge rows of `f` to the neighbouring parts and writes what they
  /// send into its ghost rows. Nothing without a halo (the whole grid).
  void exchange_populations(T* f, cudaStream_t stream) {
    if (!halo_) return;
    auto* to_up = static_cast<T*>(halo_rows_.get());
    T *to_down = to_up + row_values(), *from_up = to_down + row_values(), *from_down = from_up + row_values();
    const unsigned blocks = static_cast<unsigned>((row_values() + 255) / 256);
    lbm_pack_kernel<<<blocks, 256, 0, stream>>>(f, to_up, to_down, g_);
    cuda::check(cudaGetLastError(), "launching the halo pack kernel");
    halo_->exchange(to_up, from_up, to_down, from_down, row_values() * sizeof(T), true, stream);
    lbm_unpack_kernel<<<blocks, 256, 0, stream>>>(f, from_up, from_down, g_, halo_->has_up(), halo_->has_down());
    cuda::check(cudaGetLastError(), "launching the halo unpack kernel");
  }
  /// The device flags from mask_, computed on the GPU; the host copy is made again at the next edit.
  void upload_mask() {
    cuda::DeviceBuffer solid(g_.cells());
    cuda::check(cudaMemcpyAsync(solid.get(), mask_.data(), g_.cells(), cudaMemcpyHostToDevice, stream_),
                "uploading the obstacle mask");
    const dim3 block(32, 8), grid((g_.width + 31) / 32, (g_.stored_rows() + 7) / 8);
    lbm_flags_kernel<<<grid, block, 0, stream_>>>(static_cast<const std::uint8_t*>(solid.get()),
                                                  static_cast<std::uint16_t*>(flags_.get()), g_, o_.periodic);
    cuda::check(cudaGetLastError(), "launching the obstacle-flags kernel");
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after computing the obstacle flags");
    flags_host_.clear();
    flags_host_.shrink_to_fit();
  }
  Executor& executor_;
  int device_, sms_ = 1;
  cudaStream_t stream_;
  Window g_;
  Halo* halo_;
  LbmOptions o_;
  LbmParams p_;
  std::vector<std::uint8_t> mask_;  ///< the stored rows' obstacles (ghost rows included)
  std::vector<std::uint16_t> flags_host_;
  cuda::DeviceBuffer flags_, f_[2];
  int cur_ = 0;
  // A part of a decomposed grid only: the rows it exchanges, and the stream that exchanges them.
  cuda::DeviceBuffer halo_rows_;  ///< to up, to down, from up, from down: one row of every plane each
  std::optional<SlabOverlap> overlap_;
  ChecksumSlots sums_;  ///< a frame step's partial checksums
};

}  // namespace

std::unique_ptr<Simulation> make_cuda(Executor& executor, const Window& g, Halo* halo, const LbmOptions& o) {
  if (o.fp16s) return std::make_unique<LbmCuda<std::uint16_t>>(executor, g, halo, o);
  return std::make_unique<LbmCuda<float>>(executor, g, halo, o);
}

}  // namespace cuview::sim::lbm
