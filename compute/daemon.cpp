#include "daemon.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <cstdlib>
#include <filesystem>

#include "cuview/error.hpp"
#include "cuview/ring.hpp"
#include "executor/executor.hpp"
#include "publisher/parameter_set.hpp"

namespace cuview {

namespace {
sigset_t shutdown_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

/// Anything the simulation throws, with its context: fatal to the run (its state is unknown).
struct SimulationFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A checkpoint that cannot be restored: its message names the file and the problem.
struct RestoreFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool is_plugin_path(const std::string& sim) {
  return sim.find('/') != std::string::npos || (sim.size() > 3 && sim.compare(sim.size() - 3, 3, ".so") == 0);
}

const sim::SimulationFactory& find_simulation(const std::string& name) {
  std::string names;
  for (const auto& f : sim::builtin_simulations()) {
    if (f.name == name) return f;
    names += (names.empty() ? "" : ", ") + f.name;
  }
  throw Error(Errc::bad_value, "--sim " + name + " is not a known simulation; known: " + names +
                                   " (cuview-ctl sims lists them with their fields and parameters)");
}

/// A simulation's field as the publisher declares it: written by the simulation (no buffer).
FieldDecl declared(const sim::FieldSpec& f, std::uint32_t width, std::uint32_t height, std::uint64_t cells) {
  return {f.name,         nullptr, cells * f.components * size_of(f.dtype), width, height, f.dtype, f.components,
          Memory::device, f.help};
}
/// The phases of a daemon's start, timed: one log line says where the time went, and while a
/// phase runs longer than a second a line each second says which one it is.
class StartPhases {
 public:
  StartPhases() : t0_(monotonic_ns()), last_(t0_) {
    watcher_ = std::thread([this] {
      std::unique_lock lock(m_);
      while (!cv_.wait_for(lock, std::chrono::seconds(1), [&] { return done_; }))
        spdlog::info("still starting: {} ({:.1f} s so far)", phase_, static_cast<double>(monotonic_ns() - t0_) * 1e-9);
    });
  }
  ~StartPhases() { stop(); }
  /// Ends the current phase (timed under its name) and begins `next`.
  void next(const std::string& next) {
    const auto now = monotonic_ns();
    std::lock_guard lock(m_);
    if (!phase_.empty()) times_ += (times_.empty() ? "" : ", ") + phase_ + fmt_s(now - last_);
    phase_ = next;
    last_ = now;
  }
  /// Ends the last phase and says how long the start took, and where.
  void finish() {
    next("");
    stop();
    spdlog::info("started in {:.2f} s ({})", static_cast<double>(monotonic_ns() - t0_) * 1e-9, times_);
  }

 private:
  static std::string fmt_s(std::int64_t ns) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " %.2f s", static_cast<double>(ns) * 1e-9);
    return buf;
  }
  void stop() {
    {
      std::lock_guard lock(m_);
      done_ = true;
    }
    cv_.notify_all();
    if (watcher_.joinable()) watcher_.join();
  }
  std::int64_t t0_, last_;
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string phase_, times_;
  std::thread watcher_;
};
}  // namespace

template <class F>
decltype(auto) Daemon::in_simulation(const char* call, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    throw SimulationFailed("simulation '" + sim_name_ + "'" + (plugin_ ? " (plugin " + plugin_->path() + ")" : "") +
                           " failed in " + call + "(): " + e.what());
  }
}

void block_shutdown_signals() {
  const sigset_t set = shutdown_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

Daemon::Daemon(const DaemonOptions& opts) : opts_(opts) {
  StartPhases phases;
  phases.next("loading the simulation");
  const sim::SimulationFactory* factory = nullptr;
  if (is_plugin_path(opts.sim)) {
    plugin_ = sim::Plugin::load(opts.sim);
    sim_name_ = plugin_->info().name;
    spdlog::info("simulation '{}' from plugin {} (built with cuview {})", sim_name_, opts.sim,
                 plugin_->info().cuview_version);
  } else {
    factory = &find_simulation(opts.sim);
    sim_name_ = opts.sim;
  }
  if (opts.width < 8 || opts.height < 8 || opts.width > 32768 || opts.height > 32768)
    throw Error(Errc::out_of_range, "--size " + std::to_string(opts.width) + "x" + std::to_string(opts.height) +
                                        " is out of range: each side must be 8 to 32768 cells");
  if (opts.slots < 1 || opts.slots > kMaxSlots)
    throw Error(Errc::out_of_range,
                "--slots " + std::to_string(opts.slots) + " is out of range: use 1 to " + std::to_string(kMaxSlots));

  phases.next(opts.backend == "host" ? "choosing the backend" : "starting the GPU (CUDA context)");
  publisher_.emplace(PublisherOptions{.name = opts.name,
                                      .backend = opts.backend,
                                      .sharing = opts.sharing,
                                      .device = opts.device,
                                      .title = sim_name_,
                                      .slots = opts.slots,
                                      .max_fps = opts.max_fps,
                                      .start_paused = opts.start_paused});
  Executor& executor = publisher_->executor();
  const sim::SimulationConfig config{opts.width, opts.height, opts.sim_options};
  try {
    phases.next("allocating the simulation's " + std::to_string(opts.width) + "x" + std::to_string(opts.height) +
                " grid");
    sim_ = plugin_ ? plugin_->make(executor, config) : factory->make(executor, config);
    const auto fields = in_simulation("fields", [&] { return sim_->fields(); });
    if (fields.empty())
      throw Error(Errc::bad_value, "simulation '" + sim_name_ + "' declares no fields: nothing to show");
    for (const auto& f : fields)
      publisher_->add_field(declared(f, opts.width, opts.height, std::uint64_t{opts.width} * opts.height));
    for (const auto& set : in_simulation("particle_sets", [&] { return sim_->particle_sets(); })) {
      ParticlesDecl p{set.name, set.count, {}, set.help, set.bounds};
      for (const auto& a : set.attributes) p.attributes.push_back(declared(a, 0, 0, set.count));
      publisher_->add_particles(std::move(p));
    }
    for (auto& spec : with_publisher_params(in_simulation("params", [&] { return sim_->params(); })))
      publisher_->add_param(std::move(spec));
    for (auto& preset : in_simulation("presets", [&] { return sim_->presets(); }))
      publisher_->add_preset(std::move(preset));
    if (!opts.preset.empty()) publisher_->use_preset(opts.preset);
    for (auto& input : in_simulation("inputs", [&] { return sim_->inputs(); })) publisher_->add_input(std::move(input));
    meta_.simulation = sim_name_;
    meta_.state_version = in_simulation("state_version", [&] { return sim_->state_version(); });
    meta_.width = opts.width, meta_.height = opts.height;
    meta_.options = opts.sim_options;
    meta_.backend = executor.name();
    meta_.cuview_version = CUVIEW_VERSION;
    const auto state = in_simulation("state", [&] { return sim_->state(); });
    if (!opts.restore.empty()) try {
        phases.next("reading checkpoint " + opts.restore);
        load_checkpoint();
      } catch (const Error& e) {
        throw RestoreFailed(e.what());
      }
    if (!state.empty()) {
      const bool asked = opts.checkpoint_every_s > 0 || !opts.checkpoint_dir.empty() || !opts.restore.empty();
      checkpoint::Options co{
          opts.checkpoint_dir.empty() ? checkpoint::default_dir(opts.name) : std::filesystem::path(opts.checkpoint_dir),
          opts.checkpoint_every_s, opts.keep};
      try {
        checkpointer_ = std::make_unique<checkpoint::Checkpointer>(co, executor, *sim_, meta_);
        report_checkpoints();  // enabled, where, how often
      } catch (const Error& e) {
        if (asked) throw;
        spdlog::warn("checkpoints are off: {}", e.what());
      }
    } else if (opts.checkpoint_every_s > 0) {
      throw Error(Errc::bad_value, "simulation '" + sim_name_ +
                                       "' declares no state (Simulation::state()), so it cannot be checkpointed; "
                                       "drop --checkpoint-every");
    }
    if (restored_) try {
        publisher_->use_params(restored_->meta.params);
      } catch (const Error& e) {
        throw RestoreFailed("cannot restore checkpoint " + opts_.restore + ": its parameters do not fit '" + sim_name_ +
                            "': " + e.what());
      }
    phases.next("making the frame ring");
    publisher_->start();
    apply_params(publisher_->params());
    phases.next(restored_ ? "restoring the state" : "making the initial state");
    if (restored_) {
      std::vector<const void*> in;
      for (const auto& b : restored_->blocks) in.push_back(b.data.get());
      in_simulation("load_state", [&] { sim_->load_state(in); });
      step_ = restored_->meta.step;
      sim_time_ = restored_->meta.sim_time;
      spdlog::info("restored step {} (simulated time {}) from {}", step_, sim_time_, opts_.restore);
      restored_.reset();  // its memory goes back
    } else {
      in_simulation("reset", [&] { sim_->reset(opts.seed); });
    }
  } catch (const SimulationFailed& e) {
    throw Error(Errc::bad_value, e.what());
  } catch (const RestoreFailed& e) {
    throw Error(Errc::bad_value, e.what());  // names the file already
  } catch (const sim::PluginFailed&) {
    throw;  // names the simulation, the plugin and the call already
  } catch (const Error& e) {
    if (e.code() != Errc::bad_value && e.code() != Errc::out_of_range) throw;
    // What the publisher refused came from the simulation's declarations: say whose.
    throw Error(e.code(), "simulation '" + sim_name_ + "'" + (plugin_ ? " (plugin " + plugin_->path() + ")" : "") +
                              ": " + e.what());
  }
  phases.finish();
  write_fields_ = [this](const std::vector<FieldTarget>& targets) {
    in_simulation("write_fields", [&] { sim_->write_fields(targets); });
  };
  const sigset_t set = shutdown_signals();
  signals_ = UniqueFd(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!signals_) throw_errno("signalfd for SIGINT/SIGTERM", errno);
}

void Daemon::load_checkpoint() {
  namespace fs = std::filesystem;
  fs::path path = opts_.restore;
  std::optional<checkpoint::Loaded> loaded;
  if (opts_.restore == "latest") {
    const fs::path dir =
        opts_.checkpoint_dir.empty() ? checkpoint::default_dir(opts_.name) : fs::path(opts_.checkpoint_dir);
    auto [newest, read] = checkpoint::Checkpointer::latest(dir);
    path = newest;
    loaded = std::move(read);
    opts_.restore = path.string();
  } else {
    loaded = checkpoint::read(path);
  }
  if (const auto why = checkpoint::mismatch(*loaded, meta_, in_simulation("state", [&] { return sim_->state(); }));
      !why.empty())
    throw Error(Errc::bad_value, "cannot restore checkpoint " + path.string() + ": " + why);
  restored_ = std::move(loaded);
}

void Daemon::report_checkpoints() {
  if (checkpointer_)
    if (auto st = checkpointer_->take_status()) publisher_->report_checkpoint(*st);
}

void Daemon::apply_params(const std::map<std::string, double>& values) {
  in_simulation("set_params", [&] { sim_->set_params(values); });
  steps_per_frame_ = static_cast<std::uint32_t>(values.at(kStepsPerFrame));
}

void Daemon::reset() {
  in_simulation("reset", [&] { sim_->reset(opts_.seed); });
  step_ = 0;
  sim_time_ = 0;
  publisher_->publish_next_now();
  publish();
}

void Daemon::publish() {
  if (!publishing_.load(std::memory_order_relaxed)) return;
  (void)publisher_->publish(step_, sim_time_, write_fields_, publisher_->executor().stream());
}

int Daemon::run() {
  publish();  // the initial state, before anyone is told to attach
  if (opts_.ready_fd >= 0) {
    (void)!::write(opts_.ready_fd, "ready\n", 6);
    ::close(opts_.ready_fd);
  }
  spdlog::info("ready: attach with `cuview-ctl --name {} attach` or `cuview-gui --name {}`", opts_.name, opts_.name);

  std::string failure;
  Executor& executor = publisher_->executor();
  try {
    for (;;) {
      signalfd_siginfo si{};
      if (::read(signals_.get(), &si, sizeof si) == sizeof si) {
        spdlog::info("received {}: shutting down", si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
        break;
      }
      const Requests r = publisher_->poll();
      if (r.shutdown) break;
      if (!r.params.empty()) apply_params(r.params);
      if (r.reset) reset();
      for (const auto& stroke : r.strokes) in_simulation("draw", [&] { sim_->draw(stroke); });
      if (checkpointer_) {
        for (const auto& [ticket, path] : r.checkpoints) checkpointer_->request(ticket, path);
        const double now = static_cast<double>(monotonic_ns()) * 1e-9;
        in_simulation("save_state", [&] { checkpointer_->tick(step_, sim_time_, publisher_->params(), now); });
        report_checkpoints();
      }
      const auto n = static_cast<std::uint32_t>(publisher_->steps_allowed(steps_per_frame_));
      if (n == 0) {  // paused: a change still shows at once (poll() made this publish due)
        if (r.changes_frame()) publish();
        publisher_->wait_for_requests(std::chrono::milliseconds(50));
        continue;
      }
      in_simulation("step", [&] { sim_->step(n); });
      executor.end_batch();
      step_ += n;
      steps_taken_.store(step_, std::memory_order_relaxed);
      sim_time_ += static_cast<double>(n) * in_simulation("time_per_step", [&] { return sim_->time_per_step(); });
      publish();
    }
  } catch (const SimulationFailed& e) {
    failure = e.what();
  } catch (const Error& e) {
    if (e.code() != Errc::cuda) throw;
    failure = "the GPU work of simulation '" + sim_name_ + "' failed: " + e.what();  // e.g. a kernel's fault
  }
  if (!failure.empty()) spdlog::error("{}; stopping daemon '{}' at step {}", failure, opts_.name, step_);
  bool saved = true;
  if (failure.empty() && checkpointer_ && opts_.final_checkpoint) {
    // Before the name is given up: a daemon started with --restore latest right after finds it.
    try {
      const auto path =
          in_simulation("save_state", [&] { return checkpointer_->write_now(step_, sim_time_, publisher_->params()); });
      spdlog::info("final checkpoint: {} (restart with --restore latest)", path.string());
    } catch (const std::exception& e) {
      spdlog::error("the final checkpoint of step {} failed: {}", step_, e.what());
      saved = false;
    }
    report_checkpoints();
  }
  checkpointer_.reset();
  publisher_->close(failure.empty() ? "shutdown" : "simulation failed: " + failure);
  spdlog::info("daemon '{}' stopped at step {}", opts_.name, step_);
  return failure.empty() && saved ? 0 : 1;
}

}  // namespace cuview
