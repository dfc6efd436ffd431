// Section 7: what a checkpoint costs the simulation. The simulation's loop waits only while its
// state is copied into host memory (pinned on CUDA): the stall. The file is written by the
// checkpointer's own thread while the loop goes on stepping; the steps it managed meanwhile are
// counted, against its rate with no checkpoint.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>

#include "bench.hpp"
#include "bench_simulation.hpp"
#include "checkpoint/checkpointer.hpp"

namespace cuview::bench {
namespace fs = std::filesystem;

std::string checkpoint_section(const Options& o, Executor::Kind kind) {
  using Clock = std::chrono::steady_clock;
  const bool cuda = kind == Executor::Kind::cuda;
  spdlog::set_level(spdlog::level::warn);  // one log line per write would bury the table
  std::ostringstream md;
  const fs::path dir = fs::temp_directory_path() / ("cuview-bench-checkpoints-" + std::to_string(::getpid()));
  md << "\n### 7. Checkpoints — " << (cuda ? "CUDA" : "host backend") << " (files in " << dir.parent_path().string()
     << ")\n\n";
  Table t{{"simulation", "state", "stall (median)", "copy rate", "file write (median)", "write rate",
           "steps during the write / without one"},
          {}};
  struct Case {
    std::string sim;
    std::uint32_t n;
    std::map<std::string, std::string> options;
    std::string label;
  };
  std::vector<Case> cases;
  for (int n : cuda ? o.sizes : o.host_sizes) {
    cases.push_back({"grayscott", static_cast<std::uint32_t>(n), {}, "grayscott " + std::to_string(n) + "²"});
    cases.push_back({"lbm", static_cast<std::uint32_t>(n), {}, "lbm " + std::to_string(n) + "²"});
  }
  const std::uint64_t bodies = cuda ? 1048576 : 4096;
  cases.push_back({"nbody", 256, {{"bodies", std::to_string(bodies)}}, "nbody " + std::to_string(bodies) + " bodies"});
  for (const auto& c : cases) {
    auto b = make_builtin(c.sim, kind, c.n, c.n, c.options);
    checkpoint::Meta base;
    base.simulation = c.sim;
    base.dims = {c.n, c.n};
    base.options = c.options;
    base.backend = b.executor->name();
    base.cuview_version = CUVIEW_VERSION;
    checkpoint::Checkpointer ck({dir, 0, 2}, *b.executor, *b.sim, base);
    // The loop's rate with no checkpoint: batches of `batch` steps for a quarter second.
    const std::uint32_t batch = c.sim == "nbody" ? 1 : 8;
    auto rate = [&] {
      const auto t0 = Clock::now();
      std::uint64_t steps = 0;
      while (Clock::now() - t0 < std::chrono::milliseconds(250)) {
        b.sim->step(batch);
        b.executor->finish();
        steps += batch;
      }
      return static_cast<double>(steps) / std::chrono::duration<double>(Clock::now() - t0).count();
    };
    const double steps_per_s = rate();
    std::vector<double> stall, write, copy_rate, write_rate, during;
    const int reps = std::max(2, std::min(5, o.reps / 3));
    std::uint64_t bytes = 0;
    for (int r = 0; r < reps; ++r) {
      ck.request(static_cast<std::uint64_t>(r + 1), {});
      ck.tick(static_cast<std::uint64_t>(r), 0, {}, 0);
      std::optional<proto::CheckpointStatus> st;
      std::uint64_t steps = 0;
      const auto t0 = Clock::now();
      while (!(st = ck.take_status())) {  // the loop goes on while the writer writes
        b.sim->step(batch);
        b.executor->finish();
        steps += batch;
      }
      const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
      if (!st->error.empty()) throw std::runtime_error("checkpoint of " + c.label + " failed: " + st->error);
      bytes = st->bytes;
      stall.push_back(st->stall_ms);
      write.push_back(st->write_ms);
      copy_rate.push_back(static_cast<double>(bytes) / (st->stall_ms * 1e-3) / 1e9);
      write_rate.push_back(static_cast<double>(bytes) / (st->write_ms * 1e-3) / 1e9);
      during.push_back(static_cast<double>(steps) / (steps_per_s * secs));
    }
    const auto s = latency_dist(stall), w = latency_dist(write), cr = rate_dist(copy_rate), wr = rate_dist(write_rate),
               d = rate_dist(during);
    t.rows.push_back({c.label, fmt(static_cast<double>(bytes) / (1 << 20), "%.1f") + " MiB",
                      fmt(s.median, "%.2f") + " ms", fmt(cr.median, "%.1f") + " GB/s", fmt(w.median, "%.0f") + " ms",
                      fmt(wr.median, "%.2f") + " GB/s", fmt(100 * d.median, "%.0f") + " %"});
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  md << t.markdown();
  return md.str();
}

}  // namespace cuview::bench
