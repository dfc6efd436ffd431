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

#include "checkpoint/checkpoint_file.hpp"
#include "cuview/error.hpp"
#include "cuview/ring.hpp"
#include "executor/executor.hpp"
#include "parts/comm.hpp"
#include "parts/restore.hpp"
#include "parts/watchdog.hpp"
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

/// The built-in simulations `pick` accepts, by name.
template <class Pick>
std::string names_of(Pick pick) {
  std::string names;
  for (const auto& f : sim::builtin_simulations())
    if (pick(f)) names += (names.empty() ? "" : ", ") + f.name;
  return names;
}
std::string decomposable_names() {
  return names_of([](const sim::SimulationFactory& f) { return f.decomposable; });
}
std::string three_d_names() {
  return names_of([](const sim::SimulationFactory& f) { return f.axes == 3; });
}

/// A simulation's field as the publisher declares it, on the grid `dims` (slowest axis first):
/// written by the simulation (no buffer).
FieldDecl declared(const sim::FieldSpec& f, const Axes& dims) {
  return {.name = f.name,
          .bytes = Extent{dims}.cells() * f.components * size_of(f.dtype),
          .dims = dims,
          .dtype = f.dtype,
          .components = f.components,
          .help = f.help};
}
/// "two-dimensional": how a simulation's number of axes is said.
std::string dimensional(std::size_t axes) {
  static const char* const words[] = {"zero", "one", "two", "three"};
  return (axes < std::size(words) ? std::string(words[axes]) : std::to_string(axes)) + "-dimensional";
}
/// The --size form of a grid of `axes` axes, with an example: "WxHxD (for example 128x128x128)".
std::string size_form(std::size_t axes) {
  static const char* const forms[] = {"", "W (for example 4096)", "WxH (for example 512x512)",
                                      "WxHxD (for example 128x128x128)"};
  return axes < std::size(forms) ? forms[axes] : "of " + std::to_string(axes) + " sides";
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
  const std::size_t axes = factory != nullptr ? factory->axes : plugin_->axes();
  const std::string size = axes_text(opts.size);
  const std::string sim = "--sim " + opts.sim + (plugin_ ? " (simulation '" + sim_name_ + "')" : std::string());
  if (opts.size.size() != axes)
    throw Error(Errc::bad_value,
                sim + " is " + dimensional(axes) + ": give its grid as --size " + size_form(axes) + ", not " + size +
                    (factory != nullptr ? "; the 3-D simulations are " + three_d_names()
                                        : "; a plugin says how many axes its grid has with "
                                          "CUVIEW_SIMULATION_PLUGIN_AXES(..., 1 to 3) (docs/sdk.md)"));
  // The caps are on what one process holds: a decomposed run's whole grid is its parts'
  // slowest axis laid end to end (4 ranks: 1024x1024x4096). A volume's sides are capped lower:
  // its cells grow as the cube of one.
  const std::uint32_t max_side = axes == 3 ? 2048 : 32768;
  const auto ranks = static_cast<std::uint32_t>(opts.comm != nullptr ? opts.comm->size() : 1);
  const std::string over = ranks > 1 ? " over " + std::to_string(ranks) + " ranks" : std::string();
  const std::string held = ranks > 1 ? "each rank's part" : "the grid";
  Axes largest = opts.size;  // the largest part: its slowest axis the ceiling of the slabs (sim::slab_rows)
  largest[0] = (opts.size[0] + ranks - 1) / ranks;
  for (std::size_t a = 0; a < opts.size.size(); ++a) {
    if (opts.size[a] < 8 || largest[a] > max_side)
      throw Error(Errc::out_of_range,
                  "--size " + size + over + " is out of range: each side of " + held + " must be 8 to " +
                      std::to_string(max_side) + " cells" +
                      (ranks > 1 ? " (the slowest axis is cut into the parts; more ranks take a longer one)" : ""));
    if (opts.size[a] > 32768)  // the protocol's largest side of a whole grid
      throw Error(Errc::out_of_range, "--size " + size + " is out of range: a whole grid's side may be at most 32768");
  }
  if (Extent{largest}.cells() > (std::size_t{1} << 31))
    throw Error(Errc::out_of_range, "--size " + size + over + " gives " + held +
                                        " more than 2^31 cells; one process may hold up to 2^31 (1290x1290x1290): "
                                        "use a smaller --size, or more ranks (mpirun -n N) to cut it into parts");
  if (opts.slots < 1 || opts.slots > kMaxSlots)
    throw Error(Errc::out_of_range,
                "--slots " + std::to_string(opts.slots) + " is out of range: use 1 to " + std::to_string(kMaxSlots));

  // This process's grid: all of it, or its rank's slab of the slowest axis (a plane's rows, a
  // volume's layers).
  Axes local = opts.size;
  std::optional<PartOptions> part;
  if (opts.comm != nullptr) {
    const auto n = static_cast<std::uint32_t>(opts.comm->size()), k = static_cast<std::uint32_t>(opts.comm->rank());
    if (factory == nullptr || !factory->decomposable)
      throw Error(Errc::unsupported, "--sim " + opts.sim + " cannot run over several ranks (mpirun -n " +
                                         std::to_string(n) + "); the simulations that can: " + decomposable_names() +
                                         ". Run it with one process, without mpirun");
    const std::string unit = axes == 3 ? "layers" : "rows";
    if (opts.size[0] / n < 2)
      throw Error(Errc::out_of_range, "--size " + size + " has too few " + unit + " for " + std::to_string(n) +
                                          " ranks: each needs at least 2; use fewer ranks or more " + unit);
    const auto r = sim::slab_rows(opts.size[0], k, n);
    std::string group = k == 0 ? random_hex(8) : std::string();
    opts.comm->broadcast(group);  // one id for every part of this run
    local[0] = r.count;
    Axes offset(axes, 0);
    offset[0] = r.first;
    part = PartOptions{.index = k,
                       .count = n,
                       .offset = offset,
                       .global_dims = opts.size,
                       .group = group,
                       .rank = static_cast<int>(k),
                       .host = ""};
  }
  phases.next(opts.backend == "host"   ? "choosing the backend"
              : opts.backend == "cuda" ? "starting the GPU (CUDA context, kernels loaded)"
                                       : "choosing the backend (on a GPU: its CUDA context, kernels loaded)");
  publisher_.emplace(PublisherOptions{.name = opts.name,
                                      .backend = opts.backend,
                                      .sharing = opts.sharing,
                                      .device = opts.device,
                                      .title = sim_name_,
                                      .slots = opts.slots,
                                      .max_fps = opts.max_fps,
                                      .max_cost = opts.max_cost,
                                      .start_paused = opts.start_paused,
                                      .part = part,
                                      .words = {.create = "cuview-compute", .rename = "pick another --name"}});
  Executor& executor = publisher_->executor();
  // The plugin ABI's form of the grid: its sides fastest first, 1 past its axes.
  const Extent grid{local};
  sim::SimulationConfig config{grid.width(), grid.height(), opts.sim_options};
  config.depth = grid.depth();
  if (part) {
    phases.next("connecting to the neighbouring ranks");
    halo_ = opts.comm->make_halo(executor.kind() == Executor::Kind::cuda ? executor.device_id() : -1);
    slab_ = sim::Slab{part->offset[0], local[0], opts.size[0], halo_.get()};
    config.slab = &slab_;
  }
  try {
    phases.next("allocating the simulation's " + grid.text() + " grid");
    sim_ = plugin_ ? plugin_->make(executor, config) : factory->make(executor, config);
    if (!opts.sim_options.empty())  // what the run is, beyond its name and size (storage=fp16s, flow=periodic)
      spdlog::info("simulation '{}' on a {} grid with --sim-option {}", sim_name_, grid.text(),
                   checkpoint::join_options(opts.sim_options));
    const auto fields = in_simulation("fields", [&] { return sim_->fields(); });
    if (fields.empty())
      throw Error(Errc::bad_value, "simulation '" + sim_name_ + "' declares no fields: nothing to show");
    for (const auto& f : fields)
      publisher_->add_field(declared(f, local));
    for (const auto& set : in_simulation("particle_sets", [&] { return sim_->particle_sets(); })) {
      ParticlesDecl p{set.name, set.count, {}, set.help, set.bounds};
      for (const auto& a : set.attributes) {
        FieldDecl attribute = declared(a, {});  // an array of count values, on no grid
        attribute.bytes = set.count * a.components * size_of(a.dtype);
        p.attributes.push_back(std::move(attribute));
      }
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
    meta_.dims = opts.size;
    meta_.options = opts.sim_options;
    if (part) meta_.options[parts::kRanksOption] = std::to_string(part->count) + ":" + std::to_string(part->index);
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
      checkpoint::Options co{checkpoint_dir(), opts.checkpoint_every_s, opts.keep};
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
    // A restored run is at its checkpoint's step from the first moment a client can attach (its
    // state is loaded below, before the first frame).
    if (restored_) publisher_->record_step(restored_->meta.step, restored_->meta.sim_time);
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
  writes_in_step_ = in_simulation("writes_in_step", [&] { return sim_->writes_in_step(); });
  // Frames of every k-th cell for volume viewers, where the simulation can (parts: always whole).
  publisher_->set_writes_every(in_simulation("writes_every", [&] { return sim_->writes_every(); }));
  const sigset_t set = shutdown_signals();
  signals_ = UniqueFd(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!signals_) throw_errno("signalfd for SIGINT/SIGTERM", errno);
}

void Daemon::load_checkpoint() {
  namespace fs = std::filesystem;
  fs::path path = opts_.restore;
  std::optional<checkpoint::Loaded> loaded;
  if (opts_.restore == "latest-if-any") {
    // A service's first start has no checkpoint yet; every later start continues from one.
    if (opts_.comm != nullptr)
      throw Error(Errc::bad_value, "--restore latest-if-any is for one process (a service); under mpirun give "
                                   "--restore latest once every rank has written a checkpoint");
    if (checkpoint::list(checkpoint_dir()).empty()) {
      spdlog::info("no checkpoint in {} yet: starting from the initial state (--restore latest-if-any)",
                   checkpoint_dir().string());
      opts_.restore.clear();
      return;
    }
    opts_.restore = "latest";
  }
  if (opts_.restore == "latest" && opts_.comm != nullptr) {
    std::tie(path, loaded) = parts::restore_latest(*opts_.comm, checkpoint_dir());
    opts_.restore = path.string();
  } else if (opts_.restore == "latest") {
    auto [newest, read] = checkpoint::Checkpointer::latest(checkpoint_dir());
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

std::filesystem::path Daemon::checkpoint_dir() const {
  std::filesystem::path dir =
      opts_.checkpoint_dir.empty() ? checkpoint::default_dir(opts_.name) : std::filesystem::path(opts_.checkpoint_dir);
  if (opts_.comm != nullptr) dir /= "part-" + std::to_string(opts_.comm->rank());
  return dir;
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
  if (opts_.comm == nullptr) publish();  // parts publish when they all agree, at the end of the turn
}

void Daemon::publish() {
  if (!publishing_.load(std::memory_order_relaxed)) return;
  (void)publisher_->publish(step_, sim_time_, write_fields_, publisher_->executor().stream());
}

bool Daemon::step_writing(std::uint32_t n, FrameAfter when) {
  Executor& executor = publisher_->executor();
  const double dt = in_simulation("time_per_step", [&] { return sim_->time_per_step(); });
  bool wrote = false;
  if (when != FrameAfter::none && publishing_.load(std::memory_order_relaxed)) {
    if (when == FrameAfter::now) publisher_->publish_next_now();
    // Asked before the batch runs: the frame is of its last step. The frame's time holds the batch
    // (frame_holds_steps), or from the launch that writes it on (the simulation's
    // frame_step_begins), the simulation's own steps in it taken off at the timed rate.
    (void)publisher_->publish(step_ + n, sim_time_ + static_cast<double>(n) * dt,
                              [&](const std::vector<FieldTarget>& targets) {
                                executor.frame_holds_steps(n);
                                in_simulation("step_and_write", [&] { sim_->step_and_write(n, targets); });
                                wrote = true;
                              },
                              executor.stream());
  }
  // No frame after all (nobody reads, no free slot, not due): the batch as it always runs, timed
  // — the steps and the exchanges with the neighbours are the same either way.
  if (!wrote) in_simulation("step", [&] { executor.timed_steps(n, [&] { sim_->step(n); }); });
  ran(n, dt);
  if (!wrote) publisher_->record_step(step_, sim_time_);
  return wrote;
}

void Daemon::ran(std::uint32_t n, double dt) {
  publisher_->executor().end_batch();
  step_ += n;
  steps_taken_.store(step_, std::memory_order_relaxed);
  sim_time_ += static_cast<double>(n) * dt;
}

int Daemon::run() {
  if (opts_.comm != nullptr) return run_parts();
  publish();  // the initial state, before anyone is told to attach
  if (opts_.ready_fd >= 0) {
    (void)!::write(opts_.ready_fd, "ready\n", 6);
    ::close(opts_.ready_fd);
  }
  if (opts_.on_state) opts_.on_state("ready");
  spdlog::info("ready: attach with `cuview-ctl --name {} attach` or `cuview-gui --name {}`", opts_.name, opts_.name);

  std::string failure;
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
      // A reader or a picture's view that came while nobody watched gets a frame after one step,
      // written in it as every frame is, not after a whole batch (16 steps of a 512³ flow are
      // 100 ms): the first pixels a viewer shows. (Publishing the state as it is, outside the
      // step, costs the flow several times more, and the budget then holds the next frame back a
      // second: measured, H200.)
      const auto n = static_cast<std::uint32_t>(publisher_->steps_allowed(r.reader_arrived ? 1 : steps_per_frame_));
      if (n == 0) {  // paused: a change still shows at once (poll() made this publish due)
        if (r.changes_frame()) publish();
        publisher_->wait_for_requests(std::chrono::milliseconds(50));
        continue;
      }
      if (writes_in_step_) {
        (void)step_writing(n, FrameAfter::if_due);
        continue;
      }
      in_simulation("step", [&] { sim_->step(n); });
      ran(n, in_simulation("time_per_step", [&] { return sim_->time_per_step(); }));
      publish();
    }
  } catch (const SimulationFailed& e) {
    failure = e.what();
  } catch (const Error& e) {
    if (e.code() != Errc::cuda) throw;
    failure = "the GPU work of simulation '" + sim_name_ + "' failed: " + e.what();  // e.g. a kernel's fault
  }
  if (!failure.empty()) spdlog::error("{}; stopping daemon '{}' at step {}", failure, opts_.name, step_);
  if (opts_.on_state) opts_.on_state("stopping");
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

int Daemon::run_parts() {
  parts::Comm& comm = *opts_.comm;
  const bool leader = comm.rank() == 0;
  const std::string who = "rank " + std::to_string(comm.rank()) + " of " + std::to_string(comm.size());
  // A rank of this host that dies is named to this part's viewers, and this rank ends rather than
  // wait for it forever.
  parts::Watchdog watchdog(comm, [this](const std::string& reason) { publisher_->abandon(reason); });
  publisher_->record_step(step_, sim_time_);  // a restored run's step, before any turn
  comm.barrier();  // every part is attachable
  if (leader) {
    if (opts_.ready_fd >= 0) {
      (void)!::write(opts_.ready_fd, "ready\n", 6);
      ::close(opts_.ready_fd);
    }
    if (opts_.on_state) opts_.on_state("ready");
    spdlog::info("ready: {} ranks publish '{}' as {} parts; attach with `cuview-ctl --name {} status` or "
                 "`cuview-gui --name {}`",
                 comm.size(), opts_.name, comm.size(), opts_.name, opts_.name);
  }

  std::string failure;
  std::vector<std::uint64_t> tickets;  // rank 0: checkpoint requests waiting for the next capture
  double next_checkpoint_s = -1;
  try {
    for (;;) {
      bool stop_here = false;
      signalfd_siginfo si{};
      if (::read(signals_.get(), &si, sizeof si) == sizeof si) {
        spdlog::info("{}: received {}: shutting down every rank", who, si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
        stop_here = true;
      }
      // Rank 0 decides, as in any program split over ranks (the SDK's turn): only part 0 takes
      // steering; checkpoint requests and the timer make every rank checkpoint the same step.
      bool due = false;  // rank 0: the checkpoint timer
      if (leader && checkpointer_) {
        const double now = static_cast<double>(monotonic_ns()) * 1e-9;
        if (next_checkpoint_s < 0) next_checkpoint_s = now + opts_.checkpoint_every_s;
        due = opts_.checkpoint_every_s > 0 && now >= next_checkpoint_s;
        if (due) next_checkpoint_s = now + opts_.checkpoint_every_s;
      }
      const mpi::Turn turn = comm.next_turn(*publisher_, steps_per_frame_, stop_here, due || !tickets.empty());
      if (leader && checkpointer_)
        for (const auto& [ticket, path] : turn.requests.checkpoints) {
          if (!path.empty())
            spdlog::warn("checkpoint to {} asked: a run of ranks writes one file per rank in {}; writing there",
                         path, checkpoint_dir().parent_path().string());
          tickets.push_back(ticket);
        }
      if (turn.stop) break;
      const auto steps = static_cast<std::uint32_t>(turn.steps);  // at most steps_per_frame_
      // The same changes on every rank, before stepping from the same step.
      if (!turn.requests.params.empty()) apply_params(turn.requests.params);
      if (turn.requests.reset) reset();
      for (const auto& stroke : turn.requests.strokes) in_simulation("draw", [&] { sim_->draw(stroke); });
      if (turn.checkpoint && checkpointer_) {
        const std::uint64_t ticket = tickets.empty() ? 0 : tickets.front();
        if (!tickets.empty()) tickets.erase(tickets.begin());
        in_simulation("save_state",
                      [&] { checkpointer_->capture_now(step_, sim_time_, publisher_->params(), ticket); });
      }
      if (checkpointer_) report_checkpoints();
      // Every part publishes the same steps: a frame when any part's readers want one and every
      // part's budget allows it, so that a viewer of all parts finds each step in every ring.
      // Any rank's signal stops them all. A simulation that writes frames in its step agrees
      // before the batch (its last step writes the frame), the others after it.
      std::int64_t agreed[3] = {0, 0, 0};
      auto agree = [&] {
        agreed[0] = publisher_->frame_wanted() ? 1 : 0, agreed[1] = stop_here ? 1 : 0;
        agreed[2] = publisher_->within_budget() ? 0 : 1;
        comm.max(agreed);
        return agreed[0] != 0 && agreed[2] == 0;
      };
      if (steps > 0 && writes_in_step_) {
        (void)step_writing(steps, agree() ? FrameAfter::now : FrameAfter::none);  // halos inside
      } else {
        if (steps > 0) {
          in_simulation("step", [&] { sim_->step(steps); });  // halos inside, with the neighbours
          ran(steps, in_simulation("time_per_step", [&] { return sim_->time_per_step(); }));
        }
        if (agree() && publishing_.load(std::memory_order_relaxed)) {
          publisher_->publish_next_now();
          publish();
        } else {
          publisher_->record_step(step_, sim_time_);
        }
      }
      if (agreed[1] != 0) break;  // a paused rank 0 waits for requests in the next turn
    }
  } catch (const SimulationFailed& e) {
    failure = e.what();
  } catch (const Error& e) {
    if (e.code() != Errc::cuda) throw;
    failure = "the GPU work of simulation '" + sim_name_ + "' failed: " + e.what();
  }
  if (!failure.empty()) {
    // The other ranks wait in a halo or a collective that this rank will not join: say why, tell
    // this part's clients, and end the whole job.
    spdlog::error("{}: {}; stopping the run '{}' at step {}", who, failure, opts_.name, step_);
    watchdog.finishing();  // the others are ended with this one: not a death to report
    publisher_->close(who + " failed: " + failure);
    comm.abort(1);
  }
  bool saved = true;
  if (checkpointer_ && opts_.final_checkpoint) {
    try {
      const auto path =
          in_simulation("save_state", [&] { return checkpointer_->write_now(step_, sim_time_, publisher_->params()); });
      spdlog::info("{}: final checkpoint: {} (restart with the same mpirun -n and --restore latest)", who,
                   path.string());
    } catch (const std::exception& e) {
      spdlog::error("{}: the final checkpoint of step {} failed: {}", who, step_, e.what());
      saved = false;
    }
    report_checkpoints();
  }
  checkpointer_.reset();
  std::int64_t ok[1] = {saved ? 0 : 1};
  watchdog.finishing();
  comm.max(ok);  // every rank has written its part before any says it is done
  publisher_->close("shutdown");
  spdlog::info("{}: part {} of '{}' stopped at step {}", who, comm.rank(), opts_.name, step_);
  return ok[0] == 0 ? 0 : 1;
}

}  // namespace cuview
