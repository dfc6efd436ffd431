// Gray–Scott in 3-D on the CUDA executor: u and v double-buffered on the device, one launch per
// step. Each thread owns one (x, y) column of kZ cells and marches along z with the layers behind,
// at and in front of it in registers: per cell it loads one new value of u and v from memory, and
// its x and y neighbours, which the threads beside it have just loaded (cache hits). Compiled
// without FMA contraction and with flush-to-zero, as the host loops run: the same bits. The last
// step before a frame also writes the frame (step_and_write).
#include "executor/executor.hpp"
#include "sims/grayscott/grayscott_setup.hpp"
#include "sims/grayscott/uv_state_cuda.hpp"
#include "sims/grayscott3d/grayscott3d.hpp"

namespace cuview::sim::grayscott3d {
namespace {

constexpr int kBlockX = 64, kBlockY = 4, kZ = 8;  // the fastest of 14 shapes measured on an H100

/// kFrame: the last step before a frame, also writing the frame (UvFrameOut).
using FrameOut = grayscott::UvFrameOut;

/// One thread's column of kZ cells from (x, y, z0) along z; returns the checksum terms of what it
/// wrote into the frame (kFrame).
template <bool kFrame>
__device__ inline std::uint64_t step_column(const float* __restrict__ u, const float* __restrict__ v,
                                            float* __restrict__ uo, float* __restrict__ vo, int w, int h, int d,
                                            const GrayScottParams& p, const FrameOut& out, int x, int y, int z0) {
  std::uint64_t partial = 0;
  const std::size_t plane = static_cast<std::size_t>(w) * h;
  const std::size_t row = static_cast<std::size_t>(y) * w, col = row + x;
  const std::size_t xl = row + (x == 0 ? w - 1 : x - 1), xr = row + (x == w - 1 ? 0 : x + 1);
  const std::size_t yu = static_cast<std::size_t>(y == 0 ? h - 1 : y - 1) * w + x;
  const std::size_t yd = static_cast<std::size_t>(y == h - 1 ? 0 : y + 1) * w + x;
  const std::size_t back = static_cast<std::size_t>(z0 == 0 ? d - 1 : z0 - 1) * plane + col;
  float ub = __ldg(u + back), vb = __ldg(v + back);
  float uc = __ldg(u + z0 * plane + col), vc = __ldg(v + z0 * plane + col);
  const int end = min(z0 + kZ, d);
  for (int z = z0; z < end; ++z) {
    const std::size_t layer = static_cast<std::size_t>(z) * plane;
    const std::size_t front = static_cast<std::size_t>(z == d - 1 ? 0 : z + 1) * plane + col;
    const float uf = __ldg(u + front), vf = __ldg(v + front);
    const float lap_u =
        laplacian7(__ldg(u + layer + xl), __ldg(u + layer + xr), __ldg(u + layer + yu), __ldg(u + layer + yd), ub, uf, uc);
    const float lap_v =
        laplacian7(__ldg(v + layer + xl), __ldg(v + layer + xr), __ldg(v + layer + yu), __ldg(v + layer + yd), vb, vf, vc);
    float un, vn;
    grayscott_update(uc, vc, lap_u, lap_v, p, un, vn);
    uo[layer + col] = un, vo[layer + col] = vn;
    if constexpr (kFrame) {
      if (out.u) {
        out.u[layer + col] = un;
        partial += float_term(un, out.w_u + layer + col);
      }
      if (out.v) {
        out.v[layer + col] = vn;
        partial += float_term(vn, out.w_v + layer + col);
      }
    }
    ub = uc, vb = vc;
    uc = uf, vc = vf;
  }
  return partial;
}

template <bool kFrame>
__global__ void __launch_bounds__(kBlockX* kBlockY)
    step_kernel(const float* __restrict__ u, const float* __restrict__ v, float* __restrict__ uo,
                float* __restrict__ vo, int w, int h, int d, GrayScottParams p, FrameOut out) {
  const int x = blockIdx.x * kBlockX + threadIdx.x, y = blockIdx.y * kBlockY + threadIdx.y;
  const int z0 = blockIdx.z * kZ;
  const bool inside = x < w && y < h && z0 < d;
  if constexpr (kFrame) {
    add_checksum_spread(inside ? step_column<true>(u, v, uo, vo, w, h, d, p, out, x, y, z0) : 0, out.sums);
  } else {
    if (inside) (void)step_column<false>(u, v, uo, vo, w, h, d, p, out, x, y, z0);
  }
}

/// u = 1, v = 0 everywhere (initial_state's background).
__global__ void fill_kernel(float* __restrict__ u, float* __restrict__ v, std::size_t cells) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < cells;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    u[i] = 1.0f;
    v[i] = 0.0f;
  }
}

/// Cube `s` of initial_state(), one thread per cell; cubes are launched in order, so a later one
/// overwrites an earlier one as on the host.
__global__ void cube_kernel(float* __restrict__ u, float* __restrict__ v, int w, int h, int d, std::uint64_t seed,
                            Cubes c, int s) {
  const int dx = blockIdx.x * blockDim.x + threadIdx.x, dy = blockIdx.y * blockDim.y + threadIdx.y, dz = blockIdx.z;
  if (dx >= c.side || dy >= c.side) return;
  const std::uint64_t k = c.first_output(s);
  const int x0 = static_cast<int>(grayscott::splitmix64_at(seed, k) % static_cast<std::uint64_t>(w));
  const int y0 = static_cast<int>(grayscott::splitmix64_at(seed, k + 1) % static_cast<std::uint64_t>(h));
  const int z0 = static_cast<int>(grayscott::splitmix64_at(seed, k + 2) % static_cast<std::uint64_t>(d));
  const std::size_t i = (static_cast<std::size_t>((z0 + dz) % d) * h + (y0 + dy) % h) * w + (x0 + dx) % w;
  const std::uint64_t n = (static_cast<std::uint64_t>(dz) * c.side + dy) * c.side + dx;
  const float noise = grayscott::noise_of(grayscott::splitmix64_at(seed, k + 3 + n));
  u[i] = __fadd_rn(0.5f, noise);
  v[i] = __fsub_rn(0.25f, noise);
}

class GrayScott3dCuda final : public grayscott::CudaUv {
 public:
  GrayScott3dCuda(Executor& executor, int w, int h, int d)
      : CudaUv(executor, static_cast<std::size_t>(w) * h * d), w_(w), h_(h), d_(d) {}
  std::vector<FieldSpec> fields() const override { return grayscott3d::fields(); }
  std::vector<ParamSpec> params() const override { return grayscott3d::params(); }
  std::vector<Preset> presets() const override { return grayscott3d::presets(); }
  void set_params(const std::map<std::string, double>& values) override { p_ = grayscott::from(values); }
  double time_per_step() const override { return p_.dt; }

  void reset(std::uint64_t seed) override {
    cuda::DeviceGuard guard(device_);
    cur_ = 0;
    auto* u = this->u();
    auto* v = this->v();
    fill_kernel<<<1024, 256, 0, stream_>>>(u, v, cells_);
    const Cubes c = cubes_of(w_, h_, d_);
    const dim3 block(16, 16), grid((c.side + 15) / 16, (c.side + 15) / 16, c.side);
    for (int s = 0; s < c.count; ++s) cube_kernel<<<grid, block, 0, stream_>>>(u, v, w_, h_, d_, seed, c, s);
    cuda::check(cudaGetLastError(), "launching the 3-D Gray–Scott initial-state kernels");
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after reset");
  }

  void step(std::uint32_t steps) override {
    cuda::DeviceGuard guard(device_);
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid((w_ + kBlockX - 1) / kBlockX, (h_ + kBlockY - 1) / kBlockY, (d_ + kZ - 1) / kZ);
    for (std::uint32_t s = 0; s < steps; ++s) {
      step_kernel<false><<<grid, block, 0, stream_>>>(u(), v(), u(true), v(true), w_, h_, d_, p_, FrameOut{});
      cur_ = 1 - cur_;
    }
    cuda::check(cudaGetLastError(), "launching the 3-D Gray–Scott step kernel");
  }

  // The last step before a frame writes the fields read into it (kFrame).
  bool writes_in_step() const override { return true; }
  void step_and_write(std::uint32_t steps, const std::vector<FieldTarget>& t) override {
    cuda::DeviceGuard guard(device_);
    if (steps > 1) step(steps - 1);
    executor_.frame_step_begins(1, executor_.stream());  // the frame's time: its step and checksum
    const FrameOut out = frame_out(t);
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid((w_ + kBlockX - 1) / kBlockX, (h_ + kBlockY - 1) / kBlockY, (d_ + kZ - 1) / kZ);
    step_kernel<true><<<grid, block, 0, stream_>>>(u(), v(), u(true), v(true), w_, h_, d_, p_, out);
    cur_ = 1 - cur_;
    cuda::check(cudaGetLastError(), "launching the 3-D Gray–Scott frame step");
    add_frame_checksum();
  }

  std::vector<StateSpec> state() const override { return grayscott3d::state(w_, h_, d_); }

 private:
  int w_, h_, d_;
  GrayScottParams p_;
};

}  // namespace

std::unique_ptr<Simulation> make_cuda(Executor& executor, int w, int h, int d) {
  return std::make_unique<GrayScott3dCuda>(executor, w, h, d);
}

}  // namespace cuview::sim::grayscott3d
