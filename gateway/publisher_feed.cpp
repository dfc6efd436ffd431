#include "publisher_feed.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <cstring>

#include "cuview/posix.hpp"
#include "cuview/runtime_dir.hpp"
#include "cuview/schema.hpp"

namespace cuview::gateway {
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {
/// How long the gateway keeps its lease on a publisher after the last client stopped viewing it
/// (docs/remote.md): long enough that a viewer stopping and viewing again at once does not make the
/// publisher withdraw and re-offer its frame, short enough that nobody watching costs nothing.
constexpr auto kLeaseGrace = 500ms;
}  // namespace

PublisherFeed::PublisherFeed(std::string address, zmq::context_t& context, FeedSettings settings)
    : name_(std::move(address)), address_(parse_publisher_address(name_)), settings_(settings),
      outbox_(context, zmq::socket_type::push), last_active_ns_(monotonic_ns()) {
  outbox_.set(zmq::sockopt::linger, 0);
  outbox_.set(zmq::sockopt::sndhwm, 0);  // bounded by the credits, never by dropping a reply
  outbox_.connect(kOutbox);
  entry_.name = name_;
  thread_ = std::thread([this] { run(); });
}

PublisherFeed::~PublisherFeed() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void PublisherFeed::publisher_request(const PeerId& peer, std::string body) {
  {
    std::lock_guard lock(mu_);
    tasks_.push_back({peer, Task::Kind::publisher_request, std::move(body)});
  }
  last_active_ns_ = monotonic_ns();
  wake_.notify_all();
}

void PublisherFeed::gateway_request(const PeerId& peer, std::string body) {
  {
    std::lock_guard lock(mu_);
    tasks_.push_back({peer, Task::Kind::gateway_request, std::move(body)});
  }
  last_active_ns_ = monotonic_ns();
  wake_.notify_all();
}

void PublisherFeed::forget(const PeerId& peer) {
  // Through the queue, so that the feed thread alone touches its watchers.
  {
    std::lock_guard lock(mu_);
    tasks_.push_back({peer, Task::Kind::forget, {}});
  }
  wake_.notify_all();
}

remote::PublisherEntry PublisherFeed::entry() const {
  std::lock_guard lock(mu_);
  return entry_;
}

double PublisherFeed::idle_s() const {
  std::lock_guard lock(mu_);
  if (entry_.viewers > 0 || hello_clients_ > 0 || !tasks_.empty()) return 0;
  return static_cast<double>(monotonic_ns() - last_active_ns_.load()) * 1e-9;
}

void PublisherFeed::send(const PeerId& peer, std::string_view kind, std::string_view body, std::string_view payload,
                         bool with_payload) {
  outbox_.send(zmq::buffer(peer), zmq::send_flags::sndmore);
  outbox_.send(zmq::buffer(kind), zmq::send_flags::sndmore);
  // Replies to the gateway's own ops come from the gateway (""), everything else from the publisher.
  outbox_.send(zmq::buffer(kind == remote::kReply && gateway_reply_ ? std::string_view() : std::string_view(name_)),
               zmq::send_flags::sndmore);
  if (!with_payload) {
    outbox_.send(zmq::buffer(body), zmq::send_flags::none);
    return;
  }
  outbox_.send(zmq::buffer(body), zmq::send_flags::sndmore);
  outbox_.send(zmq::buffer(payload), zmq::send_flags::none);
}

void PublisherFeed::reply_error(const PeerId& peer, bool gateway, std::uint64_t id, const Error& e) {
  send(peer, remote::kReply,
       gateway ? remote::encode_gateway_error(id, e.code(), e.what()) : proto::encode_error(id, e.code(), e.what()));
}

// ---------------------------------------------------------------- the thread

void PublisherFeed::run() {
  for (;;) {
    std::deque<Task> tasks;
    {
      std::unique_lock lock(mu_);
      if (watchers_.empty() && tasks_.empty() && !stop_) wake_.wait_for(lock, 50ms);
      if (stop_) break;
      tasks.swap(tasks_);
    }
    for (auto& t : tasks) handle(t);
    try {
      if (control_ && !control_->daemon_alive()) publisher_gone("exited");
      if (!watchers_.empty()) serve_watchers();
      else if (frames_ && Clock::now() - frames_used_ > kLeaseGrace) release_frames();
    } catch (const Error& e) {
      if (e.code() == Errc::daemon_gone)
        publisher_gone("exited");
      else
        spdlog::warn("gateway: publisher '{}': {}", name_, e.what());
    }
  }
  current_.reset();
  frames_.reset();
  reading_.reset();
  every_ = 1;
  fetching_ = false;
  control_.reset();
}

bool PublisherFeed::attach_control() {
  if (control_) return true;
  if (Clock::now() < next_attach_try_) return false;
  try {
    AttachOptions o;
    o.name = address_.name;
    o.part = address_.part;
    o.client = "cuview-gateway";
    o.import = Import::control_only;
    control_ = Client::attach(o);
    attach_error_.clear();
    attach_refused_ = false;
    std::lock_guard lock(mu_);
    const auto& d = control_->description();
    entry_ = {.name = name_,
              .sim = d.sim,
              .backend = d.backend,
              .device = d.device,
              .viewers = static_cast<std::uint32_t>(watchers_.size()),
              .dims = d.dims};
    spdlog::info("gateway: attached to publisher '{}' (session {})", name_, control_->hello().session);
    return true;
  } catch (const Error& e) {
    attach_error_ = e.what();
    attach_refused_ = false;
    // A whole-name attach of a run of parts: say what a remote client does about it (the local
    // refusal names the local calls).
    if (const auto parts = address_.part ? 0 : running_parts(address_.name); parts > 0) {
      attach_refused_ = true;
      attach_error_ = "'" + address_.name + "' runs as " + std::to_string(parts) +
                      " parts (an MPI run) on this gateway's host: attach to it remotely as a group, giving the "
                      "gateway of every host the run spans (Python: cuview.attach(name, remote=URL or [URL, ...]); "
                      "C: cuview_group_attach_remote; C++: cuview::open with the gateways; cuview-ctl and cuview-gui "
                      "--remote do so by themselves), or to one part as '" + address_.name + "/part-K'";
    }
    next_attach_try_ = Clock::now() + 200ms;
    return false;
  }
}

void PublisherFeed::throw_attach_error(Errc otherwise) const {
  throw Error(attach_refused_ ? Errc::bad_value : otherwise, attach_error_);
}

void PublisherFeed::release_frames() {
  // No reader, no copy: without the gateway's lease the publisher stops filling the ring.
  current_.reset();
  frames_.reset();
  reading_.reset();
  every_ = 1;
  fetching_ = false;
  spdlog::info("gateway: publisher '{}' has no remote viewer left; its frames are released", name_);
}

bool PublisherFeed::ensure_frames() {
  frames_used_ = Clock::now();
  if (frames_) return true;
  if (!attach_control()) return false;
  AttachOptions o;
  o.name = address_.name;
  o.part = address_.part;
  o.client = "cuview-gateway (views)";
  frames_ = Client::attach(o);
  return true;
}

void PublisherFeed::count_viewers() {
  std::lock_guard lock(mu_);
  entry_.viewers = static_cast<std::uint32_t>(watchers_.size());
  hello_clients_ = hello_peers_.size();
}

void PublisherFeed::publisher_gone(const std::string& reason) {
  const std::string session = control_ ? control_->hello().session : std::string();
  spdlog::info("gateway: publisher '{}' (session {}) {}", name_, session, reason);
  const auto body = proto::encode(remote::Gone{session, reason});
  std::set<PeerId> told;
  for (const auto& p : hello_peers_) told.insert(p);
  for (const auto& [p, w] : watchers_) told.insert(p);
  for (const auto& p : told) send(p, remote::kGone, body);
  hello_peers_.clear();
  watchers_.clear();
  last_active_ns_ = monotonic_ns();
  current_.reset();
  frames_.reset();
  reading_.reset();
  every_ = 1;
  fetching_ = false;
  control_.reset();
  std::lock_guard lock(mu_);
  entry_ = remote::PublisherEntry{};
  entry_.name = name_;
  hello_clients_ = 0;
}

void PublisherFeed::handle(Task& task) {
  gateway_reply_ = task.kind == Task::Kind::gateway_request;
  if (task.kind == Task::Kind::forget) {
    hello_peers_.erase(task.peer);
    watchers_.erase(task.peer);
    count_viewers();
    return;
  }
  if (task.kind == Task::Kind::gateway_request)
    handle_gateway_request(task.peer, task.body, task.at);
  else
    handle_publisher_request(task.peer, task.body);
}

void PublisherFeed::handle_publisher_request(const PeerId& peer, const std::string& body) {
  std::uint64_t id = 0;
  try {
    // The same envelope checks the publisher makes: a client hears the same errors through the
    // gateway as it would locally.
    auto request = proto::decode_request(body, id);  // a session on every op but hello
    const bool is_hello = request.op == proto::name_of(proto::Op::hello);
    const auto op = proto::check_op(request.op);
    if (!attach_control())
      throw_attach_error(attach_error_.find("no cuview-compute daemon") != std::string::npos ? Errc::no_daemon
                                                                                             : Errc::daemon_gone);
    const auto& session = control_->hello().session;
    if (request.session && *request.session != session)
      throw Error(Errc::stale_session, "session " + *request.session + " of daemon '" + name_ +
                                           "' is over (the daemon restarted; its session now is " + session +
                                           "); say hello again");
    // As on the local socket: a session is only good on a connection that said hello.
    if (!is_hello && !hello_peers_.count(peer))
      throw Error(Errc::not_attached, "'" + request.op + "' needs a 'hello' to '" + name_ +
                                          "' first on this connection to the gateway");
    switch (op) {
      case proto::Op::hello:
        (void)proto::decode_as<proto::HelloArgs>(request.args, "'hello' arguments");
        hello_peers_.insert(peer);
        count_viewers();
        {
          // The client's session with the publisher speaks the lower of its version and the one
          // the gateway's own session with the publisher speaks.
          auto hello = control_->hello();
          hello.protocol = std::min(proto::session_version(request.v), hello.protocol);
          send(peer, remote::kReply, proto::encode_result(request, hello));
        }
        return;
      case proto::Op::handles:
        throw Error(Errc::unsupported, "daemon '" + name_ +
                                           "' is reached through a gateway: a remote client receives views (the "
                                           "gateway's 'view' op), not the ring's memory handles");
      case proto::Op::detach:
        hello_peers_.erase(peer);
        watchers_.erase(peer);
        count_viewers();
        send(peer, remote::kReply, proto::encode_result(request, proto::NoArgs{}));
        return;
      case proto::Op::render:
        throw Error(Errc::unsupported, "publisher '" + name_ + "': through a gateway, pictures cast by the publisher "
                                       "come compressed: ask the gateway's 'picture' op (remote protocol 3) for this "
                                       "view instead of 'render'");
      case proto::Op::describe:
      case proto::Op::stats:
      case proto::Op::pause:
      case proto::Op::resume:
      case proto::Op::step:
      case proto::Op::set:
      case proto::Op::reset:
      case proto::Op::draw:
      case proto::Op::checkpoint:
      case proto::Op::shutdown: {
        // A client that could not read a field is refused here as by the publisher itself (which
        // the gateway asks in the newest version).
        if (const auto why = proto::unreadable_for_version(control_->description(), proto::session_version(request.v));
            op == proto::Op::describe && !why.empty())
          throw Error(Errc::version_mismatch, "publisher '" + name_ + "': " + why);
        auto reply = control_->forward(op, request.args);
        send(peer, remote::kReply, proto::encode_result(request, reply.result));
        return;
      }
    }
  } catch (const Error& e) {
    if (e.code() == Errc::daemon_gone) publisher_gone("exited");
    reply_error(peer, false, id, e);
  }
}

std::vector<proto::FieldDesc>::const_iterator PublisherFeed::grid_field(const proto::DescribeResult& d,
                                                                      const std::string& field) const {
  const auto f = std::find_if(d.fields.begin(), d.fields.end(), [&](const auto& x) { return x.name == field; });
  if (f == d.fields.end()) {
    std::string names;
    for (const auto& x : d.fields) names += (names.empty() ? "" : ", ") + x.name;
    throw Error(Errc::bad_value, "daemon '" + name_ + "' has no field '" + field + "'; its fields: " + names);
  }
  if (!parse_dtype(f->dtype))
    throw Error(Errc::unsupported, "field '" + field + "' of daemon '" + name_ + "' is " + f->dtype +
                                       "; remote views and fetches carry fields of " + dtype_names() +
                                       " values (update the gateway)");
  return f;
}

void PublisherFeed::handle_gateway_request(const PeerId& peer, const std::string& body, Clock::time_point at) {
  std::uint64_t id = 0;
  try {
    auto request = remote::decode_gateway_request(body, id);
    switch (remote::check_op(request.op)) {
      case remote::Op::view: {
        auto a = proto::decode_as<remote::ViewArgs>(request.args, "'view' arguments");
        if (!attach_control()) throw_attach_error(Errc::no_daemon);
        const auto d = control_->description().for_field(a.field);  // its grid: the field's own
        Watcher w;
        const auto f = grid_field(d, a.field);
        if (a.view_w == 0 || a.view_h == 0 || std::uint64_t{a.view_w} * a.view_h > remote::kMaxViewSamples)
          throw Error(Errc::out_of_range, "a view of " + std::to_string(a.view_w) + " × " + std::to_string(a.view_h) +
                                              " samples; a view has 1 to " + std::to_string(remote::kMaxViewSamples) +
                                              " samples");
        if (!(a.pixels_per_cell > 0) || !std::isfinite(a.center_x) || !std::isfinite(a.center_y))
          throw Error(Errc::out_of_range, "a view needs pixels_per_cell > 0 and a finite centre");
        if (a.credits < 1 || a.credits > 8)
          throw Error(Errc::out_of_range, "credits " + std::to_string(a.credits) + ": a view starts with 1 to 8");
        if (a.encoding != "auto") w.pinned = remote::encoding_named(a.encoding);
        w.field = static_cast<std::size_t>(f - d.fields.begin());
        if (a.brick) {
          if (d.run_dims().size() != 3)
            throw Error(Errc::bad_value, "a brick of field '" + a.field + "' of daemon '" + name_ +
                                             "': its grid has no third axis; view a picture of it instead");
          if (*a.brick < 8 || *a.brick > 512)
            throw Error(Errc::out_of_range, "a brick of " + std::to_string(*a.brick) +
                                                " cells a side; ask for 8 to 512");
          const auto g = d.run_dims();
          w.stride = BrickSampler::stride_for({g[0], g[1], g[2]}, static_cast<int>(*a.brick));
        } else {
          // Of the whole grid: a part of a decomposed run sends its share of the picture.
          w.layout = picture_named(d.run_dims(), a.axis, a.index, a.through,
                                   "field '" + a.field + "' of daemon '" + name_ + "'");
        }
        w.credits = a.credits;
        w.args = std::move(a);
        // A new region of the same view keeps what was learnt about the link.
        if (auto old = watchers_.find(peer); old != watchers_.end()) w.meter = old->second.meter;
        watchers_[peer] = std::move(w);
        count_viewers();
        send(peer, remote::kReply, remote::encode_gateway_result(request, proto::NoArgs{}));
        return;
      }
      case remote::Op::credit: {
        const auto a = proto::decode_as<remote::CreditArgs>(request.args, "'credit' arguments");
        if (auto w = watchers_.find(peer); w != watchers_.end()) {
          w->second.meter.acked(a.seq, at);
          w->second.credits = std::min<std::uint32_t>(w->second.credits + std::min<std::uint32_t>(a.n, 8), 8);
          w->second.from_step = a.from_step;  // each credit says which frame the next view shows
        }
        return;  // never answered
      }
      case remote::Op::stop:
        (void)proto::decode_as<remote::StopArgs>(request.args, "'stop' arguments");
        watchers_.erase(peer);
        count_viewers();
        send(peer, remote::kReply, remote::encode_gateway_result(request, proto::NoArgs{}));
        return;
      case remote::Op::fetch: {
        const auto a = proto::decode_as<remote::FetchArgs>(request.args, "'fetch' arguments");
        if (!ensure_frames()) throw_attach_error(Errc::no_daemon);
        // A fetched frame is fetched whole: from now on the gateway reads every field, and a
        // frame from before that is not fetched from (the next one holds them all).
        if (!fetching_) {
          fetching_ = true;
          update_reads();
          if (current_ && (current_->info().fields != kAllBlocks || current_->every() > 1)) current_.reset();
        }
        const auto d = frames_->description().for_field(a.field);  // its grid: the field's own
        const auto f = grid_field(d, a.field);
        // A volume's box spans layers [z, z + depth) as well; a plane's is one layer.
        const Extent grid{d.dims};
        const std::uint32_t layers = grid.depth(), z = a.z.value_or(0), depth = a.d.value_or(1);
        if (grid.rank() != 3 && (a.z || a.d))  // the wire's layers are a volume's
          throw Error(Errc::bad_value, "field '" + a.field + "' of daemon '" + name_ + "' is a plane: a fetch of it "
                                       "takes no z or d");
        if (a.w == 0 || a.h == 0 || depth == 0 || std::uint64_t{a.x} + a.w > grid.width() ||
            std::uint64_t{a.y} + a.h > grid.height() || std::uint64_t{z} + depth > layers)
          throw Error(Errc::out_of_range, "box " + std::to_string(a.w) + " × " + std::to_string(a.h) +
                                              (layers > 1 ? " × " + std::to_string(depth) : std::string()) + " at (" +
                                              std::to_string(a.x) + ", " + std::to_string(a.y) +
                                              (layers > 1 ? ", " + std::to_string(z) : std::string()) +
                                              ") is empty or leaves the " + grid.text() + " grid");
        if (a.seq) {
          // One frame's fields, fetched one after another: the frame an earlier fetch read.
          if (!current_ || current_->info().seq != *a.seq)
            throw Error(Errc::out_of_range, "frame " + std::to_string(*a.seq) + " of daemon '" + name_ +
                                                "' is no longer held by the gateway" +
                                                (current_ ? " (it holds frame " + std::to_string(current_->info().seq) + ")"
                                                          : std::string()) +
                                                "; fetch without seq for the newest");
        } else if (a.from_step) {
          auto fr = frames_->frame_from_step(*a.from_step);
          if (!fr)
            throw Error(Errc::timeout, "daemon '" + name_ + "' offers no frame at or after step " +
                                           std::to_string(*a.from_step) + " yet; ask again");
          current_.reset();  // release the older slot first
          current_ = std::move(fr);
        } else {
          for (auto waited = 0ms; !current_; waited += 20ms) {
            if (waited > 3s) throw Error(Errc::timeout, "daemon '" + name_ + "' published no frame within 3 s");
            if (auto fr = frames_->next_frame(20ms)) current_ = std::move(fr);
          }
          if (auto fr = frames_->next_frame(0ms)) current_ = std::move(fr);
        }
        // The field's values as they are, in its dtype: exact whatever it is.
        const std::uint32_t comps = f->components;
        const std::size_t cell_bytes = comps * size_of(*parse_dtype(f->dtype));
        if (std::uint64_t{a.w} * a.h * depth * cell_bytes > remote::kMaxFetchBytes)
          throw Error(Errc::out_of_range, "a box of " + std::to_string(std::uint64_t{a.w} * a.h * depth * cell_bytes) +
                                              " bytes of field '" + a.field + "'; a fetch carries at most " +
                                              std::to_string(remote::kMaxFetchBytes) + ": fetch fewer layers at a time");
        const std::size_t row_bytes = std::size_t{a.w} * cell_bytes;
        std::vector<std::byte> raw(row_bytes * a.h * depth);
        current_->wait();
        for (std::uint32_t k = 0; k < depth; ++k)
          for (std::uint32_t r = 0; r < a.h; ++r) {
            const std::size_t cell = ((std::size_t{z} + k) * grid.height() + a.y + r) * grid.width() + a.x;
            current_->copy_to_host(f->offset + cell * cell_bytes,
                                   std::span(raw).subspan((std::size_t{k} * a.h + r) * row_bytes, row_bytes));
          }
        remote::FetchResult out;
        out.session = frames_->hello().session;
        const auto& info = current_->info();
        out.seq = info.seq, out.step = info.step, out.sim_time = info.sim_time;
        out.x = a.x, out.y = a.y, out.w = a.w, out.h = a.h, out.components = comps;
        if (grid.rank() == 3) out.z = z, out.d = depth;
        out.raw_bytes = raw.size();
        std::string packed;
        encoder_.compress(raw, packed);
        out.data.assign(packed.begin(), packed.end());
        send(peer, remote::kReply, remote::encode_gateway_result(request, out));
        return;
      }
      case remote::Op::picture:
        send_picture(peer, request);
        return;
      case remote::Op::hello:
      case remote::Op::list:
        throw Error(Errc::internal, "the gateway routed '" + request.op + "' to a publisher");
    }
  } catch (const Error& e) {
    if (e.code() == Errc::daemon_gone) publisher_gone("exited");
    if (id != 0) reply_error(peer, true, id, e);
  }
}

void PublisherFeed::send_picture(const PeerId& peer, const remote::GatewayRequest& request) {
  auto a = proto::decode_as<remote::PictureArgs>(request.args, "'picture' arguments");
  // The view as strictly as the publisher decodes a `render`'s arguments (unknown keys too).
  for (std::uint32_t i = 0; i < request.args.via.map.size; ++i)
    if (const auto& kv = request.args.via.map.ptr[i]; kv.key.as<std::string_view>() == "view")
      a.view = proto::decode_as<proto::RenderArgs>(kv.val, "'picture' view");
  const auto codec = a.codec == "auto" ? remote::PictureCodec::webp : remote::picture_codec_named(a.codec);
  const auto values = a.values == "none" ? std::nullopt : std::optional(remote::encoding_named(a.values));
  if (!attach_control()) throw_attach_error(Errc::no_daemon);
  auto r = control_->render(a.view);  // the publisher's own checks and errors
  remote::PictureResult out;
  out.session = control_->hello().session;
  out.pending = r.pending, out.seq = r.seq, out.step = r.step, out.sim_time = r.sim_time, out.stamp_ns = r.stamp_ns;
  out.width = r.width, out.height = r.height, out.every = r.every, out.cast_ms = r.cast_ms;
  out.codec = std::string(remote::name_of(codec));
  out.values_encoding = values ? std::string(remote::name_of(*values)) : "none";
  const std::uint64_t pixels = std::uint64_t{r.width} * r.height;
  if (r.pending || (a.have_seq != 0 && r.seq == a.have_seq)) {
    out.same = !r.pending;
  } else if (r.argb.size() != pixels * 4 || r.values.size() != pixels * 4) {
    throw Error(Errc::bad_message, "publisher '" + name_ + "' answered 'render' with a picture of " +
                                       std::to_string(r.argb.size()) + " bytes for " + std::to_string(r.width) + "x" +
                                       std::to_string(r.height) + " pixels; the publisher is at fault: please report it");
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    // The reply's bytes as they are (a vector's storage is aligned for any scalar).
    pictures_.encode(codec, {reinterpret_cast<const std::uint32_t*>(r.argb.data()), pixels}, r.width, r.height,
                     packed_);
    out.argb.assign(packed_.begin(), packed_.end());
    if (values) {
      encoder_.encode({reinterpret_cast<const float*>(r.values.data()), pixels}, *values, encoded_values_);
      out.values_lo = encoded_values_.lo, out.values_hi = encoded_values_.hi;
      out.values_error_bound = encoded_values_.error_bound;
      out.values_raw_bytes = encoded_values_.raw_bytes;
      out.values.assign(encoded_values_.payload.begin(), encoded_values_.payload.end());
    }
    out.encode_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  send(peer, remote::kReply, remote::encode_gateway_result(request, out));
}

void PublisherFeed::update_reads() {
  std::vector<std::string> names;  // empty: every field
  if (!fetching_) {
    std::set<std::size_t> fields;
    for (const auto& [p, w] : watchers_) fields.insert(w.field);
    if (fields.empty()) return;  // nobody watches: keep what was read
    for (const auto f : fields) names.push_back(frames_->description().fields[f].name);
  }
  if (reading_ != names) {
    frames_->read_fields(names);
    reading_ = std::move(names);
  }
  // Bricks only, all of one stride, of a whole publisher: it may write frames of those cells only
  // (Client::read_every), as a local volume view's are; anything else reads whole frames.
  const auto& d = frames_->description();
  std::uint32_t every = 0;
  for (const auto& [p, w] : watchers_) {
    const bool brick = w.args.brick && !d.part && !fetching_;
    const auto k = brick ? static_cast<std::uint32_t>(w.stride) : 1u;
    every = every == 0 || every == k ? k : 1;
  }
  every = std::max(every, 1u);
  if (every == every_) return;
  frames_->read_every(every);
  every_ = every;
}

bool PublisherFeed::serves(const Frame& frame, const Watcher& w) {
  return frame.holds(w.field) && (w.args.brick || frame.every() <= 1);
}

void PublisherFeed::serve_watchers() {
  if (!ensure_frames()) return;
  update_reads();
  // The newest frame; wait a little for one when every watcher has seen the current one.
  bool anyone_waiting = false;
  for (auto& [p, w] : watchers_)
    if (w.credits > 0 && !w.from_step && (!current_ || (serves(*current_, w) && (w.dirty || current_->info().seq > w.last_sent))))
      anyone_waiting = true;  // a watcher the current frame can serve (one it lacks the field of waits for the next)
  if (auto fr = frames_->next_frame(anyone_waiting ? 0ms : 10ms)) {
    current_.reset();  // release the older slot first
    current_ = std::move(fr);
  }
  if (!current_) return;
  for (auto& [peer, w] : watchers_) {
    if (w.credits == 0) continue;
    if (w.from_step) {
      // A view of one step (a client assembling a run of parts): the first frame at or after it.
      if (current_->info().step < *w.from_step) continue;  // not published yet
      if (auto f = frames_->frame_from_step(*w.from_step)) {
        send_view(peer, w, *f);
        w.from_step.reset();
      }
      continue;
    }
    if (!w.dirty && current_->info().seq <= w.last_sent) continue;
    // Published before the field was asked for, or of a brick's cells before whole frames were: the
    // next one serves it.
    if (!serves(*current_, w)) continue;
    send_view(peer, w, *current_);
  }
}

namespace {
/// The error bound a view of `field` states (docs/remote.md): its encoding's, and for a dtype
/// whose values float32 does not hold exactly — a float wider than 4 bytes, an integer wider than
/// 2 — their rounding to float32 as well.
double stated_error_bound(const proto::FieldDesc& field, const remote::EncodedValues& e) {
  const auto type = parse_dtype(field.dtype).value_or(DType::float64);
  const bool exact = is_integer(type) ? size_of(type) <= 2 : size_of(type) <= 4;  // bfloat16: a float32's top half
  return exact ? e.error_bound : remote::error_bound_of_rounded(e.encoding, e.lo, e.hi);
}

/// Bricks through a gateway aim at this many a second (issue 40: ≥ 10 at 100 Mbit/s): a slower
/// link gets a coarser brick rather than fewer of them.
constexpr double kBrickFps = 10;

/// The brick cells [first, end) along one axis that cells [offset, offset + size) of the grid give
/// at `stride` (brick cell i is grid cell i·stride), as BrickSampler takes them.
std::pair<std::uint32_t, std::uint32_t> brick_cells(std::uint32_t offset, std::uint32_t size, int stride) {
  const auto s = static_cast<std::uint32_t>(stride);
  return {(offset + s - 1) / s, (offset + size + s - 1) / s};
}

/// The rows [first, end) of a brick (each of its width; `brick_height` rows per layer) from the
/// first to the last that `block`, a volume's part, gives at `stride`; first == end when it gives
/// none. From the block itself, never from the values: a field may hold NaN of its own.
std::pair<std::uint32_t, std::uint32_t> brick_rows(const Block& block, int stride, std::uint32_t brick_height) {
  const auto z = brick_cells(block.offset[0], block.dims[0], stride);
  const auto y = brick_cells(block.offset[1], block.dims[1], stride);
  const auto x = brick_cells(block.offset[2], block.dims[2], stride);
  if (z.first >= z.second || y.first >= y.second || x.first >= x.second) return {0, 0};
  return {z.first * brick_height + y.first, (z.second - 1) * brick_height + y.second};
}
}  // namespace

void PublisherFeed::send_brick(const PeerId& peer, Watcher& w, const Frame& frame) {
  const auto d = frames_->description().for_field(w.field);  // its grid: the field's own
  const auto& info = frame.info();
  const auto& a = w.args;
  const auto g = d.run_dims();
  const std::array<std::uint32_t, 3> grid{g[0], g[1], g[2]};
  int stride = BrickSampler::stride_for(grid, static_cast<int>(*a.brick));
  if (!d.part && w.meter.bytes_per_s() > 0) {
    // A whole publisher's brick fits the link: at the bytes a u8 value took last time (zstd's gain
    // included), kBrickFps of them within 80 % of the measured rate — the finest brick first; the
    // encoding is then the finest that still fits (LinkMeter::choose). Parts keep the size asked
    // for, so that their bricks are of one grid.
    const double most = 0.8 * w.meter.bytes_per_s() / kBrickFps / std::max(w.u8_bytes_per_value, 0.02);
    const auto cells = [&](int k) {
      const auto n = [&](std::uint32_t a) { return static_cast<double>((a + k - 1) / k); };
      return n(grid[0]) * n(grid[1]) * n(grid[2]);
    };
    while (stride < 64 && cells(stride) > most) ++stride;
  }
  // Frames of this stride are asked for (update_reads); one of another, written before, gives a
  // brick of the next multiple of its stride.
  w.stride = stride;
  if (const auto e = static_cast<int>(frame.every()); e > 1 && stride % e != 0) stride = (stride / e + 1) * e;
  BrickSampler::begin(w.brick, grid, stride);
  const Block mine = d.part ? d.part->block(d.dims) : own_block(d);
  bricks_.sample(frame, d.fields[w.field], mine, w.brick);
  const auto bw = static_cast<std::uint32_t>(w.brick.width);
  const auto rows = static_cast<std::uint32_t>(w.brick.height * w.brick.depth);
  std::span<const float> values = w.brick.values;
  std::optional<remote::ViewRect> rect;
  if (d.part) {
    // A part: the rows (of width × height·depth) from the first to the last that its block gives
    // travel, whatever values they hold (a NaN of the field's own included); none when the stride
    // passes its block by.
    const auto rows_of = brick_rows(mine, stride, static_cast<std::uint32_t>(w.brick.height));
    rect = rows_of.second > rows_of.first ? remote::ViewRect{0, rows_of.first, bw, rows_of.second - rows_of.first}
                                          : remote::ViewRect{0, 0, 0, 0};
    values = std::span<const float>(w.brick.values).subspan(std::size_t{rect->y} * bw, std::size_t{rect->h} * rect->w);
  }
  const auto encoding =
      w.pinned ? *w.pinned : w.meter.choose(std::max<std::size_t>(values.size(), 1), kBrickFps);
  encoder_.encode(values, encoding, w.encoded);
  if (encoding == remote::Encoding::u8 && !values.empty())
    w.u8_bytes_per_value = static_cast<double>(w.encoded.payload.size()) / static_cast<double>(values.size());
  remote::ViewHeader h;
  h.session = frames_->hello().session;
  h.seq = info.seq, h.step = info.step, h.sim_time = info.sim_time, h.stamp_ns = info.stamp_ns;
  h.sent_ns = realtime_ns();
  h.field = a.field;
  h.view_w = bw, h.view_h = rows;
  h.encoding = std::string(remote::name_of(encoding));
  h.lo = w.encoded.lo, h.hi = w.encoded.hi, h.error_bound = stated_error_bound(d.fields[w.field], w.encoded);
  h.raw_bytes = w.encoded.raw_bytes;
  h.link_bytes_per_s = w.meter.bytes_per_s();
  h.rect = rect;
  h.latest_step = current_->info().step;
  h.brick = std::vector<std::uint32_t>{static_cast<std::uint32_t>(w.brick.depth),
                                       static_cast<std::uint32_t>(w.brick.height), bw, static_cast<std::uint32_t>(stride)};
  send(peer, remote::kView, proto::encode(h), w.encoded.payload, true);
  w.meter.sent(info.seq, encoding, w.encoded.payload.size(), values.size(), Clock::now());
  --w.credits;
  w.last_sent = info.seq;
  w.dirty = false;
}

void PublisherFeed::send_view(const PeerId& peer, Watcher& w, const Frame& frame) {
  if (w.args.brick) return send_brick(peer, w, frame);
  const auto d = frames_->description().for_field(w.field);  // its grid: the field's own
  const auto& info = frame.info();
  const auto& a = w.args;
  // The picture's grid (w.layout): the whole grid, a plane of the whole volume or three (of a part's too).
  ViewRegion region;
  region.field_w = w.layout.w, region.field_h = w.layout.h;
  region.view_w = static_cast<int>(a.view_w), region.view_h = static_cast<int>(a.view_h);
  region.center_x = a.center_x, region.center_y = a.center_y, region.pixels_per_cell = a.pixels_per_cell;
  // This publisher's block of the whole grid, and its shares of the picture: a volume's planes
  // are read in place (strided), a part's shares are those of its block.
  const Block mine = d.part ? d.part->block(d.dims) : own_block(d);
  const auto& pf = d.fields[w.field];
  ViewSampler::begin(w.sampled, region, static_cast<int>(pf.components));
  ViewSampler::Block box{};  // the samples this publisher has: the rectangle around its shares
  for (const auto& share : picture_blocks(mine, w.layout)) {
    const auto r = ViewSampler::samples_of(region, share.rect);
    if (r.w == 0 || r.h == 0) continue;  // out of sight
    sampler_.sample_block(frame, block_field(pf, share), region, share.rect, w.sampled);
    if (box.w == 0) {
      box = r;
    } else {
      const int x1 = std::max(box.x + box.w, r.x + r.w), y1 = std::max(box.y + box.h, r.y + r.h);
      box.x = std::min(box.x, r.x), box.y = std::min(box.y, r.y);
      box.w = x1 - box.x, box.h = y1 - box.y;
    }
  }
  std::span<const float> values = w.sampled.values;
  std::optional<remote::ViewRect> rect;
  if (d.part) {
    // A part: only the samples around its shares travel (NaN where it has none).
    rect = remote::ViewRect{static_cast<std::uint32_t>(box.x), static_cast<std::uint32_t>(box.y),
                            static_cast<std::uint32_t>(box.w), static_cast<std::uint32_t>(box.h)};
    w.cropped.clear();
    w.cropped.reserve(std::size_t(box.w) * box.h);
    for (int y = box.y; y < box.y + box.h; ++y) {
      const float* row = w.sampled.values.data() + std::size_t(y) * region.view_w + box.x;
      w.cropped.insert(w.cropped.end(), row, row + box.w);
    }
    values = w.cropped;
  }
  const std::size_t samples = values.size();
  const auto encoding = w.pinned ? *w.pinned : w.meter.choose(std::max<std::size_t>(samples, 1), settings_.target_fps);
  encoder_.encode(values, encoding, w.encoded);
  remote::ViewHeader h;
  h.session = frames_->hello().session;
  h.seq = info.seq, h.step = info.step, h.sim_time = info.sim_time, h.stamp_ns = info.stamp_ns;
  h.sent_ns = realtime_ns();
  h.field = a.field;
  h.view_w = a.view_w, h.view_h = a.view_h;
  h.center_x = a.center_x, h.center_y = a.center_y, h.pixels_per_cell = a.pixels_per_cell;
  h.encoding = std::string(remote::name_of(encoding));
  h.lo = w.encoded.lo, h.hi = w.encoded.hi, h.error_bound = stated_error_bound(d.fields[w.field], w.encoded);
  h.raw_bytes = w.encoded.raw_bytes;
  h.link_bytes_per_s = w.meter.bytes_per_s();
  h.rect = rect;
  h.latest_step = current_->info().step;  // serve_watchers holds the newest frame
  h.axis = a.axis, h.index = a.index, h.through = a.through;  // the picture, as asked
  send(peer, remote::kView, proto::encode(h), w.encoded.payload, true);
  w.meter.sent(info.seq, encoding, w.encoded.payload.size(), samples, Clock::now());
  --w.credits;
  w.last_sent = info.seq;
  w.dirty = false;
}

}  // namespace cuview::gateway
