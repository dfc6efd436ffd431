// Gray–Scott's CUDA kernels and its Simulation on the CUDA executor: state double-buffered on
// the device; a batch of steps is fused launches of K steps (temporal blocking) plus one-step
// launches for what is left over; both call laplacian5 and grayscott_update, so every K gives
// the same bits. The last launch before a frame also writes the frame (step_and_write).
#include <algorithm>
#include <vector>

#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "cuview/error.hpp"
#include "executor/executor.hpp"
#include "sims/grayscott/grayscott_setup.hpp"
#include "sims/grayscott/uv_state_cuda.hpp"

namespace cuview::sim::grayscott {
namespace {
using cuview::sim::GrayScottParams;

// One step per launch. Each thread owns one column of kRows cells and marches down it, keeping
// the rows above, at and below in registers: per cell it loads one new row of u and v plus the
// left and right neighbours (which its warp has just loaded: L1 hits). Periodic wrap is resolved
// once per column.
constexpr int kBlockX = 32, kBlockY = 8, kRows = 16;

// kFrame: the last step before a frame, also writing the frame (UvFrameOut).
using FrameOut = UvFrameOut;

/// One thread's column of the one-step kernel: kRows cells from (x, y0) down; returns the checksum
/// terms of what it wrote into the frame (kFrame).
template <bool kFrame>
__device__ inline std::uint64_t step_column(const float* __restrict__ u, const float* __restrict__ v,
                                            float* __restrict__ uo, float* __restrict__ vo, int width, int height,
                                            const GrayScottParams& p, const FrameOut& out, int x, int y0) {
  std::uint64_t partial = 0;
  const int xl = x == 0 ? width - 1 : x - 1;
  const int xr = x == width - 1 ? 0 : x + 1;
  const std::size_t w = static_cast<std::size_t>(width);
  std::size_t row = static_cast<std::size_t>(y0) * w;
  const std::size_t up = static_cast<std::size_t>(y0 == 0 ? height - 1 : y0 - 1) * w;
  float u_up = __ldg(u + up + x), v_up = __ldg(v + up + x);
  float uc = __ldg(u + row + x), vc = __ldg(v + row + x);
  const int rows = min(kRows, height - y0);
  for (int r = 0; r < rows; ++r) {
    const int y = y0 + r;
    const std::size_t down = static_cast<std::size_t>(y == height - 1 ? 0 : y + 1) * w;
    const float u_down = __ldg(u + down + x), v_down = __ldg(v + down + x);
    const float lap_u = laplacian5(__ldg(u + row + xl), __ldg(u + row + xr), u_up, u_down, uc);
    const float lap_v = laplacian5(__ldg(v + row + xl), __ldg(v + row + xr), v_up, v_down, vc);
    float un, vn;
    grayscott_update(uc, vc, lap_u, lap_v, p, un, vn);
    uo[row + x] = un, vo[row + x] = vn;
    if constexpr (kFrame) {
      if (out.u) {
        out.u[row + x] = un;
        partial += float_term(un, out.w_u + row + x);
      }
      if (out.v) {
        out.v[row + x] = vn;
        partial += float_term(vn, out.w_v + row + x);
      }
    }
    u_up = uc, v_up = vc;
    uc = u_down, vc = v_down;
    row = down;
  }
  return partial;
}

template <bool kFrame>
__global__ void __launch_bounds__(kBlockX* kBlockY)
    grayscott_step_kernel(const float* __restrict__ u, const float* __restrict__ v, float* __restrict__ uo,
                          float* __restrict__ vo, int width, int height, GrayScottParams p, FrameOut out) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y0 = (blockIdx.y * kBlockY + threadIdx.y) * kRows;
  if constexpr (kFrame) {
    std::uint64_t partial = 0;
    if (x < width && y0 < height) partial = step_column<true>(u, v, uo, vo, width, height, p, out, x, y0);
    add_checksum_spread(partial, out.sums);
  } else {
    if (x < width && y0 < height) (void)step_column<false>(u, v, uo, vo, width, height, p, out, x, y0);
  }
}

// K steps per launch (temporal blocking): a block loads a tile of kTileX x kTileY cells plus a
// halo of K cells into shared memory, runs K-1 steps there (each shrinking the valid region by
// one cell per side) and writes the K-th step's tile. Memory traffic per step drops by ~K at
// the price of recomputing the halo. Within a step each thread marches down one column segment
// with the rows above, at and below in registers (6 shared-memory loads per cell, not 10). The
// arithmetic is grayscott_update on laplacian5, as in the one-step kernel: the same bits.
constexpr int kTileX = 64, kTileY = 32, kTileThreads = 256;
constexpr int kMaxFused = 4;  // 2 x 2 fields x (64+8) x (32+8) floats = 46 KB of shared memory

__device__ __forceinline__ int wrap(int i, int n) { return ((i % n) + n) % n; }

/// One step over the region [S, SW-S) x [S, SH-S) of a tile of row stride SW, from (iu, iv) into
/// shared (ou, ov) with the same layout, or, on the last step, into the global grid.
template <int SW, int SH, int S, bool Last, bool kFrame>
__device__ __forceinline__ void tile_step(const float* iu, const float* iv, float* ou, float* ov, int x0, int y0,
                                          int width, int height, const GrayScottParams& p, const FrameOut& out,
                                          std::uint64_t& partial) {
  constexpr int w = SW - 2 * S, h = SH - 2 * S;
  constexpr int segments = kTileThreads / w > 0 ? kTileThreads / w : 1;  // column segments per column
  constexpr int len = (h + segments - 1) / segments;
  for (int item = threadIdx.x; item < w * segments; item += kTileThreads) {
    const int col = S + item % w;
    const int r0 = S + (item / w) * len;
    const int r1 = min(r0 + len, SH - S);
    if (r0 >= r1) continue;
    float u_up = iu[(r0 - 1) * SW + col], v_up = iv[(r0 - 1) * SW + col];
    float uc = iu[r0 * SW + col], vc = iv[r0 * SW + col];
    for (int r = r0; r < r1; ++r) {
      const float u_down = iu[(r + 1) * SW + col], v_down = iv[(r + 1) * SW + col];
      const float lap_u = laplacian5(iu[r * SW + col - 1], iu[r * SW + col + 1], u_up, u_down, uc);
      const float lap_v = laplacian5(iv[r * SW + col - 1], iv[r * SW + col + 1], v_up, v_down, vc);
      if constexpr (Last) {
        const int gx = x0 + col, gy = y0 + r;
        if (gx < width && gy < height) {
          const std::size_t g = static_cast<std::size_t>(gy) * width + gx;
          float un, vn;
          grayscott_update(uc, vc, lap_u, lap_v, p, un, vn);
          ou[g] = un, ov[g] = vn;
          if constexpr (kFrame) {
            if (out.u) {
              out.u[g] = un;
              partial += float_term(un, out.w_u + g);
            }
            if (out.v) {
              out.v[g] = vn;
              partial += float_term(vn, out.w_v + g);
            }
          }
        }
      } else {
        grayscott_update(uc, vc, lap_u, lap_v, p, ou[r * SW + col], ov[r * SW + col]);
      }
      u_up = uc, v_up = vc;
      uc = u_down, vc = v_down;
    }
  }
}

template <int SW, int SH, int K, int S, bool kFrame>
__device__ __forceinline__ void tile_steps(float (*su)[SH * SW], float (*sv)[SH * SW], float* uo, float* vo, int x0,
                                           int y0, int width, int height, const GrayScottParams& p,
                                           const FrameOut& out, std::uint64_t& partial) {
  constexpr int a = (S - 1) & 1, b = S & 1;
  if constexpr (S == K) {
    tile_step<SW, SH, S, true, kFrame>(su[a], sv[a], uo, vo, x0, y0, width, height, p, out, partial);
  } else {
    tile_step<SW, SH, S, false, false>(su[a], sv[a], su[b], sv[b], x0, y0, width, height, p, out, partial);
    __syncthreads();
    tile_steps<SW, SH, K, S + 1, kFrame>(su, sv, uo, vo, x0, y0, width, height, p, out, partial);
  }
}

/// kFrame: the launch ending with the step before a frame also writes the frame (FrameOut).
template <int K, bool kFrame>
__global__ void __launch_bounds__(kTileThreads)
    grayscott_fused_kernel(const float* __restrict__ u, const float* __restrict__ v, float* __restrict__ uo,
                           float* __restrict__ vo, int width, int height, GrayScottParams p, FrameOut out) {
  static_assert(K >= 2 && K <= kMaxFused);
  constexpr int SW = kTileX + 2 * K, SH = kTileY + 2 * K;
  __shared__ float su[2][SH * SW], sv[2][SH * SW];
  const int x0 = blockIdx.x * kTileX - K, y0 = blockIdx.y * kTileY - K;  // global cell of tile cell 0
  const bool inside = x0 >= 0 && y0 >= 0 && x0 + SW <= width && y0 + SH <= height;
  for (int i = threadIdx.x; i < SW * SH; i += kTileThreads) {
    const int ly = i / SW, lx = i - ly * SW;
    const int gx = inside ? x0 + lx : wrap(x0 + lx, width);
    const int gy = inside ? y0 + ly : wrap(y0 + ly, height);
    const std::size_t g = static_cast<std::size_t>(gy) * width + gx;
    su[0][i] = __ldg(u + g);
    sv[0][i] = __ldg(v + g);
  }
  __syncthreads();
  std::uint64_t partial = 0;
  tile_steps<SW, SH, K, 1, kFrame>(su, sv, uo, vo, x0, y0, width, height, p, out, partial);
  if constexpr (kFrame) add_checksum_spread(partial, out.sums);
}

/// u = 1, v = 0 everywhere (initial_state's background).
__global__ void gs_fill_kernel(float* __restrict__ u, float* __restrict__ v, std::size_t cells) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < cells;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    u[i] = 1.0f;
    v[i] = 0.0f;
  }
}

/// Square `s` of initial_state(), one thread per cell; squares are launched in order, so a later
/// one overwrites an earlier one as on the host.
__global__ void gs_square_kernel(float* __restrict__ u, float* __restrict__ v, int width, int height,
                                 std::uint64_t seed, Squares sq, int s) {
  const int dx = blockIdx.x * blockDim.x + threadIdx.x, dy = blockIdx.y * blockDim.y + threadIdx.y;
  if (dx >= sq.side || dy >= sq.side) return;
  const std::uint64_t k = sq.first_output(s);
  const int x0 = static_cast<int>(splitmix64_at(seed, k) % static_cast<std::uint64_t>(width));
  const int y0 = static_cast<int>(splitmix64_at(seed, k + 1) % static_cast<std::uint64_t>(height));
  const std::size_t i = static_cast<std::size_t>((y0 + dy) % height) * width + (x0 + dx) % width;
  const float noise = noise_of(splitmix64_at(seed, k + 2 + static_cast<std::uint64_t>(dy) * sq.side + dx));
  u[i] = __fadd_rn(0.5f, noise);
  v[i] = __fsub_rn(0.25f, noise);
}

class GrayScottCuda final : public CudaUv {
 public:
  GrayScottCuda(Executor& executor, int width, int height, std::uint32_t steps_per_launch)
      : CudaUv(executor, static_cast<std::size_t>(width) * height), w_(width), h_(height), fused_(steps_per_launch) {}
  std::vector<FieldSpec> fields() const override { return grayscott::fields(); }
  std::vector<ParamSpec> params() const override { return grayscott::params(); }
  std::vector<Preset> presets() const override { return grayscott::presets(); }
  void set_params(const std::map<std::string, double>& values) override { p_ = from(values); }
  double time_per_step() const override { return p_.dt; }

  void reset(std::uint64_t seed) override {
    // Made on the GPU (the host's bits, see initial_state): a large grid starts at once.
    cuda::DeviceGuard guard(device_);
    cur_ = 0;
    auto* u = static_cast<float*>(u_[0].get());
    auto* v = static_cast<float*>(v_[0].get());
    gs_fill_kernel<<<1024, 256, 0, stream_>>>(u, v, cells_);
    const Squares sq = squares_of(w_, h_);
    const dim3 block(32, 8), grid((sq.side + 31) / 32, (sq.side + 7) / 8);
    for (int s = 0; s < sq.count; ++s) gs_square_kernel<<<grid, block, 0, stream_>>>(u, v, w_, h_, seed, sq, s);
    cuda::check(cudaGetLastError(), "launching the Gray–Scott initial-state kernels");
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after reset");
  }

  void step(std::uint32_t steps) override {
    cuda::DeviceGuard guard(device_);
    advance(steps, nullptr);
  }

  // The batch before a frame runs as any batch, its last launch also writing the fields read.
  bool writes_in_step() const override { return true; }
  void step_and_write(std::uint32_t steps, const std::vector<FieldTarget>& t) override {
    cuda::DeviceGuard guard(device_);
    const FrameOut out = frame_out(t);
    advance(std::max<std::uint32_t>(steps, 1), &out);
    add_frame_checksum();
  }

  std::vector<StateSpec> state() const override { return grayscott::state(w_, h_); }

 private:
  int w_, h_;
  /// `steps` steps: fused launches of fused_ steps, then one-step launches for what is left over;
  /// the last launch writes `out` when given (a frame's batch).
  void advance(std::uint32_t steps, const FrameOut* out) {
    std::uint32_t s = 0;
    if (fused_ >= 2) {
      const dim3 grid((w_ + kTileX - 1) / kTileX, (h_ + kTileY - 1) / kTileY);
      for (; s + fused_ <= steps; s += fused_) {
        const FrameOut* o = s + fused_ == steps ? out : nullptr;
        if (o != nullptr) executor_.frame_step_begins(fused_, executor_.stream());
        switch (fused_) {
          case 2: fused_launch<2>(grid, o); break;
          case 3: fused_launch<3>(grid, o); break;
          default: fused_launch<4>(grid, o); break;
        }
        cur_ = 1 - cur_;
      }
    }
    const dim3 block(kBlockX, kBlockY);
    const int rows_per_block = kBlockY * kRows;
    const dim3 grid((w_ + kBlockX - 1) / kBlockX, (h_ + rows_per_block - 1) / rows_per_block);
    for (; s < steps; ++s) {  // what fused launches leave over, one step at a time
      if (out != nullptr && s + 1 == steps) {
        executor_.frame_step_begins(1, executor_.stream());
        grayscott_step_kernel<true><<<grid, block, 0, stream_>>>(u(), v(), u(true), v(true), w_, h_, p_, *out);
      } else {
        grayscott_step_kernel<false><<<grid, block, 0, stream_>>>(u(), v(), u(true), v(true), w_, h_, p_, FrameOut{});
      }
      cur_ = 1 - cur_;
    }
    cuda::check(cudaGetLastError(), "launching the Gray–Scott step kernels");
  }
  template <int K>
  void fused_launch(dim3 grid, const FrameOut* out) {
    if (out != nullptr)
      grayscott_fused_kernel<K, true><<<grid, kTileThreads, 0, stream_>>>(u(), v(), u(true), v(true), w_, h_, p_, *out);
    else
      grayscott_fused_kernel<K, false>
          <<<grid, kTileThreads, 0, stream_>>>(u(), v(), u(true), v(true), w_, h_, p_, FrameOut{});
  }

  std::uint32_t fused_;  // steps per launch of the fused kernel; 1 = the one-step kernel only
  GrayScottParams p_;
};

}  // namespace

std::unique_ptr<Simulation> make_cuda(Executor& executor, int width, int height, std::uint32_t steps_per_launch) {
  return std::make_unique<GrayScottCuda>(executor, width, height, steps_per_launch);
}

}  // namespace cuview::sim::grayscott
