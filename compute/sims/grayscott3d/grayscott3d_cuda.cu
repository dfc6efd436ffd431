// Gray–Scott in 3-D on the CUDA executor: u and v double-buffered on the device, one launch per
// step. Each thread owns kRows cells of one column x, stacked in y, and marches along z through a
// stretch of `zs` layers, with the layers behind, at and in front of it in registers. Per layer it
// loads one new value of u and v per cell (the layer in front) and two rows beside its own (its y
// neighbours at the ends); its other y neighbours are its own registers and its x neighbours come
// from the lanes beside it (shuffles), only the warp's two end lanes loading theirs. So a cell costs
// about 1.5 loads per field rather than 6, and the memory traffic is the 16 bytes a cell needs
// plus the stretch's two extra layers. Compiled without FMA contraction and with flush-to-zero, as
// the host loops run: the same bits (cell()'s Laplacian order and grayscott_update).
#include "executor/executor.hpp"
#include "sims/grayscott/grayscott_setup.hpp"
#include "sims/grayscott/uv_state_cuda.hpp"
#include "sims/grayscott3d/grayscott3d.hpp"

namespace cuview::sim::grayscott3d {
namespace {

constexpr int kBlockX = 32, kBlockY = 4, kRows = 4;  // a block: 32 × 16 cells of a layer

/// y wrapped into [0, h) (periodic); y >= -1.
__device__ inline int wrap_y(int y, int h) { return y < 0 ? h - 1 : y % h; }

__global__ void __launch_bounds__(kBlockX* kBlockY)
    step_kernel(const float* __restrict__ u, const float* __restrict__ v, float* __restrict__ uo,
                float* __restrict__ vo, int w, int h, int d, int zs, GrayScottParams p) {
  const int lane = threadIdx.x;
  const int x = blockIdx.x * kBlockX + lane;
  const int y0 = (blockIdx.y * kBlockY + threadIdx.y) * kRows;
  const int z0 = blockIdx.z * zs;
  // Lanes past the grid's right edge, and rows past its bottom, read cells of the grid (the shuffles
  // need every lane) and store nothing.
  const int xc = x < w ? x : w - 1;
  const std::size_t plane = static_cast<std::size_t>(w) * h;
  std::size_t row[kRows + 2];  // the thread's rows and the one above and below (periodic)
#pragma unroll
  for (int j = 0; j < kRows + 2; ++j) row[j] = static_cast<std::size_t>(wrap_y(y0 + j - 1, h)) * w;
  const bool left_edge = lane == 0 || x == 0, right_edge = lane == kBlockX - 1 || xc >= w - 1;
  const int xl = x == 0 ? w - 1 : xc - 1, xr = xc >= w - 1 ? 0 : xc + 1;
  float ub[kRows], uc[kRows], uf[kRows], vb[kRows], vc[kRows], vf[kRows];
  const std::size_t back = static_cast<std::size_t>(z0 == 0 ? d - 1 : z0 - 1) * plane;
  const std::size_t first = static_cast<std::size_t>(z0) * plane;
#pragma unroll
  for (int j = 0; j < kRows; ++j) {
    ub[j] = __ldg(u + back + row[j + 1] + xc), vb[j] = __ldg(v + back + row[j + 1] + xc);
    uc[j] = __ldg(u + first + row[j + 1] + xc), vc[j] = __ldg(v + first + row[j + 1] + xc);
  }
  const int end = min(z0 + zs, d);
  for (int z = z0; z < end; ++z) {
    const std::size_t layer = static_cast<std::size_t>(z) * plane;
    const std::size_t front = static_cast<std::size_t>(z == d - 1 ? 0 : z + 1) * plane;
#pragma unroll
    for (int j = 0; j < kRows; ++j) uf[j] = __ldg(u + front + row[j + 1] + xc), vf[j] = __ldg(v + front + row[j + 1] + xc);
    const float u_up = __ldg(u + layer + row[0] + xc), v_up = __ldg(v + layer + row[0] + xc);
    const float u_down = __ldg(u + layer + row[kRows + 1] + xc), v_down = __ldg(v + layer + row[kRows + 1] + xc);
#pragma unroll
    for (int j = 0; j < kRows; ++j) {
      const std::size_t r = layer + row[j + 1];
      float ul = __shfl_up_sync(0xffffffffu, uc[j], 1), ur = __shfl_down_sync(0xffffffffu, uc[j], 1);
      float vl = __shfl_up_sync(0xffffffffu, vc[j], 1), vr = __shfl_down_sync(0xffffffffu, vc[j], 1);
      if (left_edge) ul = __ldg(u + r + xl), vl = __ldg(v + r + xl);
      if (right_edge) ur = __ldg(u + r + xr), vr = __ldg(v + r + xr);
      const float lap_u = laplacian7(ul, ur, j == 0 ? u_up : uc[j - 1], j == kRows - 1 ? u_down : uc[j + 1], ub[j],
                                     uf[j], uc[j]);
      const float lap_v = laplacian7(vl, vr, j == 0 ? v_up : vc[j - 1], j == kRows - 1 ? v_down : vc[j + 1], vb[j],
                                     vf[j], vc[j]);
      float un, vn;
      grayscott_update(uc[j], vc[j], lap_u, lap_v, p, un, vn);
      if (x < w && y0 + j < h) uo[r + x] = un, vo[r + x] = vn;
    }
#pragma unroll
    for (int j = 0; j < kRows; ++j) ub[j] = uc[j], vb[j] = vc[j], uc[j] = uf[j], vc[j] = vf[j];
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
    const int tile_y = kBlockY * kRows, columns = ((w_ + kBlockX - 1) / kBlockX) * ((h_ + tile_y - 1) / tile_y);
    if (sms_ == 0)
      cuda::check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device_), "counting the GPU's SMs");
    // The longest stretch of layers (the fewest re-read layers) that still gives every SM 8 blocks.
    int zs = 64;
    while (zs > 4 && std::int64_t{columns} * ((d_ + zs - 1) / zs) < 8LL * sms_) zs /= 2;
    const dim3 grid((w_ + kBlockX - 1) / kBlockX, (h_ + tile_y - 1) / tile_y, (d_ + zs - 1) / zs);
    for (std::uint32_t s = 0; s < steps; ++s) {
      step_kernel<<<grid, block, 0, stream_>>>(u(), v(), u(true), v(true), w_, h_, d_, zs, p_);
      cur_ = 1 - cur_;
    }
    cuda::check(cudaGetLastError(), "launching the 3-D Gray–Scott step kernel");
  }

  std::vector<StateSpec> state() const override { return grayscott3d::state(w_, h_, d_); }

 private:
  int w_, h_, d_;
  int sms_ = 0;
  GrayScottParams p_;
};

}  // namespace

std::unique_ptr<Simulation> make_cuda(Executor& executor, int w, int h, int d) {
  return std::make_unique<GrayScott3dCuda>(executor, w, h, d);
}

}  // namespace cuview::sim::grayscott3d
