// cuview-bench: throughput figures on this machine. Prints Markdown tables; --out appends them to
// a file. Benchmarks print numbers; they never judge them (no timed tests).
//   cuview-bench [--sizes 2048,4096,8192] [--reps 15] [--out FILE]
// Sections so far: device-to-device copy bandwidth; Gray–Scott cell updates per second against
// the bound that bandwidth sets (16 bytes per update: u and v read once, written once); the host
// backend's step rate.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <vector>

#include "backend.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include "cuview/cuda_ipc.hpp"
#endif

using namespace cuview;
using Clock = std::chrono::steady_clock;

namespace {
struct Summary {
  double median = 0, p99 = 0;  // of the per-repetition rates; p99 = the slow tail (1st percentile of rates)
};
Summary summarize(std::vector<double> rates) {
  std::sort(rates.begin(), rates.end());
  Summary s;
  s.median = rates[rates.size() / 2];
  s.p99 = rates[static_cast<std::size_t>(0.01 * static_cast<double>(rates.size() - 1))];
  return s;
}

/// Rate of `steps` steps per repetition, after one warm-up repetition.
Summary step_rates(SimBackend& b, std::uint32_t steps, int reps) {
  sim::GrayScottParams p;
  b.advance(steps, p);
  b.finish();
  std::vector<double> rates;
  for (int r = 0; r < reps; ++r) {
    const auto t = Clock::now();
    b.advance(steps, p);
    b.finish();
    rates.push_back(steps / std::chrono::duration<double>(Clock::now() - t).count());
  }
  return summarize(rates);
}

#ifdef CUVIEW_HAVE_CUDA
/// Device-to-device copy, counting bytes read plus bytes written, GB/s.
Summary copy_bandwidth(int reps) {
  const std::size_t bytes = std::size_t{1} << 30;
  cuda::DeviceBuffer a(bytes), b(bytes);
  cudaEvent_t e0, e1;
  cuda::check(cudaEventCreate(&e0), "cudaEventCreate");
  cuda::check(cudaEventCreate(&e1), "cudaEventCreate");
  cuda::check(cudaMemcpy(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice), "warm-up copy");
  std::vector<double> rates;
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(e0);
    cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(e1);
    cuda::check(cudaEventSynchronize(e1), "timing a copy");
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    rates.push_back(2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return summarize(rates);
}
#endif

std::string fmt(double v, const char* f = "%.3g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cuview-bench: throughput figures of cuview's kernels on this machine"};
  std::vector<int> sizes{2048, 4096, 8192};
  std::vector<int> host_sizes{256, 512};
  int reps = 15;
  std::string out;
  app.add_option("--sizes", sizes, "CUDA grid sides")->delimiter(',');
  app.add_option("--host-sizes", host_sizes, "host grid sides")->delimiter(',');
  app.add_option("--reps", reps, "timed repetitions per figure (after a warm-up)");
  app.add_option("--out", out, "append the tables to this Markdown file");
  CLI11_PARSE(app, argc, argv);

  std::ostringstream md;
  const auto now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  try {
#ifdef CUVIEW_HAVE_CUDA
    const auto probe = cuda::probe();
    if (probe.usable) {
      const auto bw = copy_bandwidth(reps);
      const double bound = bw.median * 1e9 / 16.0;  // cell updates/s at 16 bytes each
      md << "\n### CUDA: " << probe.name << ", driver " << probe.driver_version << ", " << date << "\n\n";
      md << "Device-to-device copy (1 GiB, read + written): median " << fmt(bw.median / 1000, "%.3f")
         << " TB/s, slowest 1 % " << fmt(bw.p99 / 1000, "%.3f") << " TB/s. One-step bound: "
         << fmt(bound) << " cell updates/s (16 bytes each).\n\n";
      md << "| grid | steps/s (median) | cell updates/s (median) | slowest 1 % | of the one-step bound |\n";
      md << "| --- | --- | --- | --- | --- |\n";
      for (int n : sizes) {
        auto b = make_cuda_backend({static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(n), 1});
        b->reset(1);
        const double cells = static_cast<double>(n) * n;
        const auto steps = static_cast<std::uint32_t>(std::max(20.0, 4e10 / cells / 100));  // ~0.1 s per rep
        const auto r = step_rates(*b, steps, reps);
        md << "| " << n << "² | " << fmt(r.median, "%.0f") << " | " << fmt(r.median * cells) << " | "
           << fmt(r.p99 * cells) << " | " << fmt(100 * r.median * cells / bound, "%.1f") << " % |\n";
      }
    } else {
      md << "\n(CUDA section skipped: " << probe.reason << ")\n";
    }
#endif
    md << "\n### Host backend (one CPU thread), " << date << "\n\n";
    md << "| grid | steps/s (median) | cell updates/s (median) | slowest 1 % |\n| --- | --- | --- | --- |\n";
    for (int n : host_sizes) {
      auto b = make_host_backend({static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(n), 1});
      b->reset(1);
      const double cells = static_cast<double>(n) * n;
      const auto steps = static_cast<std::uint32_t>(std::max(5.0, 2e7 / cells));
      const auto r = step_rates(*b, steps, std::max(5, reps / 3));
      md << "| " << n << "² | " << fmt(r.median, "%.0f") << " | " << fmt(r.median * cells) << " | "
         << fmt(r.p99 * cells) << " |\n";
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuview-bench: %s\n", e.what());
    return 1;
  }
  std::fputs(md.str().c_str(), stdout);
  if (!out.empty()) std::ofstream(out, std::ios::app) << md.str();
  return 0;
}
