// cuview-compute: the headless simulation daemon. main() only parses the command line,
// sets up logging and decides the exit code.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#ifdef CUVIEW_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string_view>
#include <regex>

#include "checkpoint/checkpoint_file.hpp"
#include "checkpoint/checkpointer.hpp"
#include "cuview/error.hpp"
#include "cuview/share/registry.hpp"
#include "daemon.hpp"
#include "parts/comm.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include "cuview/cuda/probe.hpp"
#endif

namespace {
/// "--max-cost 1%" (or "1"): the share of the run as a fraction. Empty when it is not a
/// percentage above 0 and at most 100.
std::optional<double> parse_percent(const std::string& text) {
  std::string t = text;
  if (!t.empty() && t.back() == '%') t.pop_back();
  try {
    std::size_t used = 0;
    const double v = std::stod(t, &used);
    if (used != t.size() || !(v > 0 && v <= 100)) return std::nullopt;
    return v / 100;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

/// Whether stderr goes to the systemd journal (systemd sets $JOURNAL_STREAM to its device:inode).
bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  struct stat st {};
  if (stream == nullptr || ::fstat(2, &st) != 0) return false;
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) == stream;
}

/// "<N>": the line's syslog priority, which the journal reads off the start of a line (sd-daemon(3)).
class JournalPriority final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    static constexpr std::string_view kPriority[] = {"<7>", "<7>", "<6>", "<4>", "<3>", "<2>", "<6>"};
    const auto p = kPriority[static_cast<std::size_t>(msg.level)];
    dest.append(p.data(), p.data() + p.size());
  }
  [[nodiscard]] std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JournalPriority>();
  }
};

/// Log lines: on a terminal or in a file with their time and level; in the journal with their
/// priority instead (the journal records the time and the process itself).
void set_log_pattern(const std::string& who) {
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  if (stderr_is_journal())
    formatter->add_flag<JournalPriority>('*').set_pattern("%*" + who + "%v");
  else
    formatter->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%-5l%$ cuview-compute[%P] " + who + "%v");
  spdlog::set_formatter(std::move(formatter));
}
}  // namespace

int main(int argc, char** argv) {
  cuview::block_shutdown_signals();  // before any thread exists, so SIGTERM reaches the signalfd
  ::umask(077);                      // sockets and files: this user only
  // Every CUDA kernel is loaded when the GPU starts, not at its first launch (CUDA's lazy loading):
  // a frame's cost is timed by events around its kernels, and a first launch that loads them (and,
  // for a GPU the build has no code for, compiles them: seconds) would count as the first frame's
  // cost, for which the budget holds the next frames back: a fresh viewer of a 512³ flow on an
  // H200, from a build that held the frame kernels as PTX alone, saw one frame, then none for over
  // 20 s (2026-11-29). A CUDA_MODULE_LOADING the user set is kept.
  ::setenv("CUDA_MODULE_LOADING", "EAGER", 0);

  cuview::DaemonOptions o;
  std::string size = "512x512", log_level = "info";
  bool check_cuda = false;
  CLI::App app{
      "cuview-compute: runs a simulation on the GPU (or CPU) and publishes its frames to cuview viewers.\n"
      "Runs in the foreground until SIGTERM/SIGINT or `cuview-ctl shutdown`."};
  app.set_version_flag("--version", "cuview-compute " CUVIEW_VERSION);
  app.add_option("--name", o.name, "instance name; endpoints live in $XDG_RUNTIME_DIR/cuview/NAME")
      ->capture_default_str();
  app.add_option("--backend", o.backend, "where the simulation runs")
      ->check(CLI::IsMember({"auto", "cuda", "host"}))
      ->capture_default_str();
  app.add_option("--sharing", o.sharing,
                 "how frames cross to viewers (docs/sharing.md): " + cuview::share::sharing_choices_text() +
                     "; auto is legacy on CUDA, shared memory on the host")
      ->check(CLI::IsMember(cuview::share::sharing_choices()))
      ->capture_default_str();
  app.add_option("--device", o.device,
                 "the GPU to run on, by CUDA ordinal (as CUDA_VISIBLE_DEVICES numbers them; default: the first "
                 "usable); status and the log name it with its PCI id")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--sim", o.sim,
                 "a built-in simulation (cuview-ctl sims lists them) or the path of a plugin (docs/sdk.md)")
      ->capture_default_str();
  app.add_option("--size", size, "grid size WxH, WxHxD for a 3-D simulation, W for one of one axis")->capture_default_str();
  app.add_option("--slots", o.slots, "ring slots per field (1-16)")->capture_default_str();
  app.add_option("--fps", o.max_fps, "frames published per second at most (0: after every batch)")
      ->capture_default_str();
  std::string max_cost = "1%";
  app.add_option("--max-cost", max_cost,
                 "the largest share of the run's time publishing frames may take, as a percentage (0.3%, 5%; "
                 "100%: no budget): the frame rate adapts to it, never above --fps")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the initial state")->capture_default_str();
  app.add_option("--preset", o.preset,
                 "parameter preset (default: the simulation's first; grayscott: coral, mitosis, "
                 "maze, spots, waves)");
  app.add_flag("--paused", o.start_paused, "start paused");
  std::uint32_t steps_per_launch = 0;
  app.add_option("--steps-per-launch", steps_per_launch,
                 "grayscott on CUDA: simulation steps per kernel launch (temporal blocking; same results, default 4, "
                 "see docs/benchmarks.md)")
      ->check(CLI::Range(1, 4));
  std::vector<std::string> sim_options;
  app.add_option("--sim-option", sim_options,
                 "KEY=VALUE for the simulation, repeatable (lbm: flow=channel|periodic, obstacle=cylinder|none, "
                 "overlap=on|off, storage=fp32|fp16s; lbm3d: the same with obstacle=sphere|none; nbody: bodies=N, "
                 "setup=disc|galaxies)");
  std::string every, verify;
  app.add_option("--checkpoint-dir", o.checkpoint_dir,
                 "where checkpoints go (default: $XDG_STATE_HOME/cuview/NAME, else ~/.local/state/cuview/NAME)");
  app.add_option("--checkpoint-every", every, "write a checkpoint this often: 30s, 5m, 1h (default: only on request)");
  app.add_option("--keep", o.keep, "checkpoints kept in --checkpoint-dir, the oldest removed (0: all)")
      ->capture_default_str();
  bool no_final = false;
  app.add_flag("--no-final-checkpoint", no_final, "skip the checkpoint written at SIGTERM/SIGINT/shutdown");
  app.add_option("--restore", o.restore,
                 "continue from a checkpoint: a file, `latest` for the newest good one in --checkpoint-dir, or "
                 "`latest-if-any`: the same, or the initial state when there is none yet (a service's first start)");
  app.add_option("--verify-checkpoint", verify, "read a checkpoint file, verify its checksums, print what it holds");
  app.add_option("--ready-fd", o.ready_fd, "write \"ready\" to this inherited descriptor once clients can attach");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();
  app.add_flag("--check-cuda", check_cuda,
               "say whether the CUDA backend can run here (on the --device given, else the first GPU), and exit "
               "(0 = yes)");
  app.set_config("--config", "",
                 "read options from this file first: one per line, `option = value` (TOML; `sim = \"lbm\"`, "
                 "`size = \"1600x400\"`, `paused = true`); the systemd unit reads ~/.config/cuview/NAME.conf");
  for (int i = 1; i + 1 < argc; ++i) {
    // CLI11's own message for a missing file says too little to act on.
    if (std::string_view(argv[i]) != "--config" || std::filesystem::exists(argv[i + 1])) continue;
    std::fprintf(stderr,
                 "cuview-compute: --config %s: no such file; write the daemon's options there, one per line as "
                 "`option = value`, for example:\n  sim = \"lbm\"\n  size = \"1600x400\"\n",
                 argv[i + 1]);
    return 2;
  }
  CLI11_PARSE(app, argc, argv);

  // The loop, the control thread and the checkpoint writer all log: a thread-safe sink.
  auto logger = spdlog::stderr_color_mt("cuview-compute");
  spdlog::set_default_logger(logger);
  set_log_pattern("");
  spdlog::set_level(spdlog::level::from_str(log_level));

  o.final_checkpoint = !no_final;
  if (const auto cost = parse_percent(max_cost)) {
    o.max_cost = *cost;
  } else {
    spdlog::error("--max-cost {}: not a percentage of the run above 0 and at most 100; give one such as 1% or 0.3% "
                  "(100%: no budget)",
                  max_cost);
    return 2;
  }
  if (!every.empty()) try {
      o.checkpoint_every_s = cuview::checkpoint::parse_duration(every);
    } catch (const cuview::Error& e) {
      spdlog::error("--checkpoint-every: {}", e.what());
      return 2;
    }
  if (!verify.empty()) try {
      const auto c = cuview::checkpoint::read(verify);
      std::printf("%s: cuview checkpoint (written %s by cuview %s on %s), checksums OK\n", verify.c_str(),
                  c.meta.written_utc.c_str(), c.meta.cuview_version.c_str(), c.meta.backend.c_str());
      std::printf("simulation %s (state version %u), %s, step %llu, simulated time %g\n",
                  c.meta.simulation.c_str(), c.meta.state_version, cuview::axes_text(c.meta.dims).c_str(),
                  static_cast<unsigned long long>(c.meta.step), c.meta.sim_time);
      for (const auto& [k, v] : c.meta.options) std::printf("option %s=%s\n", k.c_str(), v.c_str());
      for (const auto& [k, v] : c.meta.params) std::printf("parameter %s = %g\n", k.c_str(), v);
      for (const auto& b : c.blocks) {
        std::string shape;
        for (auto d : b.spec.shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
        std::printf("state %s: %s %s (%zu bytes)\n", b.spec.name.c_str(), cuview::to_string(b.spec.dtype),
                    shape.c_str(), b.spec.bytes());
      }
      return 0;
    } catch (const cuview::Error& e) {
      spdlog::error("{}", e.what());
      return 1;
    }

  if (check_cuda) {
#ifdef CUVIEW_HAVE_CUDA
    const auto p = cuview::cuda::probe(o.device < 0 ? 0 : o.device);
    if (p.usable) {
      std::printf("cuda: usable: %s (PCI %s), driver %d, runtime %d\n", p.name.c_str(), p.pci_bus_id.c_str(),
                  p.driver_version, p.runtime_version);
      return 0;
    }
    std::printf("cuda: not usable: %s\n", p.reason.c_str());
#else
    std::printf("cuda: not usable: this build has no CUDA backend\n");
#endif
    return 1;
  }

  if (steps_per_launch != 0) o.sim_options["steps_per_launch"] = std::to_string(steps_per_launch);
  for (const auto& kv : sim_options) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      spdlog::error("--sim-option {} is not KEY=VALUE (for example flow=periodic)", kv);
      return 2;
    }
    o.sim_options[kv.substr(0, eq)] = kv.substr(eq + 1);
  }

  std::smatch m;
  static const std::regex kSize(R"((\d{1,6})(?:x(\d{1,6}))?(?:x(\d{1,6}))?)");
  if (!std::regex_match(size, m, kSize) || (m[3].matched && !m[2].matched)) {
    spdlog::error("--size {} is not W, WxH or WxHxD (for example 512x512, 128x128x128 for a 3-D simulation, "
                  "4096 for a plugin of one axis)",
                  size);
    return 2;
  }
  o.size.clear();
  for (int k = 1; k <= 3 && m[k].matched; ++k)  // fastest first on the command line, slowest first in Axes
    o.size.insert(o.size.begin(), static_cast<std::uint32_t>(std::stoul(m[k])));

  // Started by mpirun as one of several ranks: one part of a decomposed run (docs/protocol.md
  // "Parts"). --size is the global grid; each rank owns a slab of its rows and, on CUDA, the GPU
  // of its rank on this host.
  std::unique_ptr<cuview::parts::Comm> comm;
  if (cuview::parts::launched_ranks() > 1) {
    try {
      comm = cuview::parts::init_mpi(&argc, &argv);
    } catch (const cuview::Error& e) {
      spdlog::error("{}", e.what());
      return 1;
    }
    o.comm = comm.get();
    set_log_pattern("rank " + std::to_string(comm->rank()) + ": ");
#ifdef CUVIEW_HAVE_CUDA
    if (o.device < 0 && o.backend != "host" && cuview::cuda::probe(comm->local_rank()).usable)
      o.device = comm->local_rank();  // one rank per GPU, by its rank on this host
#endif
  }

#ifdef CUVIEW_HAVE_SYSTEMD
  // Under systemd (Type=notify): ready once clients can attach, stopping as it stops. Outside
  // systemd ($NOTIFY_SOCKET unset) sd_notify does nothing.
  o.on_state = [](std::string_view state) {
    (void)sd_notify(0, state == "ready" ? "READY=1\nSTATUS=publishing; clients can attach" : "STOPPING=1");
  };
#endif
  try {
    cuview::Daemon daemon(o);
    return daemon.run();
  } catch (const cuview::Error& e) {
    spdlog::error("{}", e.what());
    if (comm) comm->abort(1);  // the other ranks wait for this one in a collective: end them too
    return e.code() == cuview::Errc::already_running ? 3 : 1;
  } catch (const std::exception& e) {
    spdlog::error("unexpected error: {}", e.what());
    if (comm) comm->abort(1);
    return 1;
  }
}
