// The publisher: the frame ring, the slots and the control thread that answers clients. The
// program's thread publishes (slot → copy → seal → event → ring) and polls requests; the control
// thread answers every op from one table of handlers and hands steering over through `Shared`.
#include "cuview/publisher.hpp"

#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <zmq.hpp>

#include "cuview/fd_passing.hpp"
#include "cuview/posix.hpp"
#include "cuview/protocol.hpp"
#include "cuview/ring.hpp"
#include "cuview/runtime_dir.hpp"
#include "cuview/zmq_util.hpp"
#include "executor/executor.hpp"
#include "publisher/parameter_set.hpp"
#include "cuview/share/registry.hpp"

namespace cuview {
namespace fs = std::filesystem;

namespace {
constexpr std::size_t kMaxPeers = 64;
constexpr std::uint64_t kMaxStepRequest = 1'000'000;
constexpr std::uint32_t kMaxSide = 32768;
constexpr auto kControlTick = std::chrono::milliseconds(50);  // heartbeat period at most

/// Owner of /proc/PID (the process's effective uid); -1 when it cannot be read.
uid_t process_uid(pid_t pid) {
  struct stat st {};
  if (::stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0) return static_cast<uid_t>(-1);
  return st.st_uid;
}

std::string where(const std::string& name) { return "publisher '" + name + "'"; }
}  // namespace

struct Publisher::State {
  // ---- fixed once start() ran ----
  PublisherOptions opts;
  InstancePaths paths;
  std::unique_ptr<InstanceLock> lock;  // released last
  std::string session = random_hex(16);
  std::unique_ptr<Executor> executor;
  std::vector<FieldDecl> fields;
  std::vector<ParticlesDecl> particles;
  std::vector<ParamSpec> param_specs;
  std::vector<Preset> presets;
  std::vector<InputSpec> inputs;
  std::optional<std::string> preset;
  std::optional<std::map<std::string, double>> start_params;  // use_params(): a restored run's
  std::uint32_t width = 0, height = 0;
  bool started = false, closed = false;
  SlotLayout layout;
  struct Block {
    const FieldDecl* decl;  // in `fields` or a particle set's attributes: fixed once started
    std::string what;       // "field 'u'", "attribute 'x' of particle set 'p'", for messages
  };
  std::vector<Block> blocks;  // slot order: the fields, then every particle attribute
  std::unique_ptr<share::SlotMemory> slots;
  std::unique_ptr<RingWriter> ring;
  proto::DescribeResult description;  // without params (those change)
  zmq::context_t ctx{1};
  zmq::socket_t router{ctx, zmq::socket_type::router};
  zmq::socket_t pub{ctx, zmq::socket_type::pub};
  std::mutex pub_mutex;  // the PUB socket: frame notices from publish(), the goodbye from close()
  UniqueFd wake;         // eventfd: stops the control thread
  UniqueFd fd_listener;  // the descriptor socket (VMM and pool sharing hand out descriptors there)
  std::atomic<bool> stopping{false};
  std::thread control;

  // ---- the program's thread only ----
  bool publish_now = true;
  std::int64_t last_publish_ns = 0;
  std::vector<FieldTarget> targets;
  std::map<std::string, double> in_effect;

  // ---- shared between the threads ----
  struct Shared {
    std::mutex m;
    std::condition_variable changed;
    std::unique_ptr<ParameterSet> params;  // the values clients asked for (stats shows them)
    bool params_changed = false, reset = false, shutdown = false, paused = false;
    std::vector<Stroke> strokes;                                     // drawn since the last poll()
    std::vector<std::pair<std::uint64_t, std::string>> checkpoints;  // requested since the last poll()
    std::uint64_t checkpoint_tickets = 0;
    proto::CheckpointStatus checkpoint;  // the program's report_checkpoint(); disabled until then
    std::uint64_t pending_steps = 0;
    std::uint64_t requests = 0, requests_seen = 0;  // counts state-changing requests
  } shared;
  std::atomic<std::uint64_t> step{0};
  std::atomic<std::uint64_t> step_restarts{0};  // times the published step went backwards (a reset)
  std::atomic<double> sim_time{0};

  // ---- the control thread only ----
  struct Peer {
    std::string client;
    ProcessHandle process;
    std::optional<std::uint32_t> lease;
    std::string fd_token;  // given with `handles`: lets this process fetch the descriptors
  };
  std::map<std::string, Peer> peers;
  struct FdConnection {  // a connection to the descriptor socket whose request has not come yet
    UniqueFd fd;
    std::int64_t deadline_ns;
  };
  std::vector<FdConnection> fd_connections;
  // Rates over windows of at least half a second; a window in which the step went backwards
  // (a reset) is dropped and a new one begins, so a rate is never a difference across a reset.
  struct RateWindow {
    std::int64_t t0 = 0;
    std::uint64_t step0 = 0, frames0 = 0, restarts0 = 0;
  };
  std::int64_t started_ns = 0;
  RateWindow window;
  bool first_window = true;  // no window has closed yet: stats reports the open one
  std::atomic<double> steps_per_s{0}, frames_per_s{0};

  explicit State(PublisherOptions o) : opts(std::move(o)), paths(opts.name) {}

  void claim();
  void check_declarable(const std::string& what) const;
  void check_name(const std::string& name) const;
  void check_buffer(const FieldDecl& f, const std::string& what) const;
  void start();
  bool publish(std::uint64_t step, double sim_time, const FieldWriter* write, cuda::StreamRef stream);
  void close(const std::string& reason) noexcept;

  // control thread
  void run_control();
  void serve_control();
  void accept_fd_connections();
  void answer_fd_request(int connection);
  std::string handle(const std::string& peer, std::string_view bytes);
  void drop_peer(const std::string& peer, const char* why);
  /// Refuses a request whose session is not this run's, on either socket.
  [[nodiscard]] Error stale_session_error(const std::string& theirs) const {
    return Error(Errc::stale_session, "session " + theirs + " is not this run's: it is from an earlier run of '" +
                                          opts.name + "', or was never issued (this run is session " + session +
                                          "); attach again (say 'hello') before using any handle");
  }
  void update_rates();
  [[nodiscard]] RateWindow open_window(std::int64_t now) const {
    return {now, step.load(), ring->published(), step_restarts.load()};
  }
  template <class Reply>
  void fill_identity(Reply& r) const;
  void note_request(Shared& s) {
    ++s.requests;
    s.changed.notify_all();
  }

  using Handler = std::string (State::*)(Peer& peer, const std::string& id, const proto::Request& req,
                                         const std::string& what);
  std::string op_describe(Peer&, const std::string&, const proto::Request&, const std::string&);
  std::string op_handles(Peer&, const std::string&, const proto::Request&, const std::string&);
  std::string op_pause(Peer&, const std::string&, const proto::Request&, const std::string&);
  std::string op_step(Peer&, const std::string&, const proto::Request&, const std::string&);
  std::string op_set(Peer&, const std::string&, const proto::Request&, const std::string&);
  std::string op_reset(Peer&, const std::string&, const proto::Request&, const std::string&);
  std::string op_draw(Peer&, const std::string&, const proto::Request&, const std::string&);
  std::string op_checkpoint(Peer&, const std::string&, const proto::Request&, const std::string&);
  std::string op_stats(Peer&, const std::string&, const proto::Request&, const std::string&);
  std::string op_detach(Peer&, const std::string&, const proto::Request&, const std::string&);
  std::string op_shutdown(Peer&, const std::string&, const proto::Request&, const std::string&);
};

// ---------------------------------------------------------------- declaring

void Publisher::State::claim() {
  ensure_private_dir(paths.dir.parent_path());
  ensure_private_dir(paths.dir);
  lock = std::make_unique<InstanceLock>(paths);
  // We hold the lock, so whatever is here belongs to a publisher that died without cleaning up.
  std::error_code ec;
  fs::remove(paths.control, ec);
  fs::remove(paths.frames, ec);
  fs::remove(paths.fds, ec);
  std::ifstream in(paths.segments);
  const std::string ours = "/cuview-" + std::to_string(::getuid()) + "-";
  int removed = 0;
  for (std::string name; std::getline(in, name);) {
    if (name.rfind(ours, 0) == 0 && ::shm_unlink(name.c_str()) == 0) ++removed;
  }
  if (removed > 0) spdlog::warn("removed {} shared-memory segment(s) left by a '{}' that crashed", removed, opts.name);
}

void Publisher::State::check_declarable(const std::string& what) const {
  if (started)
    throw Error(Errc::bad_value, where(opts.name) + ": cannot declare " + what +
                                     " after publishing began; declare every field and parameter first");
}

void Publisher::State::check_name(const std::string& name) const {
  if (name.empty() || name.size() > 64)
    throw Error(Errc::bad_value, where(opts.name) + ": a field needs a name of 1 to 64 characters, got '" + name + "'");
  for (const auto& f : fields)
    if (f.name == name) throw Error(Errc::bad_value, where(opts.name) + ": field '" + name + "' is declared twice");
  for (const auto& p : particles)
    if (p.name == name)
      throw Error(Errc::bad_value, where(opts.name) + ": '" + name + "' is already the name of a particle set");
}

void Publisher::State::check_buffer(const FieldDecl& f, const std::string& what) const {
  if (f.components < 1 || f.components > 4)
    throw Error(Errc::out_of_range, what + " has " + std::to_string(f.components) + " components; use 1 to 4");
  if (f.data == nullptr) return;  // written by a FieldWriter
  const bool on_host = executor->kind() == Executor::Kind::host;
  if (f.memory == Memory::device && on_host)
    throw Error(Errc::bad_value, what + " is declared as device memory, but " + where(opts.name) +
                                     " runs on the host backend, which reads host memory only; pass a host buffer "
                                     "(Memory::host) or use the cuda backend");
  const BufferLocation at = executor->locate(f.data);
  if (f.memory == Memory::device && !at.device_accessible)
    throw Error(Errc::bad_value, what +
                                     " is declared as device memory but its pointer is host memory; declare it "
                                     "with Memory::host or pass the device buffer");
  if (f.memory == Memory::device && at.device >= 0 && at.device != executor->device_id())
    throw Error(Errc::bad_value, what + " is on GPU " + std::to_string(at.device) + " but " + where(opts.name) +
                                     " runs on GPU " + std::to_string(executor->device_id()) +
                                     "; set PublisherOptions::device to the GPU the buffers are on");
  if (f.memory == Memory::host && !at.host_accessible)
    throw Error(Errc::bad_value, what + " is declared as host memory but its pointer is device memory (GPU " +
                                     std::to_string(at.device) + "); declare it with Memory::device");
}

Publisher::Publisher(PublisherOptions options) : state_(std::make_unique<State>(std::move(options))) {
  auto& s = *state_;
  if (s.opts.slots < 1 || s.opts.slots > kMaxSlots)
    throw Error(Errc::out_of_range, where(s.opts.name) + ": " + std::to_string(s.opts.slots) +
                                        " slots is out of range: use 1 to " + std::to_string(kMaxSlots));
  if (!(s.opts.max_fps >= 0))
    throw Error(Errc::out_of_range, where(s.opts.name) + ": max_fps must be 0 (every publish) or more");
  s.claim();
  s.executor = make_executor(s.opts.backend, s.opts.device);
  // CUVIEW_SHARING picks the CUDA mechanism of a program that leaves it to "auto".
  const char* env = std::getenv("CUVIEW_SHARING");
  const bool from_env =
      s.opts.sharing == "auto" && env != nullptr && *env != '\0' && s.executor->kind() == Executor::Kind::cuda;
  if (from_env) s.opts.sharing = env;
  share::check_sharing(s.opts.sharing, {s.executor->device_id(), s.executor->stream()},
                       where(s.opts.name) + (from_env ? " (from CUVIEW_SHARING)" : ""));
}

Publisher::~Publisher() {
  if (state_) state_->close("shutdown");
}
Publisher::Publisher(Publisher&&) noexcept = default;
Publisher& Publisher::operator=(Publisher&& other) noexcept {
  if (this != &other) {
    if (state_) state_->close("shutdown");
    state_ = std::move(other.state_);
  }
  return *this;
}

void Publisher::add_field(FieldDecl f) {
  auto& s = *state_;
  const std::string what = where(s.opts.name) + ": field '" + f.name + "'";
  s.check_declarable(what);
  s.check_name(f.name);
  if (f.width < 1 || f.height < 1 || f.width > kMaxSide || f.height > kMaxSide)
    throw Error(Errc::out_of_range, what + " is " + std::to_string(f.width) + "x" + std::to_string(f.height) +
                                        " cells; each side must be 1 to " + std::to_string(kMaxSide));
  if (!s.fields.empty() && (f.width != s.width || f.height != s.height))
    throw Error(Errc::bad_value, what + " is " + std::to_string(f.width) + "x" + std::to_string(f.height) +
                                     " but field '" + s.fields.front().name + "' is " + std::to_string(s.width) + "x" +
                                     std::to_string(s.height) + "; every field of a publisher shares one grid");
  const std::size_t expected = std::size_t{f.width} * f.height * f.components * size_of(f.dtype);
  if (f.bytes != expected)
    throw Error(Errc::bad_value, what + " is declared with a buffer of " + std::to_string(f.bytes) + " bytes, but " +
                                     std::to_string(f.width) + "x" + std::to_string(f.height) + " cells of " +
                                     std::to_string(f.components) + " " + to_string(f.dtype) + " need " +
                                     std::to_string(expected) + "; pass the buffer's real size and shape");
  s.check_buffer(f, what);
  s.width = f.width;
  s.height = f.height;
  s.fields.push_back(std::move(f));
}

void Publisher::add_particles(ParticlesDecl p) {
  auto& s = *state_;
  const std::string what = where(s.opts.name) + ": particle set '" + p.name + "'";
  s.check_declarable(what);
  s.check_name(p.name);
  if (p.count < 1 || p.count > (1ull << 31) || p.attributes.empty())
    throw Error(Errc::out_of_range, what + " has " + std::to_string(p.count) + " particles and " +
                                        std::to_string(p.attributes.size()) +
                                        " attributes; a set needs 1 to 2^31 particles and at least one attribute");
  if (!p.bounds.empty() && (p.bounds.size() != 4 || !(p.bounds[1] > p.bounds[0]) || !(p.bounds[3] > p.bounds[2])))
    throw Error(Errc::bad_value, what + ": bounds must be {x0, x1, y0, y1} with x1 > x0 and y1 > y0, or empty");
  std::set<std::string> names;
  for (const auto& a : p.attributes) {
    const std::string attr = what + ", attribute '" + a.name + "'";
    if (a.name.empty() || !names.insert(a.name).second)
      throw Error(Errc::bad_value, attr + " is declared twice (or with no name)");
    const std::size_t expected = p.count * a.components * size_of(a.dtype);
    if (a.bytes != expected)
      throw Error(Errc::bad_value, attr + " is declared with a buffer of " + std::to_string(a.bytes) + " bytes, but " +
                                       std::to_string(p.count) + " particles of " + std::to_string(a.components) + " " +
                                       to_string(a.dtype) + " need " + std::to_string(expected));
    s.check_buffer(a, attr);
  }
  s.particles.push_back(std::move(p));
}

void Publisher::add_param(ParamSpec p) {
  auto& s = *state_;
  const std::string what = where(s.opts.name) + ": parameter '" + p.name + "'";
  s.check_declarable(what);
  for (const auto& q : s.param_specs)
    if (q.name == p.name) throw Error(Errc::bad_value, what + " is declared twice");
  if (p.name.empty()) throw Error(Errc::bad_value, where(s.opts.name) + ": a parameter needs a name");
  if (!(p.min <= p.value && p.value <= p.max))
    throw Error(Errc::bad_value, what + ": its default " + std::to_string(p.value) + " is outside its range [" +
                                     std::to_string(p.min) + ", " + std::to_string(p.max) + "]");
  s.param_specs.push_back(std::move(p));
}

void Publisher::add_preset(Preset p) {
  state_->check_declarable(where(state_->opts.name) + ": preset '" + p.name + "'");
  state_->presets.push_back(std::move(p));
}

void Publisher::add_input(InputSpec input) {
  auto& s = *state_;
  s.check_declarable(where(s.opts.name) + ": input '" + input.name + "'");
  if (input.kind != "mask" && input.kind != "points")
    throw Error(Errc::bad_value, where(s.opts.name) + ": input '" + input.name + "' is of kind '" + input.kind +
                                     "'; the kinds are: mask, points");
  for (const auto& i : s.inputs)
    if (i.name == input.name)
      throw Error(Errc::bad_value, where(s.opts.name) + ": input '" + input.name + "' is declared twice");
  s.inputs.push_back(std::move(input));
}

void Publisher::use_preset(const std::string& name) {
  state_->check_declarable(where(state_->opts.name) + ": the starting preset");
  state_->preset = name;
}

void Publisher::use_params(const std::map<std::string, double>& values) {
  state_->check_declarable(where(state_->opts.name) + ": the starting parameters");
  ParameterSet check(state_->param_specs, state_->presets);
  (void)check.apply(std::nullopt, values);  // refuses an unknown name or a value out of range now
  state_->start_params = values;
}

void Publisher::report_checkpoint(const proto::CheckpointStatus& status) {
  std::lock_guard lock(state_->shared.m);
  state_->shared.checkpoint = status;
}

// ---------------------------------------------------------------- starting

void Publisher::State::start() {
  if (started) return;
  if (closed) throw Error(Errc::bad_value, where(opts.name) + " is closed; make a new Publisher");
  if (fields.empty())
    throw Error(Errc::bad_value, where(opts.name) +
                                     ": nothing to publish: declare at least one field with "
                                     "add_field() before publish()");
  auto params = std::make_unique<ParameterSet>(param_specs, presets);
  if (preset) params->assign(params->apply(preset, {}));
  if (start_params) params->assign(params->apply(std::nullopt, *start_params));

  // The slot: fields, then each particle attribute, each its own aligned block.
  for (const auto& f : fields) blocks.push_back({&f, "field '" + f.name + "'"});
  for (const auto& p : particles)
    for (const auto& a : p.attributes)
      blocks.push_back({&a, "attribute '" + a.name + "' of particle set '" + p.name + "'"});
  std::vector<std::size_t> bytes;
  for (const auto& b : blocks) bytes.push_back(b.decl->bytes);
  layout = SlotLayout::make(bytes);
  targets.resize(bytes.size());
  slots = share::make_slot_memory(layout, opts.slots, opts.sharing, {executor->device_id(), executor->stream()},
                                  where(opts.name));
  ring = std::make_unique<RingWriter>(opts.slots, session);
  {
    std::ofstream out(paths.segments, std::ios::trunc);
    out << ring->shm_name() << '\n';
    for (const auto& seg : slots->segments()) out << seg << '\n';
    if (!out) throw_errno("writing " + paths.segments.string(), errno);
  }

  // What `describe` says, fixed from here on.
  fill_identity(description);
  description.slot_bytes = layout.slot_bytes;
  description.trailer_offset = layout.trailer_offset;
  auto block = [&](const FieldDecl& f, std::vector<std::uint32_t> shape, std::size_t index) {
    const std::uint64_t value = size_of(f.dtype), cell = value * f.components;
    std::vector<std::uint64_t> strides(shape.size());
    std::uint64_t stride = cell;
    for (std::size_t k = shape.size(); k-- > 0;) strides[k] = stride, stride *= shape[k];
    if (f.components > 1) shape.push_back(f.components), strides.push_back(value);
    return proto::FieldDesc{f.name,
                            to_string(f.dtype),
                            f.components,
                            std::move(shape),
                            std::move(strides),
                            layout.fields[index].offset,
                            layout.fields[index].bytes,
                            f.help};
  };
  std::size_t index = 0;
  for (const auto& f : fields) description.fields.push_back(block(f, {height, width}, index++));
  for (const auto& p : particles) {
    proto::ParticleSetDesc pd{p.name, p.count, {}, p.help, p.bounds};
    for (const auto& a : p.attributes)
      pd.attributes.push_back(block(a, {static_cast<std::uint32_t>(p.count)}, index++));
    description.particles.push_back(std::move(pd));
  }
  description.presets = params->presets();
  for (const auto& i : inputs) description.inputs.push_back({i.name, i.kind, i.help});
  in_effect = params->values();
  shared.params = std::move(params);
  shared.paused = opts.start_paused;

  wake = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake) throw_errno("eventfd for " + where(opts.name) + "'s control thread", errno);
  if (!configure_server_socket(router) || !configure_server_socket(pub))
    spdlog::warn(
        "this libzmq cannot filter ipc:// peers by uid; only the 0700 runtime directory keeps other users out");
  fd_listener = listen_fd_socket(paths.fds);
  router.bind(paths.control_endpoint());
  pub.bind(paths.frames_endpoint());
  started_ns = monotonic_ns();
  window = open_window(started_ns);
  ring->set_state(DaemonState::running);
  started = true;
  control = std::thread([this] { run_control(); });
  spdlog::info("{} session {}: {} {}x{} on {} ({}), {} slots of {} bytes shared by {}, control {}", where(opts.name),
               session, opts.title, width, height, executor->name(), executor->device(), opts.slots, layout.slot_bytes,
               slots->mechanism(), paths.control_endpoint());
}

void Publisher::start() { state_->start(); }

// ---------------------------------------------------------------- publishing

bool Publisher::State::publish(std::uint64_t at_step, double at_time, const FieldWriter* write,
                               cuda::StreamRef stream) {
  start();
  if (closed) throw Error(Errc::bad_value, where(opts.name) + " is closed; make a new Publisher");
  // The restart is counted before the smaller step is stored (both seq_cst): a rate window that
  // sees the smaller step also sees the restart.
  if (at_step < step.load()) step_restarts.fetch_add(1);
  step.store(at_step);
  sim_time.store(at_time, std::memory_order_relaxed);
  const std::int64_t now = monotonic_ns();
  const bool due = opts.max_fps <= 0 || static_cast<double>(now - last_publish_ns) >= 1e9 / opts.max_fps;
  if (!due && !publish_now) return false;
  if (write == nullptr) {
    for (const auto& b : blocks)
      if (b.decl->data == nullptr)
        throw Error(Errc::bad_value, where(opts.name) + ": " + b.what +
                                         " was declared without a buffer; declare it with its data or publish "
                                         "with a FieldWriter");
  }
  auto slot = ring->begin_write();
  if (!slot) {
    // Every slot is held by some reader: skip this frame, never wait. A frame that was due is
    // skipped once; the next is due a frame period later (a forced one is tried again).
    if (due) {
      ring->count_skipped();
      last_publish_ns = now;
    }
    return false;
  }
  publish_now = false;
  last_publish_ns = now;
  const std::uint64_t seq = ring->last_seq() + 1;
  try {
    slots->before_write(*slot, stream);
    auto* base = static_cast<std::byte*>(slots->slot(*slot));
    for (std::size_t i = 0; i < blocks.size(); ++i)
      targets[i] = {base + layout.fields[i].offset, blocks[i].decl->bytes};
    if (write != nullptr) {
      (*write)(targets);
    } else {
      for (std::size_t i = 0; i < blocks.size(); ++i)
        executor->copy(targets[i].data, blocks[i].decl->data, targets[i].bytes, stream);
    }
    executor->seal(base, layout, seq, at_step, stream);
    slots->written(*slot, stream);
  } catch (...) {
    ring->abort_write(*slot);
    throw;
  }
  const FrameInfo info{seq, *slot, at_step, at_time, realtime_ns()};
  ring->end_write(*slot, info);  // counted: stats' frames_published is the ring's newest seq
  const proto::FrameNotice notice{session, seq, *slot, at_step, at_time, info.stamp_ns};
  std::lock_guard lock(pub_mutex);
  pub.send(zmq::buffer(proto::kFrameTopic), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  pub.send(zmq::buffer(proto::encode(notice)), zmq::send_flags::dontwait);
  return true;
}

bool Publisher::publish(std::uint64_t step, double sim_time, cuda::StreamRef stream) {
  return state_->publish(step, sim_time, nullptr, stream);
}
bool Publisher::publish(std::uint64_t step, double sim_time, const FieldWriter& write, cuda::StreamRef stream) {
  return state_->publish(step, sim_time, &write, stream);
}
void Publisher::publish_next_now() { state_->publish_now = true; }

// ---------------------------------------------------------------- steering, on the program's thread

Requests Publisher::poll() {
  auto& s = *state_;
  Requests r;
  if (!s.started) return r;
  std::lock_guard lock(s.shared.m);
  s.shared.requests_seen = s.shared.requests;
  if (s.shared.params_changed) {
    r.params = s.shared.params->values();
    s.in_effect = r.params;
    s.shared.params_changed = false;
  }
  r.reset = std::exchange(s.shared.reset, false);
  r.strokes = std::exchange(s.shared.strokes, {});
  r.checkpoints = std::exchange(s.shared.checkpoints, {});
  if (r.reset || (r.changes_frame() && s.shared.paused)) s.publish_now = true;
  r.shutdown = s.shared.shutdown;
  return r;
}

std::map<std::string, double> Publisher::params() const {
  auto& s = *state_;
  if (!s.started) return ParameterSet(s.param_specs, s.presets).values();
  return s.in_effect;
}

std::uint64_t Publisher::steps_allowed(std::uint64_t wanted) {
  auto& s = *state_;
  if (!s.started) return wanted;
  std::lock_guard lock(s.shared.m);
  if (!s.shared.paused) return wanted;
  const std::uint64_t n = std::min(wanted, s.shared.pending_steps);
  s.shared.pending_steps -= n;
  if (n > 0 && s.shared.pending_steps == 0) s.publish_now = true;  // show where a `step` request ended
  return n;
}

bool Publisher::paused() const {
  auto& s = *state_;
  if (!s.started) return false;
  std::lock_guard lock(s.shared.m);
  return s.shared.paused;
}

void Publisher::wait_for_requests(std::chrono::milliseconds timeout) {
  auto& s = *state_;
  if (!s.started) {
    std::this_thread::sleep_for(timeout);
    return;
  }
  std::unique_lock lock(s.shared.m);
  s.shared.changed.wait_for(lock, timeout, [&] { return s.shared.requests != s.shared.requests_seen; });
}

std::string Publisher::backend() const { return state_->executor->name(); }
std::string Publisher::device() const { return state_->executor->device(); }
const std::string& Publisher::name() const { return state_->opts.name; }
Executor& Publisher::executor() const { return *state_->executor; }

// ---------------------------------------------------------------- closing

void Publisher::close(const std::string& reason) noexcept { state_->close(reason); }

void Publisher::State::close(const std::string& reason) noexcept {
  if (closed) return;
  closed = true;
  if (!started) return;
  stopping.store(true);
  const std::uint64_t one = 1;
  (void)!::write(wake.get(), &one, sizeof one);
  if (control.joinable()) control.join();
  // Clients learn it from the control block at once (and from the notice, for monitors).
  ring->set_state(DaemonState::shut_down);
  try {
    std::lock_guard lock(pub_mutex);
    pub.send(zmq::buffer(proto::kByeTopic), zmq::send_flags::sndmore);
    pub.send(zmq::buffer(proto::encode(proto::ByeNotice{session, reason})), zmq::send_flags::dontwait);
  } catch (const std::exception& e) {
    spdlog::warn("{}: could not tell clients it is going: {}", where(opts.name), e.what());
  }
  try {
    executor->finish();
  } catch (const std::exception& e) {
    spdlog::warn("{}: finishing the GPU work queued at close: {}", where(opts.name), e.what());
  }
  router.close();
  pub.close();
  std::error_code ec;
  fs::remove(paths.control, ec);
  fs::remove(paths.frames, ec);
  fs::remove(paths.fds, ec);
  fs::remove(paths.segments, ec);
  spdlog::info("{} stopped at step {} after {} frames ({})", where(opts.name), step.load(), ring->published(),
               reason);
}

// ---------------------------------------------------------------- the control thread

void Publisher::State::run_control() {
  std::vector<zmq::pollitem_t> items;
  std::vector<std::string> item_peers;
  while (!stopping.load()) {
    try {
      items.assign({{router.handle(), 0, ZMQ_POLLIN, 0},
                    {nullptr, wake.get(), ZMQ_POLLIN, 0},
                    {nullptr, fd_listener.get(), ZMQ_POLLIN, 0}});
      item_peers.clear();
      for (const auto& [id, peer] : peers) {
        items.push_back({nullptr, peer.process.fd(), ZMQ_POLLIN, 0});
        item_peers.push_back(id);
      }
      const std::size_t first_conn = items.size();
      for (const auto& c : fd_connections) items.push_back({nullptr, c.fd.get(), ZMQ_POLLIN, 0});
      zmq::poll(items.data(), items.size(), kControlTick);
      if (stopping.load()) break;
      constexpr std::size_t kFirstPeer = 3;
      for (std::size_t i = kFirstPeer; i < first_conn; ++i)
        if (items[i].revents & ZMQ_POLLIN) drop_peer(item_peers[i - kFirstPeer], "exited");
      if (items[0].revents & ZMQ_POLLIN) serve_control();
      // Answer (or drop, past their deadline) the descriptor-socket connections, then take new ones.
      const std::int64_t now = monotonic_ns();
      std::vector<FdConnection> waiting;
      for (std::size_t i = 0; i < fd_connections.size(); ++i) {
        auto& c = fd_connections[i];
        if (items[first_conn + i].revents & (ZMQ_POLLIN | ZMQ_POLLERR))
          answer_fd_request(c.fd.get());
        else if (now < c.deadline_ns)
          waiting.push_back(std::move(c));
      }
      fd_connections = std::move(waiting);
      if (items[2].revents & ZMQ_POLLIN) accept_fd_connections();
      ring->heartbeat();
      update_rates();
    } catch (const std::exception& e) {
      // Never let the thread die: the program goes on, and so must the answers to its viewers.
      spdlog::error("{}: control thread: {}; going on", where(opts.name), e.what());
      std::this_thread::sleep_for(kControlTick);
    }
  }
}

void Publisher::State::update_rates() {
  const std::int64_t now = monotonic_ns();
  const RateWindow end = open_window(now);
  if (end.restarts0 != window.restarts0) {  // reset within the window: begin a new one
    window = end;
    return;
  }
  const double dt = static_cast<double>(now - window.t0) * 1e-9;
  if (dt < 0.5) return;
  steps_per_s.store(static_cast<double>(end.step0 - window.step0) / dt);
  frames_per_s.store(static_cast<double>(end.frames0 - window.frames0) / dt);
  window = end;
  first_window = false;
}

void Publisher::State::serve_control() {
  // Drain: the ZMQ_FD edge has fired, so read until nothing is left.
  for (int budget = 0; budget < 256; ++budget) {
    std::vector<zmq::message_t> parts;
    zmq::message_t part;
    if (!router.recv(part, zmq::recv_flags::dontwait)) return;
    parts.push_back(std::move(part));
    while (parts.back().more()) {
      zmq::message_t more;
      (void)router.recv(more, zmq::recv_flags::none);
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
    router.send(zmq::buffer(peer), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    if (req_style) router.send(zmq::message_t(), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    router.send(zmq::buffer(reply), zmq::send_flags::dontwait);
  }
}

void Publisher::State::accept_fd_connections() {
  // Requests are read when they arrive (run_control polls the connections), so a client that
  // connects and says nothing costs the control thread nothing; it is dropped after a second.
  constexpr std::size_t kMaxPending = 32;
  for (int budget = 0; budget < 16; ++budget) {
    UniqueFd conn = accept_fd_socket(fd_listener.get());
    if (!conn) return;
    if (fd_connections.size() >= kMaxPending) fd_connections.erase(fd_connections.begin());  // the oldest
    fd_connections.push_back({std::move(conn), monotonic_ns() + 1'000'000'000});
  }
}

void Publisher::State::answer_fd_request(int conn) {
  proto::FdReply reply;
  std::vector<int> fds;
  try {
    const PeerCredentials cred = peer_credentials(conn);
    if (cred.uid != ::getuid())
      throw Error(Errc::access, "process " + std::to_string(cred.pid) + " runs as uid " + std::to_string(cred.uid) +
                                    "; '" + opts.name + "' hands its memory only to its own user (uid " +
                                    std::to_string(::getuid()) + ")");
    std::vector<UniqueFd> ignored;  // a client has no business sending descriptors: closed here
    const std::string bytes =
        receive_with_fds(conn, ignored, std::chrono::milliseconds(0), "the request on the descriptor socket");
    const auto req = proto::decode_bytes<proto::FdRequest>(bytes, "descriptor request");
    if (req.v != proto::kVersion)
      throw Error(Errc::version_mismatch, "the descriptor request speaks protocol " + std::to_string(req.v) +
                                              ", this daemon speaks protocol " + std::to_string(proto::kVersion));
    if (req.session != session)
      throw stale_session_error(req.session);
    const auto owner = std::find_if(peers.begin(), peers.end(), [&](const auto& kv) {
      return !kv.second.fd_token.empty() && kv.second.fd_token == req.token;
    });
    if (owner == peers.end())
      throw Error(Errc::not_attached, "no client of '" + opts.name +
                                          "' holds this token: say 'hello' and ask for 'handles' on the control "
                                          "socket first, then send the fd_token of that reply");
    if (owner->second.process.pid() != cred.pid)
      throw Error(Errc::access, "the token was given to process " + std::to_string(owner->second.process.pid()) +
                                    ", but process " + std::to_string(cred.pid) +
                                    " asked with it; each process fetches its own descriptors");
    fds = slots->fds();
    reply.fds = static_cast<std::uint32_t>(fds.size());
    spdlog::debug("handed {} descriptor(s) to client '{}' (pid {})", fds.size(), owner->second.client, cred.pid);
  } catch (const Error& e) {
    if (e.code() == Errc::daemon_gone) return;  // it hung up without asking: nobody to answer
    reply.code = std::string(to_string(e.code()));
    reply.message = e.what();
    fds.clear();
    spdlog::warn("refused descriptors: {} ({})", reply.message, reply.code);
  }
  try {
    send_with_fds(conn, proto::encode(reply), fds, "the reply on the descriptor socket");
  } catch (const std::exception& e) {
    spdlog::warn("descriptor socket: {}", e.what());
  }
}

void Publisher::State::drop_peer(const std::string& peer, const char* why) {
  auto it = peers.find(peer);
  if (it == peers.end()) return;
  // Readers are worth an operator's attention; control-only clients (status queries, viewers
  // listing daemons every few seconds) would flood the log at info level.
  const auto level = it->second.lease ? spdlog::level::info : spdlog::level::debug;
  if (it->second.lease) ring->close_lease(*it->second.lease);
  spdlog::log(level, "client '{}' (pid {}) {}; {} client(s) remain", it->second.client, it->second.process.pid(), why,
              peers.size() - 1);
  peers.erase(it);
}

template <class Reply>
void Publisher::State::fill_identity(Reply& r) const {
  r.session = session;
  r.backend = executor->name();
  r.device = executor->device();
  r.sim = opts.title;
  r.width = width;
  r.height = height;
  r.slots = opts.slots;
}

std::string Publisher::State::handle(const std::string& peer, std::string_view bytes) {
  // One handler per op; `hello` is the only one allowed before attaching.
  static const std::map<std::string_view, Handler> kHandlers{
      {"describe", &State::op_describe}, {"handles", &State::op_handles}, {"pause", &State::op_pause},
      {"resume", &State::op_pause},      {"step", &State::op_step},       {"set", &State::op_set},
      {"reset", &State::op_reset},       {"stats", &State::op_stats},     {"detach", &State::op_detach},
      {"shutdown", &State::op_shutdown}, {"draw", &State::op_draw},       {"checkpoint", &State::op_checkpoint}};
  std::uint64_t id = 0;
  std::string op = "request";
  try {
    proto::Request req = proto::decode_request(bytes, id);
    op = req.op;
    const std::string what = "'" + op + "' arguments";
    if (op == "hello") {
      auto a = proto::decode_as<proto::HelloArgs>(req.args, what);
      auto existing = peers.find(peer);
      if (existing == peers.end() && peers.size() >= kMaxPeers)
        throw Error(Errc::too_many_clients, "'" + opts.name + "' already serves " + std::to_string(kMaxPeers) +
                                                " clients; detach one and try again");
      ProcessHandle process(a.pid);
      if (const auto uid = process_uid(a.pid); uid != ::getuid())
        throw Error(Errc::access, "process " + std::to_string(a.pid) + " runs as uid " + std::to_string(uid) + "; '" +
                                      opts.name + "' serves only its own user (uid " + std::to_string(::getuid()) +
                                      ")");
      if (existing != peers.end()) drop_peer(peer, "said hello again");
      peers.emplace(peer, Peer{a.client, std::move(process), std::nullopt, {}});
      spdlog::debug("client '{}' (pid {}) said hello; {} client(s)", a.client, a.pid, peers.size());
      return proto::encode_result(id, proto::HelloResult{session, proto::kVersion, CUVIEW_VERSION, opts.name,
                                                         static_cast<std::int32_t>(::getpid()), executor->name()});
    }
    if (!req.session)
      throw Error(Errc::missing_field, "'" + op + "' lacks the 'session' field; say 'hello' first to get one");
    if (*req.session != session)
      throw stale_session_error(*req.session);
    proto::check_op(op);  // after the session: a stale client learns nothing about this run
    auto it = peers.find(peer);
    if (it == peers.end()) throw Error(Errc::not_attached, "'" + op + "' needs a 'hello' first on this connection");
    const auto handler = kHandlers.find(op);
    if (handler == kHandlers.end())
      throw Error(Errc::internal, "op '" + op + "' is listed but not handled; please report this bug");
    return (this->*(handler->second))(it->second, peer, req, what);
  } catch (const Error& e) {
    spdlog::warn("refused {}: {} ({})", op, e.what(), to_string(e.code()));
    return proto::encode_error(id, e.code(), e.what());
  } catch (const std::exception& e) {
    spdlog::error("internal error on {}: {}", op, e.what());
    return proto::encode_error(id, Errc::internal, std::string("internal error: ") + e.what() + "; please report it");
  }
}

std::string Publisher::State::op_describe(Peer&, const std::string&, const proto::Request& req,
                                          const std::string& what) {
  (void)proto::decode_as<proto::NoArgs>(req.args, what);
  proto::DescribeResult d = description;
  {
    std::lock_guard lock(shared.m);
    d.params = shared.params->describe();
  }
  return proto::encode_result(req.id, d);
}

std::string Publisher::State::op_handles(Peer& p, const std::string&, const proto::Request& req,
                                         const std::string& what) {
  (void)proto::decode_as<proto::NoArgs>(req.args, what);
  if (!p.lease) {
    p.lease = ring->open_lease(p.process.pid());
    if (!p.lease)
      throw Error(Errc::too_many_clients, "all " + std::to_string(kMaxLeases) + " reader leases of '" + opts.name +
                                              "' are in use; detach a viewer and try again");
    spdlog::info("client '{}' (pid {}) is reading frames (lease {})", p.client, p.process.pid(), *p.lease);
  }
  proto::HandlesResult h;
  h.backend = executor->name();
  h.control_shm = ring->shm_name();
  h.lease = *p.lease;
  h.sharing = slots->mechanism();
  slots->fill_handles(h);
  if (p.fd_token.empty()) p.fd_token = random_hex(16);
  h.fd_socket = paths.fds.string();
  h.fd_token = p.fd_token;
  for (int fd : slots->fds()) h.fd_numbers.push_back(fd);
  h.fds = static_cast<std::uint32_t>(h.fd_numbers.size());
  return proto::encode_result(req.id, h);
}

std::string Publisher::State::op_pause(Peer& p, const std::string&, const proto::Request& req,
                                       const std::string& what) {
  (void)proto::decode_as<proto::NoArgs>(req.args, what);
  {
    std::lock_guard lock(shared.m);
    shared.paused = req.op == "pause";
    shared.pending_steps = 0;
    note_request(shared);
  }
  spdlog::info("{} by '{}' at step {}", req.op == "pause" ? "paused" : "resumed", p.client, step.load());
  return proto::encode_result(req.id, proto::NoArgs{});
}

std::string Publisher::State::op_step(Peer&, const std::string&, const proto::Request& req, const std::string& what) {
  auto a = proto::decode_as<proto::StepArgs>(req.args, what);
  if (a.n < 1 || a.n > kMaxStepRequest)
    throw Error(Errc::out_of_range,
                "step " + std::to_string(a.n) + " is out of range: use 1 to " + std::to_string(kMaxStepRequest));
  std::lock_guard lock(shared.m);
  shared.paused = true;  // stepping means the simulation holds still in between
  shared.pending_steps += a.n;
  note_request(shared);
  return proto::encode_result(req.id, proto::NoArgs{});
}

std::string Publisher::State::op_set(Peer& p, const std::string&, const proto::Request& req, const std::string& what) {
  auto a = proto::decode_as<proto::SetArgs>(req.args, what);
  if (!a.preset && (!a.params || a.params->empty()))
    throw Error(Errc::missing_field, "'set' needs 'params' (name → value) or a 'preset'");
  {
    std::lock_guard lock(shared.m);
    shared.params->assign(shared.params->apply(a.preset, a.params.value_or(std::map<std::string, double>{})));
    shared.params_changed = true;
    note_request(shared);
  }
  spdlog::info("parameters set by '{}'{}", p.client, a.preset ? " (preset " + *a.preset + ")" : "");
  return proto::encode_result(req.id, proto::NoArgs{});
}

std::string Publisher::State::op_reset(Peer& p, const std::string&, const proto::Request& req,
                                       const std::string& what) {
  (void)proto::decode_as<proto::NoArgs>(req.args, what);
  {
    std::lock_guard lock(shared.m);
    shared.reset = true;
    shared.pending_steps = 0;
    note_request(shared);
  }
  spdlog::info("reset requested by '{}'", p.client);
  return proto::encode_result(req.id, proto::NoArgs{});
}

std::string Publisher::State::op_draw(Peer& p, const std::string&, const proto::Request& req, const std::string& what) {
  const auto a = proto::decode_as<proto::DrawArgs>(req.args, what);
  auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  if (std::none_of(inputs.begin(), inputs.end(), [&](const InputSpec& i) { return i.name == a.input; })) {
    std::string names;
    for (const auto& i : inputs) names += (names.empty() ? "" : ", ") + i.name;
    throw Error(Errc::bad_value, "'" + opts.name + "' has no input '" + a.input + "'; " +
                                     (names.empty() ? std::string("it takes no drawing") : "its inputs are: " + names));
  }
  if (!(a.x >= 0 && a.x < width && a.y >= 0 && a.y < height))
    throw Error(Errc::out_of_range, "stroke at (" + num(a.x) + ", " + num(a.y) + ") lies outside the " +
                                        std::to_string(width) + "x" + std::to_string(height) + " grid");
  if (!(a.radius >= 0.5 && a.radius <= 256))
    throw Error(Errc::out_of_range, "stroke radius " + num(a.radius) + " is out of range [0.5, 256]");
  if (a.value != 0 && a.value != 1)
    throw Error(Errc::out_of_range, "stroke value " + std::to_string(a.value) + " is neither 1 (draw) nor 0 (erase)");
  {
    std::lock_guard lock(shared.m);
    if (shared.strokes.size() >= 4096) shared.strokes.erase(shared.strokes.begin());  // a program that stopped polling
    shared.strokes.push_back({a.input, a.x, a.y, a.radius, a.value});
    note_request(shared);
  }
  spdlog::debug("stroke on '{}' by '{}' at ({}, {}) r {} value {}", a.input, p.client, a.x, a.y, a.radius, a.value);
  return proto::encode_result(req.id, proto::NoArgs{});
}

std::string Publisher::State::op_checkpoint(Peer& p, const std::string&, const proto::Request& req,
                                            const std::string& what) {
  const auto a = proto::decode_as<proto::CheckpointArgs>(req.args, what);
  std::string path = a.path.value_or("");
  if (!path.empty() && path.front() != '/')
    throw Error(Errc::bad_value, "checkpoint path '" + path + "' is relative; '" + opts.name +
                                     "' runs in another directory: give an absolute path");
  if (path.size() > 4096) throw Error(Errc::out_of_range, "checkpoint path is longer than 4096 bytes");
  std::uint64_t ticket = 0;
  {
    std::lock_guard lock(shared.m);
    if (!shared.checkpoint.enabled)
      throw Error(Errc::unsupported, "'" + opts.name + "' (" + opts.title +
                                         ") does not write checkpoints: it is a program embedding the publisher, or "
                                         "its simulation declares no state (docs/checkpoints.md)");
    if (shared.checkpoints.size() >= 64)
      throw Error(Errc::too_many_clients, "'" + opts.name + "' already has 64 checkpoints waiting; try again later");
    ticket = ++shared.checkpoint_tickets;
    shared.checkpoints.emplace_back(ticket, path);
    note_request(shared);
  }
  spdlog::info("checkpoint {} requested by '{}'{}", ticket, p.client, path.empty() ? "" : " into " + path);
  return proto::encode_result(req.id, proto::CheckpointResult{ticket});
}

std::string Publisher::State::op_stats(Peer&, const std::string&, const proto::Request& req, const std::string& what) {
  (void)proto::decode_as<proto::NoArgs>(req.args, what);
  proto::Stats s;
  fill_identity(s);
  s.name = opts.name;
  s.sharing = slots->mechanism();
  s.step = step.load();
  s.sim_time = sim_time.load();
  s.frames_published = ring->published();
  s.frames_skipped = ring->block().frames_skipped.load();
  s.clients = static_cast<std::uint32_t>(peers.size());
  for (const auto& [id, peer] : peers) s.readers += peer.lease ? 1 : 0;
  s.held_slots = ring->held_slots();
  s.steps_per_second = steps_per_s.load();
  s.frames_per_second = frames_per_s.load();
  if (const RateWindow now = open_window(monotonic_ns());
      first_window && now.restarts0 == window.restarts0 && now.t0 - window.t0 > 50'000'000) {
    // The first half-second window is not closed yet: report what it has measured so far.
    const double dt = static_cast<double>(now.t0 - window.t0) * 1e-9;
    s.steps_per_second = static_cast<double>(now.step0 - window.step0) / dt;
    s.frames_per_second = static_cast<double>(now.frames0 - window.frames0) / dt;
  }
  s.rss_kib = resident_kib();
  s.uptime_s = static_cast<double>(monotonic_ns() - started_ns) * 1e-9;
  {
    std::lock_guard lock(shared.m);
    s.paused = shared.paused;
    s.params = shared.params->values();
    s.checkpoint = shared.checkpoint;
  }
  return proto::encode_result(req.id, s);
}

std::string Publisher::State::op_detach(Peer&, const std::string& peer, const proto::Request& req,
                                        const std::string& what) {
  (void)proto::decode_as<proto::NoArgs>(req.args, what);
  drop_peer(peer, "detached");
  return proto::encode_result(req.id, proto::NoArgs{});
}

std::string Publisher::State::op_shutdown(Peer& p, const std::string&, const proto::Request& req,
                                          const std::string& what) {
  (void)proto::decode_as<proto::NoArgs>(req.args, what);
  spdlog::info("shutdown requested by '{}' (pid {})", p.client, p.process.pid());
  std::lock_guard lock(shared.m);
  shared.shutdown = true;
  note_request(shared);
  return proto::encode_result(req.id, proto::NoArgs{});
}

}  // namespace cuview
