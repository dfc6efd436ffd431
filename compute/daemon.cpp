#include "daemon.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "cuview/error.hpp"
#include "cuview/zmq_util.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include "cuview/cuda_ipc.hpp"
#endif

namespace cuview {
namespace fs = std::filesystem;

namespace {
constexpr std::size_t kMaxPeers = 64;
constexpr std::uint64_t kMaxStepRequest = 1'000'000;

/// Owner of /proc/PID (the process's effective uid); -1 when it cannot be read.
uid_t process_uid(pid_t pid) {
  struct stat st {};
  if (::stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0) return static_cast<uid_t>(-1);
  return st.st_uid;
}

sigset_t shutdown_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

/// Whether NVIDIA's Multi-Process Service control daemon runs for us (its control pipe exists).
bool mps_running() {
  const char* dir = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  std::error_code ec;
  return fs::exists(fs::path(dir != nullptr && *dir != '\0' ? dir : "/tmp/nvidia-mps") / "control", ec);
}

std::unique_ptr<Executor> choose_executor(const DaemonOptions& o) {
  if (o.backend == "host") {
    spdlog::info("backend: host (asked for with --backend host)");
    return make_host_executor();
  }
#ifdef CUVIEW_HAVE_CUDA
  if (o.backend == "cuda") return make_cuda_executor();
  const auto probe = cuda::probe();
  if (probe.usable) {
    spdlog::info("backend: cuda on {} (auto: a CUDA device is usable)", probe.name);
    return make_cuda_executor();
  }
  spdlog::info("backend: host (auto: CUDA is not usable here: {})", probe.reason);
#else
  if (o.backend == "cuda")
    throw Error(Errc::cuda,
                "--backend cuda: this cuview-compute was built without the CUDA toolkit; rebuild with "
                "nvcc on PATH or use --backend host");
  spdlog::info("backend: host (auto: this build has no CUDA backend)");
#endif
  return make_host_executor();
}

/// Anything the simulation throws, with its context: fatal to the run (its state is unknown).
struct SimulationFailed : std::runtime_error {
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

Daemon::Daemon(const DaemonOptions& opts) : opts_(opts), paths_(opts.name) {
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

  ensure_private_dir(paths_.dir.parent_path());
  ensure_private_dir(paths_.dir);
  lock_ = std::make_unique<InstanceLock>(paths_);
  clean_leftovers();

  session_ = random_hex(16);
  executor_ = choose_executor(opts);
  const sim::SimulationConfig config{opts.width, opts.height, opts.sim_options};
  try {
    sim_ = plugin_ ? plugin_->make(*executor_, config) : factory->make(*executor_, config);
    fields_ = in_simulation("fields", [&] { return sim_->fields(); });
    particles_ = in_simulation("particle_sets", [&] { return sim_->particle_sets(); });
    for (const auto& set : particles_)
      if (set.count < 1 || set.count > (1ull << 31) || set.attributes.empty())
        throw Error(Errc::bad_value, "simulation '" + sim_name_ + "' declares particle set '" + set.name + "' with " +
                                         std::to_string(set.count) + " particles and " +
                                         std::to_string(set.attributes.size()) +
                                         " attributes; a set needs 1 to 2^31 particles and at least one attribute");
    if (fields_.empty())
      throw Error(Errc::bad_value, "simulation '" + sim_name_ + "' declares no fields: nothing to show");
    params_ =
        std::make_unique<ParameterSet>(with_publisher_params(in_simulation("params", [&] { return sim_->params(); })),
                                       in_simulation("presets", [&] { return sim_->presets(); }));
    apply_params(params_->apply(opts.preset.empty() ? std::nullopt : std::optional<std::string>(opts.preset), {}));
  } catch (const SimulationFailed& e) {
    throw Error(Errc::bad_value, e.what());
  }
  writer_ = std::make_unique<FrameWriter>(*executor_, *sim_, opts.width, opts.height);
#ifdef CUVIEW_HAVE_CUDA
  if (executor_->kind() == Executor::Kind::cuda)
    slots_ = make_cuda_ipc_slots(*executor_, writer_->layout(), opts.slots);
#endif
  if (!slots_) slots_ = make_shared_memory_slots(writer_->layout(), opts.slots);
  if (executor_->kind() == Executor::Kind::cuda) {
    if (mps_running())
      spdlog::info("MPS is running: viewers share the GPU with the simulation without context switches");
    else
      spdlog::info(
          "viewers that render on this GPU cost the simulation ~0.35 ms per frame in context switches "
          "(~2 % at 60 Hz); start MPS first (nvidia-cuda-mps-control -d) to remove that, see README");
  }
  try {
    in_simulation("reset", [&] { sim_->reset(opts.seed); });
  } catch (const SimulationFailed& e) {
    throw Error(Errc::bad_value, e.what());
  }
  ring_ = std::make_unique<RingWriter>(opts.slots, session_);
  write_segments_file();

  const sigset_t set = shutdown_signals();
  signals_ = UniqueFd(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!signals_) throw_errno("signalfd for SIGINT/SIGTERM", errno);

  if (!configure_server_socket(router_) || !configure_server_socket(pub_))
    spdlog::warn(
        "this libzmq cannot filter ipc:// peers by uid; only the 0700 runtime directory keeps other "
        "users out");
  router_.bind(paths_.control_endpoint());
  pub_.bind(paths_.frames_endpoint());
  paused_ = opts.start_paused;
  started_ns_ = rate_t0_ = monotonic_ns();
  spdlog::info("daemon '{}' session {}: {} {}x{} on {} ({}), {} slots of {} bytes, control {}", opts.name, session_,
               sim_name_, opts.width, opts.height, executor_->name(), executor_->device(), opts.slots,
               writer_->layout().slot_bytes, paths_.control_endpoint());
}

Daemon::~Daemon() {
  // Sockets close (linger 0) before the files go; the lock is released last, by lock_.
  router_.close();
  pub_.close();
  std::error_code ec;
  fs::remove(paths_.control, ec);
  fs::remove(paths_.frames, ec);
  fs::remove(paths_.segments, ec);
}

void Daemon::clean_leftovers() {
  // We hold the lock, so whatever is here belongs to a daemon that died without cleaning up.
  std::error_code ec;
  fs::remove(paths_.control, ec);
  fs::remove(paths_.frames, ec);
  std::ifstream in(paths_.segments);
  const std::string ours = "/cuview-" + std::to_string(::getuid()) + "-";
  int removed = 0;
  for (std::string name; std::getline(in, name);) {
    if (name.rfind(ours, 0) == 0 && ::shm_unlink(name.c_str()) == 0) ++removed;
  }
  if (removed > 0)
    spdlog::warn("removed {} shared-memory segment(s) left by a daemon '{}' that crashed", removed, opts_.name);
}

void Daemon::write_segments_file() const {
  std::ofstream out(paths_.segments, std::ios::trunc);
  out << ring_->shm_name() << '\n';
  for (const auto& s : slots_->segments()) out << s << '\n';
  if (!out) throw_errno("writing " + paths_.segments.string(), errno);
}

int Daemon::run() {
  ring_->set_state(DaemonState::running);
  publish_now_ = true;
  publish_frame();
  if (opts_.ready_fd >= 0) {
    (void)!::write(opts_.ready_fd, "ready\n", 6);
    ::close(opts_.ready_fd);
  }
  spdlog::info("ready: attach with `cuview-ctl --name {} attach` or `cuview-gui --name {}`", opts_.name, opts_.name);

  std::vector<zmq::pollitem_t> items;
  std::vector<std::string> item_peers;
  std::string failure;
  try {
    while (!stop_) {
      items.assign({{router_.handle(), 0, ZMQ_POLLIN, 0}, {nullptr, signals_.get(), ZMQ_POLLIN, 0}});
      item_peers.clear();
      for (const auto& [id, peer] : peers_) {
        items.push_back({nullptr, peer.process.fd(), ZMQ_POLLIN, 0});
        item_peers.push_back(id);
      }
      const bool busy = !paused_ || pending_steps_ > 0;
      zmq::poll(items.data(), items.size(), busy ? std::chrono::milliseconds(0) : std::chrono::milliseconds(50));

      if (items[1].revents & ZMQ_POLLIN) {
        signalfd_siginfo si{};
        if (::read(signals_.get(), &si, sizeof si) == sizeof si) {
          spdlog::info("received {}: shutting down", si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
          stop_ = true;
        }
      }
      for (std::size_t i = 2; i < items.size(); ++i) {
        if (items[i].revents & ZMQ_POLLIN) drop_peer(item_peers[i - 2], "exited");
      }
      if (items[0].revents & ZMQ_POLLIN) serve_control();
      if (stop_) break;
      if (busy) simulate();
      ring_->heartbeat();
      update_rates();
    }
  } catch (const SimulationFailed& e) {
    failure = e.what();
  } catch (const Error& e) {
    if (e.code() != Errc::cuda) throw;
    failure = "the GPU work of simulation '" + sim_name_ + "' failed: " + e.what();  // e.g. a kernel's fault
  }
  if (!failure.empty()) spdlog::error("{}; stopping daemon '{}' at step {}", failure, opts_.name, step_);

  // Clients learn it from the control block at once (and from the notice, for monitors).
  ring_->set_state(DaemonState::shut_down);
  pub_.send(zmq::buffer(proto::kByeTopic), zmq::send_flags::sndmore);
  pub_.send(zmq::buffer(proto::encode(
                proto::ByeNotice{session_, failure.empty() ? "shutdown" : "simulation failed: " + failure})),
            zmq::send_flags::dontwait);
  try {
    executor_->finish();
  } catch (const Error& e) {
    if (failure.empty()) throw;
    spdlog::warn("finishing the queued GPU work after the failure: {}", e.what());
  }
  spdlog::info("daemon '{}' stopped at step {} after {} frames", opts_.name, step_, frames_published_);
  return failure.empty() ? 0 : 1;
}

void Daemon::apply_params(std::map<std::string, double> values) {
  in_simulation("set_params", [&] { sim_->set_params(values); });
  steps_per_frame_ = static_cast<std::uint32_t>(values.at(kStepsPerFrame));
  params_->assign(std::move(values));
}

void Daemon::simulate() {
  std::uint32_t n = steps_per_frame_;
  if (paused_) n = static_cast<std::uint32_t>(std::min<std::uint64_t>(n, pending_steps_));
  in_simulation("step", [&] { sim_->step(n); });
  executor_->end_batch();
  step_ += n;
  sim_time_ += static_cast<double>(n) * in_simulation("time_per_step", [&] { return sim_->time_per_step(); });
  if (paused_) {
    pending_steps_ -= n;
    if (pending_steps_ == 0) publish_now_ = true;  // show where a `step` request ended
  }
  publish_frame();
}

void Daemon::publish_frame() {
  const std::int64_t now = monotonic_ns();
  const bool due = opts_.max_fps <= 0 || static_cast<double>(now - last_publish_ns_) >= 1e9 / opts_.max_fps;
  if (!due && !publish_now_) return;
  auto slot = ring_->begin_write();
  if (!slot) return;  // every slot is held by some reader: skip this frame, never wait
  publish_now_ = false;
  last_publish_ns_ = now;
  const std::uint64_t seq = ring_->last_seq() + 1;
  in_simulation("write_fields", [&] { writer_->write(slots_->slot(*slot), seq, step_); });
  slots_->written(*slot);
  const FrameInfo info{seq, *slot, step_, sim_time_, realtime_ns()};
  ring_->end_write(*slot, info);
  ++frames_published_;
  const proto::FrameNotice notice{session_, seq, *slot, step_, sim_time_, info.stamp_ns};
  pub_.send(zmq::buffer(proto::kFrameTopic), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  pub_.send(zmq::buffer(proto::encode(notice)), zmq::send_flags::dontwait);
}

void Daemon::update_rates() {
  const std::int64_t now = monotonic_ns();
  const double dt = static_cast<double>(now - rate_t0_) * 1e-9;
  if (dt < 0.5) return;
  steps_per_s_ = static_cast<double>(step_ - rate_step0_) / dt;
  frames_per_s_ = static_cast<double>(frames_published_ - rate_frames0_) / dt;
  rate_t0_ = now;
  rate_step0_ = step_;
  rate_frames0_ = frames_published_;
}

void Daemon::serve_control() {
  // Drain: the ZMQ_FD edge has fired, so read until nothing is left.
  for (int budget = 0; budget < 256; ++budget) {
    std::vector<zmq::message_t> parts;
    zmq::message_t part;
    if (!router_.recv(part, zmq::recv_flags::dontwait)) return;
    parts.push_back(std::move(part));
    while (parts.back().more()) {
      zmq::message_t more;
      (void)router_.recv(more, zmq::recv_flags::none);
      parts.push_back(std::move(more));
    }
    const std::string peer = parts[0].to_string();
    // DEALER sends [payload]; REQ sends ["", payload]. Answer in the same shape.
    const bool req_style = parts.size() == 3 && parts[1].size() == 0;
    std::string reply;
    if (parts.size() == 2 || req_style) {
      reply = handle(peer, parts.back().to_string_view());
    } else {
      reply = proto::encode_error(0, Errc::bad_message,
                                  "a request is one message part holding a MessagePack map; got " +
                                      std::to_string(parts.size() - 1) + " parts");
      spdlog::warn("rejected a request of {} parts", parts.size() - 1);
    }
    router_.send(zmq::buffer(peer), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    if (req_style) router_.send(zmq::message_t(), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    router_.send(zmq::buffer(reply), zmq::send_flags::dontwait);
  }
}

void Daemon::drop_peer(const std::string& peer, const char* why) {
  auto it = peers_.find(peer);
  if (it == peers_.end()) return;
  // Readers are worth an operator's attention; control-only clients (status queries, viewers
  // listing daemons every few seconds) would flood the log at info level.
  const auto level = it->second.lease ? spdlog::level::info : spdlog::level::debug;
  if (it->second.lease) ring_->close_lease(*it->second.lease);
  spdlog::log(level, "client '{}' (pid {}) {}; {} client(s) remain", it->second.client, it->second.process.pid(), why,
              peers_.size() - 1);
  peers_.erase(it);
}

template <class Reply>
void Daemon::fill_identity(Reply& r) const {
  r.session = session_;
  r.backend = executor_->name();
  r.device = executor_->device();
  r.sim = sim_name_;
  r.width = opts_.width;
  r.height = opts_.height;
  r.slots = opts_.slots;
}

proto::DescribeResult Daemon::describe() const {
  proto::DescribeResult d;
  fill_identity(d);
  const auto& l = writer_->layout();
  d.slot_bytes = l.slot_bytes;
  d.trailer_offset = l.trailer_offset;
  // A block of `rows` × (row_cells) cells, each `components` values, as a C-contiguous array.
  auto block = [&](const sim::FieldSpec& f, std::vector<std::uint32_t> shape, std::size_t index) {
    const std::uint64_t value = sim::size_of(f.dtype), cell = value * f.components;
    std::vector<std::uint64_t> strides(shape.size());
    std::uint64_t stride = cell;
    for (std::size_t k = shape.size(); k-- > 0;) strides[k] = stride, stride *= shape[k];
    if (f.components > 1) shape.push_back(f.components), strides.push_back(value);
    return proto::FieldDesc{f.name,
                            sim::to_string(f.dtype),
                            f.components,
                            std::move(shape),
                            std::move(strides),
                            l.fields[index].offset,
                            l.fields[index].bytes,
                            f.help};
  };
  std::size_t index = 0;
  for (const auto& f : fields_) d.fields.push_back(block(f, {opts_.height, opts_.width}, index++));
  for (const auto& set : particles_) {
    proto::ParticleSetDesc pd{set.name, set.count, {}, set.help};
    for (const auto& a : set.attributes)
      pd.attributes.push_back(block(a, {static_cast<std::uint32_t>(set.count)}, index++));
    d.particles.push_back(std::move(pd));
  }
  d.params = params_->describe();
  d.presets = params_->presets();
  return d;
}

proto::Stats Daemon::stats() const {
  proto::Stats s;
  fill_identity(s);
  s.name = opts_.name;
  s.paused = paused_;
  s.step = step_;
  s.sim_time = sim_time_;
  s.frames_published = frames_published_;
  s.frames_skipped = ring_->block().frames_skipped.load();
  s.clients = static_cast<std::uint32_t>(peers_.size());
  for (const auto& [id, p] : peers_) s.readers += p.lease ? 1 : 0;
  s.held_slots = ring_->held_slots();
  s.steps_per_second = steps_per_s_;
  s.frames_per_second = frames_per_s_;
  if (const double window = static_cast<double>(monotonic_ns() - rate_t0_) * 1e-9;
      started_ns_ == rate_t0_ && window > 0.05) {
    // The first half-second window is not closed yet: report what it has measured so far.
    s.steps_per_second = static_cast<double>(step_ - rate_step0_) / window;
    s.frames_per_second = static_cast<double>(frames_published_ - rate_frames0_) / window;
  }
  s.rss_kib = resident_kib();
  s.uptime_s = static_cast<double>(monotonic_ns() - started_ns_) * 1e-9;
  s.params = params_->values();
  return s;
}

std::string Daemon::handle(const std::string& peer, std::string_view bytes) {
  std::uint64_t id = 0;
  std::string op = "request";
  try {
    proto::Request req = proto::decode_request(bytes, id);
    op = req.op;
    const std::string what = "'" + op + "' arguments";
    if (op == "hello") {
      auto a = proto::decode_as<proto::HelloArgs>(req.args, what);
      auto existing = peers_.find(peer);
      if (existing == peers_.end() && peers_.size() >= kMaxPeers)
        throw Error(Errc::too_many_clients, "daemon '" + opts_.name + "' already serves " + std::to_string(kMaxPeers) +
                                                " clients; detach one and try again");
      ProcessHandle process(a.pid);
      if (const auto uid = process_uid(a.pid); uid != ::getuid())
        throw Error(Errc::access, "process " + std::to_string(a.pid) + " runs as uid " + std::to_string(uid) +
                                      "; this daemon serves only its own user (uid " + std::to_string(::getuid()) +
                                      ")");
      if (existing != peers_.end()) drop_peer(peer, "said hello again");
      peers_.emplace(peer, Peer{a.client, std::move(process), std::nullopt});
      spdlog::debug("client '{}' (pid {}) said hello; {} client(s)", a.client, a.pid, peers_.size());
      return proto::encode_result(id, proto::HelloResult{session_, proto::kVersion, CUVIEW_VERSION, opts_.name,
                                                         static_cast<std::int32_t>(::getpid()), executor_->name()});
    }
    if (!req.session)
      throw Error(Errc::missing_field, "'" + op + "' lacks the 'session' field; say 'hello' first to get one");
    if (*req.session != session_)
      throw Error(Errc::stale_session, "session " + *req.session + " is from an earlier run of daemon '" + opts_.name +
                                           "' (this run is session " + session_ +
                                           "); attach again before using any handle");
    auto it = peers_.find(peer);
    if (it == peers_.end()) throw Error(Errc::not_attached, "'" + op + "' needs a 'hello' first on this connection");
    Peer& p = it->second;
    if (op == "describe") {
      (void)proto::decode_as<proto::NoArgs>(req.args, what);
      return proto::encode_result(id, describe());
    }
    if (op == "handles") {
      (void)proto::decode_as<proto::NoArgs>(req.args, what);
      if (!p.lease) {
        p.lease = ring_->open_lease(p.process.pid());
        if (!p.lease)
          throw Error(Errc::too_many_clients, "all " + std::to_string(kMaxLeases) + " reader leases of daemon '" +
                                                  opts_.name + "' are in use; detach a viewer and try again");
        spdlog::info("client '{}' (pid {}) is reading frames (lease {})", p.client, p.process.pid(), *p.lease);
      }
      proto::HandlesResult h;
      h.backend = executor_->name();
      h.control_shm = ring_->shm_name();
      h.lease = *p.lease;
      slots_->fill_handles(h);
      return proto::encode_result(id, h);
    }
    if (op == "pause" || op == "resume") {
      (void)proto::decode_as<proto::NoArgs>(req.args, what);
      paused_ = op == "pause";
      pending_steps_ = 0;
      spdlog::info("{} by '{}' at step {}", paused_ ? "paused" : "resumed", p.client, step_);
      return proto::encode_result(id, proto::NoArgs{});
    }
    if (op == "step") {
      auto a = proto::decode_as<proto::StepArgs>(req.args, what);
      if (a.n < 1 || a.n > kMaxStepRequest)
        throw Error(Errc::out_of_range,
                    "step " + std::to_string(a.n) + " is out of range: use 1 to " + std::to_string(kMaxStepRequest));
      paused_ = true;  // stepping means the simulation holds still in between
      pending_steps_ += a.n;
      return proto::encode_result(id, proto::NoArgs{});
    }
    if (op == "set") {
      auto a = proto::decode_as<proto::SetArgs>(req.args, what);
      if (!a.preset && (!a.params || a.params->empty()))
        throw Error(Errc::missing_field, "'set' needs 'params' (name → value) or a 'preset'");
      apply_params(params_->apply(a.preset, a.params.value_or(std::map<std::string, double>{})));
      spdlog::info("parameters set by '{}'{}", p.client, a.preset ? " (preset " + *a.preset + ")" : "");
      return proto::encode_result(id, proto::NoArgs{});
    }
    if (op == "reset") {
      (void)proto::decode_as<proto::NoArgs>(req.args, what);
      in_simulation("reset", [&] { sim_->reset(opts_.seed); });
      step_ = 0;
      sim_time_ = 0;
      pending_steps_ = 0;
      publish_now_ = true;
      publish_frame();
      spdlog::info("reset by '{}'", p.client);
      return proto::encode_result(id, proto::NoArgs{});
    }
    if (op == "stats") {
      (void)proto::decode_as<proto::NoArgs>(req.args, what);
      return proto::encode_result(id, stats());
    }
    if (op == "detach") {
      (void)proto::decode_as<proto::NoArgs>(req.args, what);
      drop_peer(peer, "detached");
      return proto::encode_result(id, proto::NoArgs{});
    }
    if (op == "shutdown") {
      (void)proto::decode_as<proto::NoArgs>(req.args, what);
      spdlog::info("shutdown requested by '{}' (pid {})", p.client, p.process.pid());
      stop_ = true;
      return proto::encode_result(id, proto::NoArgs{});
    }
    throw Error(Errc::internal, "op '" + op + "' is listed but not handled; please report this bug");
  } catch (const SimulationFailed&) {
    throw;  // fatal: the run loop stops the daemon
  } catch (const Error& e) {
    if (e.code() == Errc::cuda) throw;  // the GPU failed under the simulation: as fatal
    spdlog::warn("refused {}: {} ({})", op, e.what(), to_string(e.code()));
    return proto::encode_error(id, e.code(), e.what());
  } catch (const std::exception& e) {
    spdlog::error("internal error on {}: {}", op, e.what());
    return proto::encode_error(id, Errc::internal, std::string("internal error: ") + e.what() + "; please report it");
  }
}

}  // namespace cuview
