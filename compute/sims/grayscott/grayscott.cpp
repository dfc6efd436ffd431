// Gray–Scott on the Simulation interface: the host loop here, the CUDA kernels in
// grayscott_cuda.cu, the same per-cell math (grayscott.hpp) in both.
#if defined(__SSE2__)
#include <pmmintrin.h>
#include <xmmintrin.h>
#endif

#include <cstring>
#include <string>

#include "cuview/error.hpp"
#include "executor/executor.hpp"
#include "sims/grayscott/grayscott_setup.hpp"
#include "sims/grayscott/uv_state.hpp"
#include "sims/host_array.hpp"
#include "sims/row_pool.hpp"

namespace cuview::sim::grayscott {
namespace {

class GrayScottHost final : public HostUv {
 public:
  GrayScottHost(Executor& executor, int width, int height)
      : HostUv(executor, static_cast<std::size_t>(width) * height), w_(width), h_(height) {}
  std::vector<FieldSpec> fields() const override { return grayscott::fields(); }
  std::vector<ParamSpec> params() const override { return grayscott::params(); }
  std::vector<Preset> presets() const override { return grayscott::presets(); }
  void reset(std::uint64_t seed) override { initial_state(w_, h_, seed, u_, v_); }
  void set_params(const std::map<std::string, double>& values) override { p_ = from(values); }
  double time_per_step() const override { return p_.dt; }

  void step(std::uint32_t n) override {
#if defined(__SSE2__)
    // A fresh field diffuses ever tinier v into its zero background; x86 computes on such
    // subnormal floats several times slower (found by the fault campaign: a daemon with no viewer
    // stepped 5x slower than one with 16). GPUs flush them anyway; so do we.
    _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
    _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
#endif
    for (std::uint32_t s = 0; s < n; ++s) {
      // Row bands on every core (the pool's threads take this thread's flush-to-zero mode).
      rows_.run(
          0, h_,
          [&](std::int64_t y0, std::int64_t y1) {
            for (int y = static_cast<int>(y0); y < static_cast<int>(y1); ++y) row(y);
          },
          kMinCells / w_);
      swap_buffers();
    }
  }

  std::vector<StateSpec> state() const override { return grayscott::state(w_, h_); }

 private:
  /// One row: the edge columns wrap (grayscott_cell); between them the neighbours are affine in x,
  /// which the compiler vectorises. The same laplacian5 and grayscott_update, so the same bits.
  void row(int y) {
    const int yu = y == 0 ? h_ - 1 : y - 1, yd = y == h_ - 1 ? 0 : y + 1;
    const std::size_t at = static_cast<std::size_t>(y) * w_;
    const float *u = u_ + at, *v = v_ + at;
    const float *uu = u_ + static_cast<std::size_t>(yu) * w_, *ud = u_ + static_cast<std::size_t>(yd) * w_;
    const float *vu = v_ + static_cast<std::size_t>(yu) * w_, *vd = v_ + static_cast<std::size_t>(yd) * w_;
    float *uo = u2_ + at, *vo = v2_ + at;
    grayscott_cell(u_, v_, u2_, v2_, 0, y, w_, h_, p_);
    const GrayScottParams p = p_;  // a copy: the stores below cannot change it
    const int last = w_ - 1;
    // The outputs are other arrays than the inputs: no iteration reads what another writes.
#pragma GCC ivdep
    for (int x = 1; x < last; ++x) {
      const float lap_u = laplacian5(u[x - 1], u[x + 1], uu[x], ud[x], u[x]);
      const float lap_v = laplacian5(v[x - 1], v[x + 1], vu[x], vd[x], v[x]);
      grayscott_update(u[x], v[x], lap_u, lap_v, p, uo[x], vo[x]);
    }
    if (w_ > 1) grayscott_cell(u_, v_, u2_, v2_, w_ - 1, y, w_, h_, p_);
  }
  static constexpr int kMinCells = 1 << 15;  ///< fewer cells run on one thread: a wake-up costs more
  int w_, h_;
  RowPool rows_;
  GrayScottParams p_;
};

}  // namespace

std::unique_ptr<Simulation> make(Executor& executor, const SimulationConfig& config) {
  std::uint32_t steps_per_launch = kDefaultStepsPerLaunch;
  for (const auto& [key, value] : config.options) {
    if (key != "steps_per_launch")
      throw Error(Errc::bad_value, "grayscott has no option '" + key + "'; it has: steps_per_launch");
    try {
      steps_per_launch = static_cast<std::uint32_t>(std::stoul(value));
    } catch (const std::exception&) {
      steps_per_launch = 0;
    }
    if (steps_per_launch < 1 || steps_per_launch > kMaxStepsPerLaunch)
      throw Error(Errc::out_of_range, "grayscott: steps_per_launch=" + value + " is out of range: use 1 to " +
                                          std::to_string(kMaxStepsPerLaunch));
  }
  const int w = static_cast<int>(config.width), h = static_cast<int>(config.height);
#ifdef CUVIEW_HAVE_CUDA
  if (executor.kind() == Executor::Kind::cuda) return make_cuda(executor, w, h, steps_per_launch);
#endif
  return std::make_unique<GrayScottHost>(executor, w, h);
}

}  // namespace cuview::sim::grayscott
