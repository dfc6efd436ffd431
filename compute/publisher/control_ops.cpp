#include "publisher/control_ops.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cuview/posix.hpp"
#include "cuview/view_sampler.hpp"
#include "cuview/volume_ray.hpp"
#include "publisher/pacer.hpp"
#include "publisher/publisher_log.hpp"

namespace cuview {
namespace {
constexpr std::size_t kMaxPeers = 64;
constexpr std::uint64_t kMaxStepRequest = 1'000'000;
constexpr std::size_t kMaxQueuedStrokes = 4096;
constexpr std::size_t kMaxQueuedCheckpoints = 64;

/// A request's arguments, strictly decoded; errors name the op.
template <class Args>
Args args_of(const proto::Request& req) {
  return proto::decode_as<Args>(req.args, "'" + req.op + "' arguments");
}

std::string ok(const proto::Request& req) { return proto::encode_result(req, proto::NoArgs{}); }

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
}  // namespace

ControlOps::ControlOps(const ControlContext& context) : c_(context) {
  started_ns_ = monotonic_ns();
  window_ = open_window(started_ns_);
  cost_window_ = window_;
}

// ---------------------------------------------------------------- the transport's calls

std::string ControlOps::answer(const std::string& peer, std::string_view bytes) {
  std::uint64_t id = 0;
  std::string op = "request";
  std::uint32_t version = proto::kVersion;  // refusals go in the client's version once it is known
  try {
    const proto::Request req = proto::decode_request(bytes, id);
    op = req.op;
    version = proto::session_version(req.v);
    // decode_request let only `hello` come without a session; a stale session is refused before
    // the op is looked at, so a client of an earlier run learns nothing about this one.
    if (req.session && *req.session != c_.session) throw stale_session_error(*req.session);
    return dispatch(proto::check_op(req.op), peer, req);
  } catch (const Error& e) {
    publisher_log().warn("refused {}: {} ({})", op, e.what(), to_string(e.code()));
    return proto::encode_error(id, e.code(), e.what(), version);
  } catch (const std::exception& e) {
    publisher_log().error("internal error on {}: {}", op, e.what());
    return proto::encode_error(id, Errc::internal, std::string("internal error: ") + e.what() + "; please report it",
                               version);
  }
}

std::string ControlOps::dispatch(proto::Op op, const std::string& peer, const proto::Request& req) {
  using proto::Op;
  // A part other than 0 answers what it shows (a picture of its block too); its run is steered
  // through part 0, whose program hands every request to all parts at one step.
  if (c_.opts.part && c_.opts.part->index != 0 && op != Op::hello && op != Op::describe && op != Op::handles &&
      op != Op::stats && op != Op::detach && op != Op::render)
    throw Error(Errc::unsupported, "part " + std::to_string(c_.opts.part->index) + " of '" + c_.opts.name +
                                       "' does not take '" + req.op + "': a run of parts is steered through part 0 (`cuview-ctl --name " +
                                       c_.opts.name + " " + req.op + "` does that)");
  // No default: the compiler flags an op without a handler (-Werror=switch on this file), and
  // the integration test "every op of the table has a handler" sends each one.
  switch (op) {
    case Op::hello: return op_hello(peer, req);
    case Op::describe: return op_describe(attached(peer, req), req);
    case Op::handles: return op_handles(attached(peer, req), req);
    case Op::stats: return op_stats(attached(peer, req), req);
    case Op::pause: return op_pause(attached(peer, req), req);
    case Op::resume: return op_resume(attached(peer, req), req);
    case Op::step: return op_step(attached(peer, req), req);
    case Op::set: return op_set(attached(peer, req), req);
    case Op::reset: return op_reset(attached(peer, req), req);
    case Op::draw: return op_draw(attached(peer, req), req);
    case Op::checkpoint: return op_checkpoint(attached(peer, req), req);
    case Op::detach: return op_detach(attached(peer, req), req);
    case Op::shutdown: return op_shutdown(attached(peer, req), req);
    case Op::render: return op_render(attached(peer, req), req);
  }
  throw Error(Errc::internal, "op '" + req.op + "' is listed but not handled; please report this bug");
}

void ControlOps::peer_exited(const std::string& peer) { release_peer(peer, "exited"); }

std::vector<int> ControlOps::descriptors_for(const proto::FdRequest& request, pid_t pid) {
  if (request.session != c_.session) throw stale_session_error(request.session);
  const auto owner = std::find_if(peers_.begin(), peers_.end(), [&](const auto& kv) {
    return !kv.second.fd_token.empty() && kv.second.fd_token == request.token;
  });
  if (owner == peers_.end())
    throw Error(Errc::not_attached, "no client of '" + c_.opts.name +
                                        "' holds this token: say 'hello' and ask for 'handles' on the control "
                                        "socket first, then send the fd_token of that reply");
  if (owner->second.pid != pid)
    throw Error(Errc::access, "the token was given to process " + std::to_string(owner->second.pid) +
                                  ", but process " + std::to_string(pid) +
                                  " asked with it; each process fetches its own descriptors");
  auto fds = c_.slots.fds();
  publisher_log().debug("handed {} descriptor(s) to client '{}' (pid {})", fds.size(), owner->second.client, pid);
  return fds;
}

void ControlOps::tick() {
  c_.ring.heartbeat();
  update_rates();
  // A reader asked for a field the newest frame lacks: wake the program, which publishes it (even
  // paused).
  if (const auto r = c_.ring.reads_changed(); r != reads_seen_) {
    reads_seen_ = r;
    if (!c_.ring.reads_beyond_newest()) return;
    std::lock_guard lock(c_.steering.m);
    c_.steering.reader_arrived = true;
    c_.steering.note_request();
  }
}

// ---------------------------------------------------------------- peers

ControlOps::Peer& ControlOps::attached(const std::string& peer, const proto::Request& req) {
  auto it = peers_.find(peer);
  if (it == peers_.end()) throw Error(Errc::not_attached, "'" + req.op + "' needs a 'hello' first on this connection");
  return it->second;
}

void ControlOps::release_peer(const std::string& peer, const char* why) {
  auto it = peers_.find(peer);
  if (it == peers_.end()) return;
  // Readers are worth an operator's attention; control-only clients (status queries, viewers
  // listing daemons every few seconds) would flood the log at info level.
  const auto level = it->second.lease ? spdlog::level::info : spdlog::level::debug;
  if (it->second.lease) c_.ring.close_lease(*it->second.lease);
  {
    std::lock_guard lock(c_.steering.m);
    c_.steering.picture_asks.erase(peer);  // its pictures stop with the next frame
    c_.steering.pictures_asked = !c_.steering.picture_asks.empty();
  }
  publisher_log().log(level, "client '{}' (pid {}) {}; {} client(s) remain", it->second.client, it->second.pid, why,
              peers_.size() - 1);
  peers_.erase(it);
}

Error ControlOps::stale_session_error(const std::string& theirs) const {
  return Error(Errc::stale_session, "session " + theirs + " is not this run's: it is from an earlier run of '" +
                                        c_.opts.name + "', or was never issued (this run is session " + c_.session +
                                        "); attach again (say 'hello') before using any handle");
}

// ---------------------------------------------------------------- rates

ControlOps::RateWindow ControlOps::open_window(std::int64_t now) const {
  return {now, c_.ring.published(), c_.progress.restarts.load(),
          c_.progress.publish_seconds.load(std::memory_order_relaxed)};
}

void ControlOps::update_rates() {
  const std::int64_t now = monotonic_ns();
  const RateWindow end = open_window(now);
  // The cost over windows of at least 5 s: a budget spaces dear frames seconds apart, and a
  // half-second window would hold one or none.
  if (const double dc = static_cast<double>(now - cost_window_.t0) * 1e-9; dc >= 5) {
    cost_ = (end.cost0 - cost_window_.cost0) / dc;
    cost_window_ = end;
    first_cost_window_ = false;
  }
  const Progress::Stamp stamp = c_.progress.stamped();
  if (end.restarts0 != window_.restarts0 || stamp.step < steps_from_.step) {  // a reset: begin new windows
    window_ = end;
    steps_from_ = stamp;
    return;
  }
  // Steps/s between two records of the step, at least half a second apart: a run that records
  // its steps a batch at a time shows its rate, not how many batches a half-second happened to
  // hold (32 or 64 steps/s for a run doing 41).
  if (steps_from_.records == 0) {
    steps_from_ = stamp;  // the first record opens the first window: every window runs record to record
  } else if (stamp.records != steps_from_.records && stamp.ns - steps_from_.ns >= 500'000'000) {
    const double ds = static_cast<double>(stamp.ns - steps_from_.ns) * 1e-9;
    steps_per_s_ = static_cast<double>(stamp.step - steps_from_.step) / ds;
    record_interval_ = ds / static_cast<double>(stamp.records - steps_from_.records);
    steps_from_ = stamp;
  }
  // No step recorded for half a second and two of the run's intervals between records: paused or held.
  if (static_cast<double>(now - stamp.ns) * 1e-9 > std::max(0.5, 2 * record_interval_)) steps_per_s_ = 0;
  const double dt = static_cast<double>(now - window_.t0) * 1e-9;
  if (dt < 0.5) return;
  frames_per_s_ = static_cast<double>(end.frames0 - window_.frames0) / dt;
  window_ = end;
  first_window_ = false;
}

// ---------------------------------------------------------------- one handler per op

std::string ControlOps::op_hello(const std::string& peer, const proto::Request& req) {
  const auto a = args_of<proto::HelloArgs>(req);
  const bool again = peers_.count(peer) > 0;
  if (!again && peers_.size() >= kMaxPeers)
    throw Error(Errc::too_many_clients, "'" + c_.opts.name + "' already serves " + std::to_string(kMaxPeers) +
                                            " clients; detach one and try again");
  c_.server.watch(peer, a.pid);  // refuses a process that is not there or not this user's; replaces the old one
  if (again) release_peer(peer, "said hello again");
  peers_.emplace(peer, Peer{peer, a.client, a.pid, std::nullopt, {}});
  publisher_log().debug("client '{}' (pid {}) said hello; {} client(s)", a.client, a.pid, peers_.size());
  return proto::encode_result(req, proto::HelloResult{c_.session, proto::session_version(req.v), CUVIEW_VERSION,
                                                      c_.opts.name, static_cast<std::int32_t>(::getpid()),
                                                      c_.executor.name()});
}

std::string ControlOps::op_describe(Peer&, const proto::Request& req) {
  (void)args_of<proto::NoArgs>(req);
  if (const auto why = proto::unreadable_for_version(c_.description, proto::session_version(req.v)); !why.empty())
    throw Error(Errc::version_mismatch, "publisher '" + c_.opts.name + "': " + why);
  proto::DescribeResult d = c_.description;
  {
    std::lock_guard lock(c_.steering.m);
    d.params = c_.steering.params->describe();
  }
  return proto::encode_result(req, d);
}

std::string ControlOps::op_handles(Peer& p, const proto::Request& req) {
  (void)args_of<proto::NoArgs>(req);
  if (!p.lease) {
    const auto arrivals = c_.ring.arrivals();
    p.lease = c_.ring.open_lease(p.pid);
    if (!p.lease)
      throw Error(Errc::too_many_clients, "all " + std::to_string(kMaxLeases) + " reader leases of '" +
                                              c_.opts.name + "' are in use; detach a viewer and try again");
    publisher_log().info("client '{}' (pid {}) is reading frames (lease {})", p.client, p.pid, *p.lease);
    if (c_.ring.arrivals() != arrivals) {  // the first reader: a paused program publishes for it too
      // That frame holds what the lease reads: tick() must not ask for a second one for the same
      // change of reads (a paused run published two frames when it did, one racing the other).
      reads_seen_ = c_.ring.reads_changed();
      std::lock_guard lock(c_.steering.m);
      c_.steering.reader_arrived = true;
      c_.steering.note_request();
    }
  }
  proto::HandlesResult h;
  h.backend = c_.executor.name();
  h.control_shm = c_.ring.shm_name();
  h.lease = *p.lease;
  h.sharing = c_.slots.mechanism();
  c_.slots.fill_handles(h);
  if (p.fd_token.empty()) p.fd_token = random_hex(16);
  h.fd_socket = c_.server.descriptor_endpoint();
  h.fd_token = p.fd_token;
  for (int fd : c_.slots.fds()) h.fd_numbers.push_back(fd);
  h.fds = static_cast<std::uint32_t>(h.fd_numbers.size());
  return proto::encode_result(req, h);
}

std::string ControlOps::op_stats(Peer&, const proto::Request& req) {
  (void)args_of<proto::NoArgs>(req);
  const auto& d = c_.description;
  proto::Stats s;
  s.session = d.session, s.backend = d.backend, s.device = d.device, s.sim = d.sim;
  s.dims = d.dims, s.slots = d.slots;
  s.name = c_.opts.name;
  s.sharing = c_.slots.mechanism();
  s.step = c_.progress.step();
  s.sim_time = c_.progress.sim_time.load();
  s.frames_published = c_.ring.published();
  s.frames_skipped = c_.ring.block().frames_skipped.load();
  s.clients = static_cast<std::uint32_t>(peers_.size());
  for (const auto& [id, peer] : peers_) s.readers += peer.lease ? 1 : 0;
  s.held_slots = c_.ring.held_slots();
  s.steps_per_second = steps_per_s_;
  s.frames_per_second = frames_per_s_;
  s.cost = cost_;
  if (const RateWindow now = open_window(monotonic_ns()); first_cost_window_ && now.t0 - cost_window_.t0 > 50'000'000)
    s.cost = (now.cost0 - cost_window_.cost0) / (static_cast<double>(now.t0 - cost_window_.t0) * 1e-9);  // still open
  s.max_cost = c_.opts.max_cost;
  s.max_fps = c_.opts.max_fps;
  // What held the newest frame back, while frames are being read; nothing while nobody reads.
  bool pictures_asked = false;
  {
    std::lock_guard lock(c_.steering.m);
    pictures_asked = !c_.steering.picture_asks.empty();
  }
  if (c_.ring.readers() > 0 || pictures_asked)
    s.limited_by = to_string(static_cast<RateLimit>(c_.progress.limit.load(std::memory_order_relaxed)));
  if (const RateWindow now = open_window(monotonic_ns());
      first_window_ && now.restarts0 == window_.restarts0 && now.t0 - window_.t0 > 50'000'000) {
    // The first half-second window is not closed yet: report what it has measured so far (the
    // steps' window closes at the first record half a second in).
    const double dt = static_cast<double>(now.t0 - window_.t0) * 1e-9;
    s.frames_per_second = static_cast<double>(now.frames0 - window_.frames0) / dt;
  }
  s.rss_kib = resident_kib();
  s.uptime_s = static_cast<double>(monotonic_ns() - started_ns_) * 1e-9;
  {
    std::lock_guard lock(c_.steering.m);
    s.paused = c_.steering.paused;
    s.params = c_.steering.params->values();
    s.checkpoint = c_.steering.checkpoint;
    s.pictures = c_.steering.pictures_cast;
    s.picture_ms = c_.steering.picture_ms;
  }
  s.part = d.part;
  return proto::encode_result(req, s);
}

void ControlOps::pause_or_resume(Peer& p, bool pause) {
  {
    std::lock_guard lock(c_.steering.m);
    c_.steering.paused = pause;
    c_.steering.pending_steps = c_.steering.polled_steps = 0;
    c_.steering.note_request();
  }
  publisher_log().info("{} by '{}' at step {}", pause ? "paused" : "resumed", p.client, c_.progress.step());
}

std::string ControlOps::op_pause(Peer& p, const proto::Request& req) {
  (void)args_of<proto::NoArgs>(req);
  pause_or_resume(p, true);
  return ok(req);
}

std::string ControlOps::op_resume(Peer& p, const proto::Request& req) {
  (void)args_of<proto::NoArgs>(req);
  pause_or_resume(p, false);
  return ok(req);
}

std::string ControlOps::op_step(Peer&, const proto::Request& req) {
  const auto a = args_of<proto::StepArgs>(req);
  if (a.n < 1 || a.n > kMaxStepRequest)
    throw Error(Errc::out_of_range,
                "step " + std::to_string(a.n) + " is out of range: use 1 to " + std::to_string(kMaxStepRequest));
  std::lock_guard lock(c_.steering.m);
  c_.steering.paused = true;  // stepping means the simulation holds still in between
  c_.steering.pending_steps += a.n;
  c_.steering.note_request();
  return ok(req);
}

std::string ControlOps::op_set(Peer& p, const proto::Request& req) {
  const auto a = args_of<proto::SetArgs>(req);
  if (!a.preset && (!a.params || a.params->empty()))
    throw Error(Errc::missing_field, "'set' needs 'params' (name → value) or a 'preset'");
  {
    std::lock_guard lock(c_.steering.m);
    auto& params = *c_.steering.params;
    params.assign(params.apply(a.preset, a.params.value_or(std::map<std::string, double>{})));
    c_.steering.params_changed = true;
    c_.steering.note_request();
  }
  publisher_log().info("parameters set by '{}'{}", p.client, a.preset ? " (preset " + *a.preset + ")" : "");
  return ok(req);
}

std::string ControlOps::op_reset(Peer& p, const proto::Request& req) {
  (void)args_of<proto::NoArgs>(req);
  {
    std::lock_guard lock(c_.steering.m);
    c_.steering.reset = true;
    c_.steering.pending_steps = c_.steering.polled_steps = 0;
    c_.steering.note_request();
  }
  publisher_log().info("reset requested by '{}'", p.client);
  return ok(req);
}

std::string ControlOps::op_draw(Peer& p, const proto::Request& req) {
  const auto a = args_of<proto::DrawArgs>(req);
  const auto& inputs = c_.inputs;
  if (std::none_of(inputs.begin(), inputs.end(), [&](const InputSpec& i) { return i.name == a.input; })) {
    std::string names;
    for (const auto& i : inputs) names += (names.empty() ? "" : ", ") + i.name;
    throw Error(Errc::bad_value, "'" + c_.opts.name + "' has no input '" + a.input + "'; " +
                                     (names.empty() ? std::string("it takes no drawing") : "its inputs are: " + names));
  }
  const auto& d = c_.description;
  // A run of parts is drawn on in global cells (every part gets the stroke, part 0 takes it).
  const Extent grid{d.run_dims()};
  // The stroke's centre, fastest axis first as the wire gives it: x, y, and a volume's z.
  const bool volume = grid.rank() == 3;  // the wire's z is a volume's
  const std::vector<double> centre{a.x, a.y, a.z.value_or(0)};
  const std::string at = "(" + number(a.x) + ", " + number(a.y) + (a.z ? ", " + number(*a.z) : "") + ")";
  for (std::size_t k = 0; k < centre.size(); ++k)
    if (!(centre[k] >= 0 && centre[k] < grid.from_fastest(k)))
      throw Error(Errc::out_of_range, "stroke at " + at + " lies outside the " + grid.text() + " grid");
  if (volume != a.z.has_value())
    throw Error(Errc::bad_value, "stroke at " + at + ": the " + grid.text() + " grid has " +
                                     std::to_string(grid.rank()) + " axes; give " +
                                     (volume ? "its centre's z as well" : "x and y only, without z"));
  if (!(a.radius >= 0.5 && a.radius <= 256))
    throw Error(Errc::out_of_range, "stroke radius " + number(a.radius) + " is out of range [0.5, 256]");
  if (a.value != 0 && a.value != 1)
    throw Error(Errc::out_of_range, "stroke value " + std::to_string(a.value) + " is neither 1 (draw) nor 0 (erase)");
  {
    std::lock_guard lock(c_.steering.m);
    auto& strokes = c_.steering.strokes;
    if (strokes.size() >= kMaxQueuedStrokes) strokes.erase(strokes.begin());  // a program that stopped polling
    strokes.push_back({a.input, a.x, a.y, a.radius, a.value, a.z});
    c_.steering.note_request();
  }
  publisher_log().debug("stroke on '{}' by '{}' at {} r {} value {}", a.input, p.client, at, a.radius, a.value);
  return ok(req);
}

std::string ControlOps::op_checkpoint(Peer& p, const proto::Request& req) {
  const auto a = args_of<proto::CheckpointArgs>(req);
  const std::string path = a.path.value_or("");
  if (!path.empty() && path.front() != '/')
    throw Error(Errc::bad_value, "checkpoint path '" + path + "' is relative; '" + c_.opts.name +
                                     "' runs in another directory: give an absolute path");
  if (path.size() > 4096) throw Error(Errc::out_of_range, "checkpoint path is longer than 4096 bytes");
  std::uint64_t ticket = 0;
  {
    std::lock_guard lock(c_.steering.m);
    if (!c_.steering.checkpoint.enabled)
      throw Error(Errc::unsupported, "'" + c_.opts.name + "' (" + c_.opts.title +
                                         ") does not write checkpoints: it is a program embedding the publisher, or "
                                         "its simulation declares no state (docs/checkpoints.md)");
    if (c_.steering.checkpoints.size() >= kMaxQueuedCheckpoints)
      throw Error(Errc::too_many_clients, "'" + c_.opts.name + "' already has " +
                                              std::to_string(kMaxQueuedCheckpoints) +
                                              " checkpoints waiting; try again later");
    ticket = ++c_.steering.checkpoint_tickets;
    c_.steering.checkpoints.emplace_back(ticket, path);
    c_.steering.note_request();
  }
  publisher_log().info("checkpoint {} requested by '{}'{}", ticket, p.client, path.empty() ? "" : " into " + path);
  return proto::encode_result(req, proto::CheckpointResult{ticket});
}

std::string ControlOps::op_detach(Peer& p, const proto::Request& req) {
  (void)args_of<proto::NoArgs>(req);
  const std::string id = p.id;  // `p` goes with the peer
  c_.server.forget(id);
  release_peer(id, "detached");
  return ok(req);
}

std::string ControlOps::op_render(Peer& p, const proto::Request& req) {
  auto a = args_of<proto::RenderArgs>(req);
  const std::uint64_t of_step = std::exchange(a.of_step, 0);  // which picture, not which view
  const auto& d = c_.description;
  const std::string who = "'" + c_.opts.name + "'";
  const auto f = std::find_if(d.fields.begin(), d.fields.end(), [&](const auto& x) { return x.name == a.field; });
  if (f == d.fields.end()) {
    std::string names;
    for (const auto& x : d.fields) names += (names.empty() ? "" : ", ") + x.name;
    throw Error(Errc::bad_value, "render: " + who + " has no field '" + a.field + "'; its fields are: " + names);
  }
  const auto index = static_cast<std::size_t>(f - d.fields.begin());
  const auto dims = d.grid_of(*f).dims;
  const bool plane = a.mode == proto::kPlaneMode;
  if (plane) {
    if (dims.size() < 2 || !parse_dtype(f->dtype))
      throw Error(Errc::unsupported, "render: field '" + a.field + "' of " + who + " lies on a grid of " +
                                         std::to_string(dims.size()) + " axis; a plane is shown of a field of 2 or 3 axes");
    if (!(a.zoom > 0) || !std::isfinite(a.zoom) || !std::isfinite(a.pan_x) || !std::isfinite(a.pan_y))
      throw Error(Errc::bad_value, "render: a plane at zoom " + number(a.zoom) + ", pan (" + number(a.pan_x) + ", " +
                                       number(a.pan_y) + "); give a zoom above 0 (1: the whole plane) and a finite pan");
    if (dims.size() == 3) {
      const std::string named = a.axis.value_or("z");
      if (named != "x" && named != "y" && named != "z")
        throw Error(Errc::bad_value, "render: axis '" + named + "' of a plane of field '" + a.field + "' of " + who +
                                         " is not one of a volume's; give x, y or z");
      const auto axis = slice_axis_named(named);
      auto whole = dims;
      if (d.part && d.part->global_dims.size() == 3 && dims == d.dims) whole = d.part->global_dims;
      const auto along = whole[static_cast<std::size_t>(axis)];
      if (a.index && *a.index >= along)
        throw Error(Errc::out_of_range, "render: plane " + std::to_string(*a.index) + " across " + to_string(axis) +
                                            " of field '" + a.field + "' of " + who + ": the grid has " +
                                            std::to_string(along) + " cells along " + to_string(axis) +
                                            "; give an index from 0 to " + std::to_string(along - 1));
    }
  } else if (dims.size() != 3 || f->dtype != "float32" || f->components != 1) {
    throw Error(Errc::unsupported, "render: field '" + a.field + "' of " + who + " is " + f->dtype + " × " +
                                       std::to_string(f->components) + " on a grid of " + std::to_string(dims.size()) +
                                       " axes; pictures are cast of float32 scalar fields of a volume (3 axes); "
                                       "mode 'plane' shows a plane of any field of 2 or 3 axes");
  }
  if (a.width < 1 || a.height < 1 || a.width > 4096 || a.height > 4096)
    throw Error(Errc::out_of_range, "render: a picture of " + std::to_string(a.width) + "x" + std::to_string(a.height) +
                                        " pixels; give each side 1 to 4096");
  if (!plane && !volume_mode_of(a.mode))
    throw Error(Errc::bad_value, "render: mode '" + a.mode + "' is none of " + kVolumeModeNames + ", plane");
  if (a.lut.size() != 256 || (a.mode == "emission" && a.opacity.size() != 256))
    throw Error(Errc::bad_value, "render: lut has " + std::to_string(a.lut.size()) + " colours and opacity " +
                                     std::to_string(a.opacity.size()) +
                                     " values; give 256 colours, and for emission 256 opacities");
  if (!(a.hi > a.lo) || !std::isfinite(a.lo) || !std::isfinite(a.hi))
    throw Error(Errc::bad_value, "render: the range [" + number(a.lo) + ", " + number(a.hi) +
                                     "] is empty; give lo < hi, both finite");
  std::lock_guard lock(c_.steering.m);
  auto& s = c_.steering;
  if (!s.picture_error.empty())
    throw Error(Errc::cuda, "render: a picture of " + who + " could not be cast on its GPU (" +
                                std::exchange(s.picture_error, {}) +
                                "); the run goes on; ask again, or watch the volume through the viewer's brick");
  const auto now = monotonic_ns();
  const auto same = std::find_if(s.picture_asks.begin(), s.picture_asks.end(),
                                 [&](const auto& ask) { return ask.second.view == a; });
  const bool new_view = same == s.picture_asks.end();
  s.picture_asks[p.id] = {a, index, now, new_view ? now : same->second.since_ns};
  s.pictures_asked = true;
  for (const auto& [view, held] : s.pictures)
    if (view == a && !held.empty()) {
      const auto of = std::find_if(held.begin(), held.end(), [&](const auto& x) { return x.step == of_step; });
      return proto::encode_result(req, of != held.end() ? *of : held.back());
    }
  // The next frame brings it, even while paused or unread. A running program collects a picture
  // being cast at its next publish(); a paused one is woken to, by each question.
  if (new_view) s.reader_arrived = true;
  if (new_view || s.paused) s.note_request();
  return proto::encode_result(req, proto::RenderResult{});
}

std::string ControlOps::op_shutdown(Peer& p, const proto::Request& req) {
  (void)args_of<proto::NoArgs>(req);
  publisher_log().info("shutdown requested by '{}' (pid {})", p.client, p.pid);
  std::lock_guard lock(c_.steering.m);
  c_.steering.shutdown = true;
  c_.steering.note_request();
  return ok(req);
}

}  // namespace cuview
