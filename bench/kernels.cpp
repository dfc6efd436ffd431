// Sections 1 and 6: how close the Gray–Scott kernels come to the memory bound, and the host
// backend's rate. Measured through the daemon's own backends (advance + finish, wall clock), so
// launch overhead and the two-batches-in-flight throttle count.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench.hpp"
#include "bench_simulation.hpp"
#include "sims/row_pool.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include "cuview/cuda/check.hpp"
#endif

namespace cuview::bench {
namespace {
using Clock = std::chrono::steady_clock;

/// Steps per second of `steps` steps per repetition, after one warm-up repetition.
Dist step_rates(BenchSimulation& b, std::uint32_t steps, int reps) {
  b.sim->step(steps);
  b.executor->finish();
  std::vector<double> rates;
  for (int r = 0; r < reps; ++r) {
    const auto t = Clock::now();
    b.sim->step(steps);
    b.executor->finish();
    rates.push_back(steps / std::chrono::duration<double>(Clock::now() - t).count());
  }
  return rate_dist(rates);
}
}  // namespace

#ifdef CUVIEW_HAVE_CUDA
namespace {
/// The 3-D flow (D3Q19, in place) in each storage at each side in `sides`, against the copy
/// bandwidth `copy_gbs` (GB/s, read + written) at its bytes per cell update: 19 populations read
/// and written and a flag byte, 153 bytes in float32 and 77 in FP16S (FluidX3D's count). A side
/// whose grid does not fit is a row saying so.
/// The 2-D flow in each storage: one cell update reads and writes 9 populations (72 bytes in
/// float32, 36 in FP16S) plus its flags; the bound is the measured copy bandwidth at those bytes
/// (the flags' two bytes a cell not counted).
std::string flow2d_table(const Options& o, double copy_gbs, const std::vector<int>& sides) {
  std::ostringstream md;
  md << "\n#### Lattice-Boltzmann (D2Q9, `--sim lbm`)\n\nBounds: " << sci(copy_gbs * 1e9 / 72)
     << " cell updates/s in float32 (the copy bandwidth at 72 bytes per cell update: 9 populations read and "
        "written; the flags' 2 bytes a cell not counted), "
     << sci(copy_gbs * 1e9 / 36) << " in FP16S (36 bytes). Target: 85 %.\n\n";
  Table l{{"storage", "grid", "steps/s (median)", "cell updates/s (median)", "slowest 1 %", "effective bandwidth",
           "of the bound"},
          {}};
  for (const std::string storage : {"fp32", "fp16s"}) {
    const double bytes = storage == "fp32" ? 72 : 36;
    for (int n : sides) {
      auto b = make_builtin("lbm", Executor::Kind::cuda, static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(n),
                            {{"storage", storage}});
      const double cells = static_cast<double>(n) * n;
      const auto steps = static_cast<std::uint32_t>(std::max(10.0, 2e10 / cells / 100));
      const auto r = step_rates(b, steps, o.reps);
      l.rows.push_back({storage, std::to_string(n) + "²", fmt(r.median, "%.0f"), sci(r.median * cells),
                        sci(r.p99 * cells), fmt(r.median * cells * bytes / 1e12, "%.2f") + " TB/s",
                        fmt(100 * r.median * cells * bytes / (copy_gbs * 1e9), "%.1f") + " %"});
    }
  }
  md << l.markdown();
  return md.str();
}

std::string flow3d_table(const Options& o, double copy_gbs, const std::vector<std::uint32_t>& sides) {
  std::ostringstream md;
  md << "\n#### Lattice-Boltzmann in 3-D (D3Q19, in place, `--sim lbm3d`)\n\nBounds: " << sci(copy_gbs * 1e9 / 153)
     << " cell updates/s in float32 (`storage=fp32`: the copy bandwidth at 153 bytes per cell update, 19 "
        "populations read and written and a flag byte), "
     << sci(copy_gbs * 1e9 / 77)
     << " in FP16S (`storage=fp16s`: 77 bytes). Targets: 95 % of the bound in float32; FluidX3D's FP16S figure "
        "(2.96 × 10¹⁰ on an H100 SXM5, 3.66 × 10¹⁰ on an H200).\n\n";
  Table t{{"storage", "grid", "memory", "steps/s (median)", "cell updates/s (median)", "slowest 1 %",
           "effective bandwidth", "of the bound"},
          {}};
  for (const std::string storage : {"fp32", "fp16s"}) {
    const double bytes = storage == "fp32" ? 153 : 77;
    for (const std::uint32_t n : sides) {
      const double cells = static_cast<double>(n) * n * n;
      const std::string grid = std::to_string(n) + "³";
      try {
        auto b = make_builtin("lbm3d", Executor::Kind::cuda, n, n, {{"storage", storage}}, n);
        std::size_t free = 0, total = 0;
        cuda::check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
        const auto r = step_rates(b, static_cast<std::uint32_t>(std::max(5.0, 2e9 / cells)), o.reps);
        t.rows.push_back({storage, grid, fmt((total - free) / 1e9, "%.1f") + " GB used", fmt(r.median, "%.1f"),
                          sci(r.median * cells), sci(r.p99 * cells), fmt(r.median * cells * bytes / 1e12, "%.2f") + " TB/s",
                          fmt(100 * r.median * cells * bytes / (copy_gbs * 1e9), "%.1f") + " %"});
      } catch (const std::exception& e) {
        t.rows.push_back({storage, grid, std::string("does not fit: ") + e.what(), "", "", "", "", ""});
      }
    }
  }
  md << t.markdown();
  return md.str();
}
}  // namespace
#endif

std::string kernel_section(const Options& o) {
  std::ostringstream md;
#ifdef CUVIEW_HAVE_CUDA
  {
    const auto bw = rate_dist(copy_bandwidth(o.reps));
    const double bound = bw.median * 1e9 / 16.0;  // cell updates/s at 16 bytes each
    md << "\n### 1. Kernel efficiency\n\nDevice-to-device copy (1 GiB, read + written): median "
       << fmt(bw.median / 1000, "%.3f") << " TB/s, slowest 1 % " << fmt(bw.p99 / 1000, "%.3f")
       << " TB/s. One-step bound: " << sci(bound)
       << " cell updates/s (16 bytes each: u and v read once, written once). Temporal blocking (K steps per "
          "launch) moves those bytes once per K steps, so it may pass 100 %.\n\n";
    Table t{{"grid", "steps per launch", "steps/s (median)", "cell updates/s (median)", "slowest 1 %",
             "of the one-step bound"},
            {}};
    for (int n : o.sizes) {
      const double cells = static_cast<double>(n) * n;
      for (std::uint32_t k = 1; k <= 4; ++k) {
        auto b = make_grayscott(Executor::Kind::cuda, static_cast<std::uint32_t>(n), k);
        // ~0.1 s per repetition, a multiple of every K.
        const auto steps = static_cast<std::uint32_t>(std::max(24.0, 4e10 / cells / 100)) / 12 * 12;
        const auto r = step_rates(b, steps, o.reps);
        t.rows.push_back({std::to_string(n) + "²",
                          std::to_string(k) + (k == sim::grayscott::kDefaultStepsPerLaunch ? " (default)" : ""),
                          fmt(r.median, "%.0f"), sci(r.median * cells), sci(r.p99 * cells),
                          fmt(100 * r.median * cells / bound, "%.1f") + " %"});
      }
    }
    md << t.markdown();

    md << flow2d_table(o, bw.median, o.sizes);

    // A volume simulation at 256³ and 512³, `bytes` per cell update, against the copy bandwidth;
    // `work` cell updates per repetition (at least `min_steps` steps).
    const auto volume_table = [&](const char* sim, double bytes, double work, double min_steps) {
      Table t{{"grid", "steps/s (median)", "cell updates/s (median)", "slowest 1 %", "effective bandwidth",
               "of the bound"},
              {}};
      const double sim_bound = bw.median * 1e9 / bytes;
      for (std::uint32_t n : {256u, 512u}) {
        auto b = make_builtin(sim, Executor::Kind::cuda, n, n, {}, n);
        const double cells = static_cast<double>(n) * n * n;
        const auto r = step_rates(b, static_cast<std::uint32_t>(std::max(min_steps, work / cells)), o.reps);
        t.rows.push_back({std::to_string(n) + "³", fmt(r.median, "%.0f"), sci(r.median * cells), sci(r.p99 * cells),
                          fmt(r.median * cells * bytes / 1e12, "%.2f") + " TB/s",
                          fmt(100 * r.median * cells / sim_bound, "%.1f") + " %"});
      }
      return t.markdown();
    };

    // Gray–Scott in 3-D: u and v read and written once per cell update, as in 2-D (16 bytes); the
    // neighbours come from the caches.
    md << "\n#### Gray–Scott in 3-D (7-point stencil, float32, `--sim grayscott3d`)\n\nBound: " << sci(bound)
       << " cell updates/s (the copy bandwidth at 16 bytes per cell update). Target: 90 %.\n\n";
    md << volume_table("grayscott3d", 16, 1.5e10, 20);

    md << flow3d_table(o, bw.median, {256u, 512u});

    // N-body: 20 FLOPs per interaction (GPU Gems 3, ch. 31), against the FP32 peak.
    int dev = 0, sms = 0, khz = 0, major = 0;
    cuda::check(cudaGetDevice(&dev), "cudaGetDevice");
    cuda::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "SM count");
    cuda::check(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev), "clock rate");
    cuda::check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), "compute capability");
    const int lanes = major >= 8 ? 128 : 64;  // FP32 lanes per SM (Ampere and later: 128)
    const double peak = static_cast<double>(sms) * khz * 1e3 * lanes * 2;
    const auto fma = rate_dist(fma_rate(o.reps));
    md << "\n#### N-body (all pairs, float32, `--sim nbody`)\n\nFP32 peak: " << sms << " SMs × "
       << fmt(khz / 1e6, "%.3f") << " GHz × " << lanes << " lanes × 2 (FMA) = " << fmt(peak / 1e12, "%.1f")
       << " TFLOP/s; a kernel of nothing but independent FMAs measures " << fmt(fma.median, "%.1f") << " TFLOP/s ("
       << fmt(100 * fma.median * 1e12 / peak, "%.1f") << " %). 20 FLOPs per interaction. Target: 70 % of the peak.\n\n";
    Table nb{
        {"bodies", "steps/s (median)", "interactions/s (median)", "TFLOP/s", "of FP32 peak", "of measured FMA rate"},
        {}};
    for (std::uint64_t bodies : {16384ull, 65536ull, 262144ull, 1048576ull}) {
      auto b = make_builtin("nbody", Executor::Kind::cuda, 256, 256, {{"bodies", std::to_string(bodies)}});
      const double pairs = static_cast<double>(bodies) * static_cast<double>(bodies);
      const auto steps = static_cast<std::uint32_t>(std::max(1.0, 3e11 / pairs));
      const auto r = step_rates(b, steps, std::max(3, o.reps / 3));
      const double flops = r.median * pairs * 20;
      nb.rows.push_back({std::to_string(bodies), fmt(r.median, "%.1f"), sci(r.median * pairs),
                         fmt(flops / 1e12, "%.1f"), fmt(100 * flops / peak, "%.1f") + " %",
                         fmt(100 * flops / (fma.median * 1e12), "%.1f") + " %"});
    }
    md << nb.markdown();
  }
#else
  (void)o;
#endif
  return md.str();
}

namespace {
/// Memory bandwidth with `threads` threads over arrays far larger than the caches, as STREAM's
/// "scale" measures it (b[i] = s × a[i], plain stores, 8 bytes counted per element: what a
/// simulation's loop does) and as memcpy moves it (which writes with non-temporal stores, skipping
/// the read a plain store's cache line costs). Read and write counted, GB/s.
struct Bandwidth {
  Dist scale, copy;
};
Bandwidth memory_bandwidth(unsigned threads, int reps) {
  constexpr std::size_t kFloats = std::size_t{64} << 20;  // 256 MiB each way
  std::vector<float> src(kFloats, 1.0f), dst(kFloats, 0.0f);
  volatile float one = 1.0f;  // not a constant the compiler could fold the multiply away with
  const float s = one;
  sim::RowPool pool(threads);
  auto scale = [&](std::int64_t b, std::int64_t e) {
    float* __restrict__ d = dst.data();
    const float* __restrict__ a = src.data();
    for (std::int64_t i = b; i < e; ++i) d[i] = s * a[i];
  };
  auto copy = [&](std::int64_t b, std::int64_t e) {
    std::memcpy(dst.data() + b, src.data() + b, static_cast<std::size_t>(e - b) * sizeof(float));
  };
  auto rate = [&](const auto& band) {
    pool.run(0, static_cast<std::int64_t>(kFloats), band);
    std::vector<double> rates;
    for (int r = 0; r < reps; ++r) {
      const auto t = Clock::now();
      pool.run(0, static_cast<std::int64_t>(kFloats), band);
      rates.push_back(2.0 * kFloats * sizeof(float) / std::chrono::duration<double>(Clock::now() - t).count() / 1e9);
    }
    return rate_dist(rates);
  };
  const auto sc = rate(scale);
  return {sc, rate(copy)};
}

/// Runs `f` with $CUVIEW_HOST_THREADS at `threads` (what a host simulation made inside uses).
template <class F>
auto with_threads(unsigned threads, F&& f) {
  const char* before = std::getenv("CUVIEW_HOST_THREADS");
  const std::string saved = before ? before : "";
  ::setenv("CUVIEW_HOST_THREADS", std::to_string(threads).c_str(), 1);
  auto result = f();
  before ? (void)::setenv("CUVIEW_HOST_THREADS", saved.c_str(), 1) : (void)::unsetenv("CUVIEW_HOST_THREADS");
  return result;
}
}  // namespace

std::string flow3d_section(const Options& o) {
#ifdef CUVIEW_HAVE_CUDA
  const auto bw = rate_dist(copy_bandwidth(o.reps));
  return "\n### The flows in each storage\n\nDevice-to-device copy (1 GiB, read + written): median " +
         fmt(bw.median / 1000, "%.3f") + " TB/s.\n" + flow3d_table(o, bw.median, {256u, 512u, 1024u}) +
         flow2d_table(o, bw.median, {4096, 8192});
#else
  (void)o;
  return "\n### The flows in each storage\n\nNot measured: this build has no CUDA.\n";
#endif
}

std::string host_kernel_section(const Options& o) {
  std::ostringstream md;
  const unsigned all = sim::RowPool().threads();
  const int reps = std::max(5, o.reps / 3);
  md << "\n### 6. Host backend: the simulations on every core, against the memory bound\n\n";
  const auto bw1 = memory_bandwidth(1, reps), bw = memory_bandwidth(all, reps);
  md << "Memory bound (read and write counted): STREAM's scale (plain stores) " << fmt(bw.scale.median, "%.1f")
     << " GB/s with " << all << " thread(s), " << fmt(bw1.scale.median, "%.1f") << " with one; memcpy "
     << "(non-temporal stores) " << fmt(bw.copy.median, "%.1f") << " and " << fmt(bw1.copy.median, "%.1f")
     << " GB/s. A cell update moves at least 16 B in Gray–Scott (u and v read, written) and 74 B in the "
     << "lattice-Boltzmann flow (9 populations read and written, 2 B of flags), 153 B in the 3-D flow (19 "
     << "populations, 1 B of flags), with plain stores: *% of "
     << "bound* is that traffic over STREAM scale of the same threads, *% of memcpy* over memcpy's. The results "
     << "are the same bits on any number of threads.\n\n";
  Table h{{"simulation", "grid", "threads", "steps/s (median)", "cell updates/s", "traffic", "% of bound",
           "% of memcpy"},
          {}};
  struct Case {
    std::string sim;
    std::uint32_t w, h;
    double bytes_per_cell;
    std::uint32_t d = 1;
  };
  std::vector<Case> cases;
  for (int n : o.host_sizes) cases.push_back({"grayscott", static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(n), 16});
  cases.push_back({"lbm", 1600, 400, 74});
  cases.push_back({"lbm", 2048, 2048, 74});
  cases.push_back({"lbm3d", 128, 64, 153, 64});
  for (const auto& c : cases) {
    std::vector<unsigned> counts{1};
    if (all > 1) counts.push_back(all);
    for (const unsigned t : counts) {
      const auto r = with_threads(t, [&] {
        auto b = make_builtin(c.sim, Executor::Kind::host, c.w, c.h, {}, c.d);
        const double cells = static_cast<double>(c.w) * c.h * c.d;
        const auto steps = static_cast<std::uint32_t>(std::max(5.0, 4e7 / cells / (c.bytes_per_cell / 16)));
        return step_rates(b, steps, reps);
      });
      const double cells = static_cast<double>(c.w) * c.h * c.d, gbs = r.median * cells * c.bytes_per_cell / 1e9;
      const auto& bound = t == 1 ? bw1 : bw;
      const std::string grid = std::to_string(c.w) + "x" + std::to_string(c.h) + (c.d > 1 ? "x" + std::to_string(c.d) : "");
      h.rows.push_back({c.sim, grid, std::to_string(t),
                        fmt(r.median, "%.1f"), sci(r.median * cells), fmt(gbs, "%.2f") + " GB/s",
                        fmt(100 * gbs / bound.scale.median, "%.0f") + " %",
                        fmt(100 * gbs / bound.copy.median, "%.0f") + " %"});
    }
  }
  md << h.markdown();
  return md.str();
}

}  // namespace cuview::bench
