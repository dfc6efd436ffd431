// Gray–Scott in 3-D on the Simulation interface: declarations, the initial state, and the host
// loops (one x-row of the volume per task, the interior vectorised); the CUDA kernel is in
// grayscott3d_cuda.cu. Both end in grayscott3d.hpp's math, so both give the same bits.
#if defined(__SSE2__)
#include <pmmintrin.h>
#include <xmmintrin.h>
#endif

#include <algorithm>

#include "cuview/error.hpp"
#include "executor/executor.hpp"
#include "sims/grayscott/grayscott_setup.hpp"
#include "sims/grayscott/uv_state.hpp"
#include "sims/grayscott3d/grayscott3d.hpp"
#include "sims/row_pool.hpp"

namespace cuview::sim::grayscott3d {

std::vector<FieldSpec> fields() { return grayscott::fields(); }

std::vector<StateSpec> state(int w, int h, int d) {
  const std::vector<std::uint64_t> shape{static_cast<std::uint64_t>(d), static_cast<std::uint64_t>(h),
                                         static_cast<std::uint64_t>(w)};
  return {{"u", DType::float32, shape, "activator concentration"},
          {"v", DType::float32, shape, "inhibitor concentration"}};
}

std::vector<ParamSpec> params() {
  // The 2-D rates. The checkerboard mode grows by 1 − 12·D·dt − (reaction) per step: at Du = 0.16
  // and dt = 1 that is below −1 where v is large (a checkerboard seen in a plane of the viewer). The
  // ranges keep Du·dt ≤ 0.128, 12·Du·dt ≤ 1.54: every allowed combination decays it.
  return {
      {"F", 0.0545, 0.0, 0.1, false, "feed rate of u"},      {"k", 0.062, 0.0, 0.1, false, "kill rate of v"},
      {"Du", 0.16, 0.0, 0.16, false, "diffusion rate of u"}, {"Dv", 0.08, 0.0, 0.16, false, "diffusion rate of v"},
      {"dt", 0.8, 0.01, 0.8, false, "time step"},
  };
}

std::vector<Preset> presets() { return grayscott::presets(); }

Cubes cubes_of(int w, int h, int d) {
  const std::int64_t cells = static_cast<std::int64_t>(w) * h * d;
  return {static_cast<int>(std::max<std::int64_t>(1, cells / (48 * 48 * 48))),
          std::max(4, std::min({w, h, d}) / 8)};
}

void initial_state(int w, int h, int d, std::uint64_t seed, float* u, float* v) {
  const std::size_t cells = static_cast<std::size_t>(w) * h * d;
  std::fill(u, u + cells, 1.0f);
  std::fill(v, v + cells, 0.0f);
  const Cubes c = cubes_of(w, h, d);
  for (int s = 0; s < c.count; ++s) {  // in order: a later cube overwrites an earlier one
    std::uint64_t k = c.first_output(s);
    const int x0 = static_cast<int>(grayscott::splitmix64_at(seed, k++) % static_cast<std::uint64_t>(w));
    const int y0 = static_cast<int>(grayscott::splitmix64_at(seed, k++) % static_cast<std::uint64_t>(h));
    const int z0 = static_cast<int>(grayscott::splitmix64_at(seed, k++) % static_cast<std::uint64_t>(d));
    for (int dz = 0; dz < c.side; ++dz)
      for (int dy = 0; dy < c.side; ++dy)
        for (int dx = 0; dx < c.side; ++dx) {
          const std::size_t i = (static_cast<std::size_t>((z0 + dz) % d) * h + (y0 + dy) % h) * w + (x0 + dx) % w;
          const float noise = grayscott::noise_of(grayscott::splitmix64_at(seed, k++));
          u[i] = 0.5f + noise;
          v[i] = 0.25f - noise;
        }
  }
}

namespace {

class GrayScott3dHost final : public grayscott::HostUv {
 public:
  GrayScott3dHost(Executor& executor, int w, int h, int d)
      : HostUv(executor, static_cast<std::size_t>(w) * h * d), w_(w), h_(h), d_(d) {}
  std::vector<FieldSpec> fields() const override { return grayscott3d::fields(); }
  std::vector<ParamSpec> params() const override { return grayscott3d::params(); }
  std::vector<Preset> presets() const override { return grayscott3d::presets(); }
  void reset(std::uint64_t seed) override { initial_state(w_, h_, d_, seed, u_, v_); }
  void set_params(const std::map<std::string, double>& values) override { p_ = grayscott::from(values); }
  double time_per_step() const override { return p_.dt; }

  void step(std::uint32_t n) override {
#if defined(__SSE2__)
    _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);  // as GrayScottHost: subnormals are slow on x86
    _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
#endif
    for (std::uint32_t s = 0; s < n; ++s) {
      rows_.run(
          0, static_cast<std::int64_t>(h_) * d_,
          [&](std::int64_t r0, std::int64_t r1) {
            for (std::int64_t r = r0; r < r1; ++r) row(static_cast<int>(r % h_), static_cast<int>(r / h_));
          },
          kMinCells / w_);
      swap_buffers();
    }
  }

  std::vector<StateSpec> state() const override { return grayscott3d::state(w_, h_, d_); }

 private:
  /// Row y of layer z: the edge columns wrap (cell()); between them the neighbours are affine in
  /// x, which the compiler vectorises. The same laplacian7 and grayscott_update: the same bits.
  void row(int y, int z) {
    const std::size_t plane = static_cast<std::size_t>(w_) * h_;
    const std::size_t at = static_cast<std::size_t>(z) * plane + static_cast<std::size_t>(y) * w_;
    const std::size_t up = static_cast<std::size_t>(z) * plane + static_cast<std::size_t>(y == 0 ? h_ - 1 : y - 1) * w_;
    const std::size_t down = static_cast<std::size_t>(z) * plane + static_cast<std::size_t>(y == h_ - 1 ? 0 : y + 1) * w_;
    const std::size_t back = static_cast<std::size_t>(z == 0 ? d_ - 1 : z - 1) * plane + static_cast<std::size_t>(y) * w_;
    const std::size_t front = static_cast<std::size_t>(z == d_ - 1 ? 0 : z + 1) * plane + static_cast<std::size_t>(y) * w_;
    const float *u = u_ + at, *v = v_ + at;
    const float *uu = u_ + up, *ud = u_ + down, *ub = u_ + back, *uf = u_ + front;
    const float *vu = v_ + up, *vd = v_ + down, *vb = v_ + back, *vf = v_ + front;
    float *uo = u2_ + at, *vo = v2_ + at;
    cell(u_, v_, u2_, v2_, 0, y, z, w_, h_, d_, p_);
    const GrayScottParams p = p_;
    const int last = w_ - 1;
#pragma GCC ivdep
    for (int x = 1; x < last; ++x) {
      const float lap_u = laplacian7(u[x - 1], u[x + 1], uu[x], ud[x], ub[x], uf[x], u[x]);
      const float lap_v = laplacian7(v[x - 1], v[x + 1], vu[x], vd[x], vb[x], vf[x], v[x]);
      grayscott_update(u[x], v[x], lap_u, lap_v, p, uo[x], vo[x]);
    }
    if (w_ > 1) cell(u_, v_, u2_, v2_, w_ - 1, y, z, w_, h_, d_, p_);
  }
  static constexpr int kMinCells = 1 << 15;
  int w_, h_, d_;
  RowPool rows_;
  GrayScottParams p_;
};

}  // namespace

std::unique_ptr<Simulation> make(Executor& executor, const SimulationConfig& config) {
  if (!config.options.empty())
    throw Error(Errc::bad_value, "grayscott3d has no option '" + config.options.begin()->first + "'; it takes none");
  const int w = static_cast<int>(config.width), h = static_cast<int>(config.height),
            d = static_cast<int>(config.depth);
#ifdef CUVIEW_HAVE_CUDA
  if (executor.kind() == Executor::Kind::cuda) return make_cuda(executor, w, h, d);
#endif
  return std::make_unique<GrayScott3dHost>(executor, w, h, d);
}

}  // namespace cuview::sim::grayscott3d
