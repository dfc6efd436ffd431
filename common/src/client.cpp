#include "cuview/client.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "cuview/frame_layout.hpp"
#include "cuview/runtime_dir.hpp"
#include "cuview/share/registry.hpp"
#include "transport/remote_channel.hpp"
#include "transport/request_channel.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "cuview/cuda/event.hpp"
#include "cuview/cuda/ipc_bytes.hpp"
#include "cuview/cuda/stream.hpp"
#endif

namespace cuview {
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace detail {
/// Everything a frame needs to stay readable: shared by the Client and its Frames, so that a
/// Frame outliving its Client keeps the mappings valid.
struct Imports {
  std::string backend;
  SlotLayout layout;
  RingReader ring;
  // The slots' memory as the sharing mechanism imported it (share/registry.hpp).
  std::unique_ptr<share::ImportedSlots> slots;
#ifdef CUVIEW_HAVE_CUDA
  // Every CUDA call on the imports runs under a cuda::DeviceGuard of this device: its primary
  // context pushed for the call, the caller's current device never set.
  int device = -1;
  cuda::Stream stream;
  std::vector<cuda::Event> events;
#endif
  [[nodiscard]] bool is_cuda() const { return backend == "cuda"; }

  Imports() = default;
  Imports(const Imports&) = delete;
  Imports& operator=(const Imports&) = delete;
  ~Imports() {
#ifdef CUVIEW_HAVE_CUDA
    if (device < 0) return;
    // Unmapped and destroyed in their own context, so that a thread that never used the GPU
    // (a Python finaliser, the viewer's UI thread) neither needs nor makes a current context.
    try {
      cuda::DeviceGuard guard(device);
      release_cuda();
    } catch (...) {
      release_cuda();
    }
#endif
  }

#ifdef CUVIEW_HAVE_CUDA
  void release_cuda() noexcept {
    events.clear();
    slots.reset();
    stream = cuda::Stream();
  }
#endif
};
}  // namespace detail

// ---------------------------------------------------------------- Frame

Frame::Frame(std::shared_ptr<const detail::Imports> imports, const FrameInfo& info) noexcept
    : imports_(std::move(imports)), info_(info) {}

Frame::Frame(Frame&& other) noexcept : imports_(std::move(other.imports_)), info_(other.info_) {}

Frame& Frame::operator=(Frame&& other) noexcept {
  if (this != &other) {
    if (imports_) imports_->ring.release(info_.slot);
    imports_ = std::move(other.imports_);
    info_ = other.info_;
  }
  return *this;
}

Frame::~Frame() {
  if (imports_) imports_->ring.release(info_.slot);
}

const float* Frame::host_field(std::size_t field) const noexcept {
  if (!imports_ || imports_->is_cuda() || field >= imports_->layout.fields.size()) return nullptr;
  return reinterpret_cast<const float*>(imports_->slots->slot(info_.slot) + imports_->layout.fields[field].offset);
}

const void* Frame::device_slot() const noexcept {
#ifdef CUVIEW_HAVE_CUDA
  if (imports_ && imports_->is_cuda()) return imports_->slots->slot(info_.slot);
#endif
  return nullptr;
}

int Frame::device() const noexcept {
#ifdef CUVIEW_HAVE_CUDA
  if (imports_ && imports_->is_cuda()) return imports_->device;
#endif
  return -1;
}

const void* Frame::slot_data() const noexcept {
  if (!imports_) return nullptr;
  if (const void* d = device_slot()) return d;
  return imports_->slots->slot(info_.slot);
}

void Frame::wait_on([[maybe_unused]] cuda::StreamRef stream) const {
#ifdef CUVIEW_HAVE_CUDA
  if (imports_ && imports_->is_cuda()) {
    cuda::DeviceGuard guard(imports_->device);
    cuda::check(cudaStreamWaitEvent(stream.get(), imports_->events[info_.slot].get(), 0),
                "cudaStreamWaitEvent on the interprocess event of frame " + std::to_string(info_.seq));
  }
#endif
}

void Frame::wait() const {
#ifdef CUVIEW_HAVE_CUDA
  if (imports_ && imports_->is_cuda()) {
    cuda::DeviceGuard guard(imports_->device);
    cuda::check(cudaEventSynchronize(imports_->events[info_.slot].get()),
                "cudaEventSynchronize on the interprocess event of frame " + std::to_string(info_.seq));
  }
#endif
}

SlotTrailer Frame::trailer() const {
  if (!imports_) throw Error(Errc::bad_value, "trailer() on a moved-from Frame");
  SlotTrailer t{};
  const auto offset = imports_->layout.trailer_offset;
#ifdef CUVIEW_HAVE_CUDA
  if (imports_->is_cuda()) {
    wait();
    cuda::DeviceGuard guard(imports_->device);
    const auto* src = imports_->slots->slot(info_.slot) + offset;
    cuda::check(cudaMemcpy(&t, src, sizeof t, cudaMemcpyDeviceToHost),
                "copying the trailer of frame " + std::to_string(info_.seq) + " to the host");
    return t;
  }
#endif
  std::memcpy(&t, imports_->slots->slot(info_.slot) + offset, sizeof t);
  return t;
}

void Frame::copy_to_host(std::span<std::byte> dst) const {
  if (!imports_) throw Error(Errc::bad_value, "copy_to_host on a moved-from Frame");
  const auto bytes = imports_->layout.slot_bytes;
  if (dst.size() < bytes)
    throw Error(Errc::bad_value,
                "copy_to_host needs " + std::to_string(bytes) + " bytes, got " + std::to_string(dst.size()));
  copy_to_host(0, dst.first(bytes));
}

void Frame::copy_to_host(std::size_t offset, std::span<std::byte> dst) const {
  if (!imports_) throw Error(Errc::bad_value, "copy_to_host on a moved-from Frame");
  const auto slot_bytes = imports_->layout.slot_bytes;
  if (offset > slot_bytes || dst.size() > slot_bytes - offset)
    throw Error(Errc::out_of_range, "copy_to_host of " + std::to_string(dst.size()) + " bytes at offset " +
                                        std::to_string(offset) + " runs past the slot's " +
                                        std::to_string(slot_bytes) + " bytes");
#ifdef CUVIEW_HAVE_CUDA
  if (imports_->is_cuda()) {
    const std::string what = " for frame " + std::to_string(info_.seq) + " (slot " + std::to_string(info_.slot) + ")";
    wait();  // on the host: a stream of ours waiting on the publisher's event would cost it a context switch
    cuda::DeviceGuard guard(imports_->device);
    auto s = imports_->stream.get();
    cuda::check(cudaMemcpyAsync(dst.data(), imports_->slots->slot(info_.slot) + offset, dst.size(),
                                cudaMemcpyDeviceToHost, s),
                "cudaMemcpyAsync device to host" + what);
    cuda::check(cudaStreamSynchronize(s), "cudaStreamSynchronize" + what);
    return;
  }
#endif
  std::memcpy(dst.data(), imports_->slots->slot(info_.slot) + offset, dst.size());
}

void Frame::synchronize_device() const {
#ifdef CUVIEW_HAVE_CUDA
  if (imports_ && imports_->is_cuda()) {
    cuda::DeviceGuard guard(imports_->device);
    cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize on GPU " + std::to_string(imports_->device) +
                                             " before releasing frame " + std::to_string(info_.seq));
  }
#endif
}

std::optional<std::string> Frame::verify() const {
  const auto& l = imports_->layout;
  std::vector<std::byte> buf(l.slot_bytes);
  copy_to_host(buf);
  SlotTrailer t{};
  std::memcpy(&t, buf.data() + l.trailer_offset, sizeof t);
  const std::string frame = "frame " + std::to_string(info_.seq) + " (slot " + std::to_string(info_.slot) + ")";
  if (t.seq != info_.seq)
    return frame + ": the slot's trailer says frame " + std::to_string(t.seq) + ", so the data was overwritten";
  if (t.step != info_.step)
    return frame + ": the slot's trailer says step " + std::to_string(t.step) + ", the ring said " +
           std::to_string(info_.step);
  // The trailer and checksum only: what the values mean is the simulation's business.
  const std::uint64_t sum = slot_checksum(buf.data(), l);
  if (sum != t.checksum) return frame + ": checksum mismatch: the data is torn or corrupt";
  return std::nullopt;
}

// ---------------------------------------------------------------- Client

namespace {
/// The slot layout a description states, checked before anything is mapped: fields in order,
/// aligned, whole words, inside the slot and before the trailer.
SlotLayout layout_of(const proto::DescribeResult& d) {
  SlotLayout l;
  std::size_t end = 0;
  auto add = [&](const proto::FieldDesc& f, const std::string& what) {
    if (f.offset % kFieldAlign != 0 || f.bytes % 4 != 0 || f.offset < end || f.offset + f.bytes > d.trailer_offset)
      throw Error(Errc::bad_message, what + " '" + f.name + "' at offset " + std::to_string(f.offset) + " with " +
                                         std::to_string(f.bytes) + " bytes does not fit a slot whose trailer is at " +
                                         std::to_string(d.trailer_offset) + "; the daemon's description is corrupt");
    l.fields.push_back({f.offset, f.bytes});
    end = f.offset + f.bytes;
  };
  // The slot holds the fields, then each particle set's attributes, in that order.
  for (const auto& f : d.fields) add(f, "field");
  for (const auto& set : d.particles)
    for (const auto& a : set.attributes) add(a, "particle attribute " + set.name + ".");
  if (d.trailer_offset + sizeof(SlotTrailer) > d.slot_bytes)
    throw Error(Errc::bad_message, "the trailer at " + std::to_string(d.trailer_offset) + " does not fit a slot of " +
                                       std::to_string(d.slot_bytes) + " bytes; the daemon's description is corrupt");
  l.trailer_offset = d.trailer_offset;
  l.slot_bytes = d.slot_bytes;
  return l;
}
}  // namespace

struct Client::Impl {
  AttachOptions opts;
  std::unique_ptr<transport::RequestChannel> channel;
  transport::RemoteChannel* remote = nullptr;  ///< the channel, when it goes through a gateway
  std::mutex mu;  // guards channel and next_id
  std::uint64_t next_id = 1;
  proto::HelloResult hello;
  proto::DescribeResult desc;
  std::string sharing;
  std::shared_ptr<detail::Imports> imports;
  std::atomic<std::uint64_t> last_seq{0};
  std::atomic<bool> detached{false};

  explicit Impl(const AttachOptions& o) : opts(o) {}
  ~Impl() { detach(); }

  /// How a gateway names this publisher: "NAME" or "NAME/part-K".
  [[nodiscard]] std::string address() const { return PublisherAddress{opts.name, opts.part}.text(); }

  [[nodiscard]] std::string who() const {
    const std::string what = opts.part ? "part " + std::to_string(*opts.part) + " of '" + opts.name + "'"
                                       : "daemon '" + opts.name + "'";
    return what + (hello.daemon_pid ? " (pid " + std::to_string(hello.daemon_pid) + ")" : "");
  }

  [[nodiscard]] bool gone() const noexcept {
    return (channel && channel->publisher_exited()) ||
           (imports && imports->ring.state() == DaemonState::shut_down);
  }

  [[noreturn]] void throw_gone() const {
    if (remote && remote->refused()) throw Error(Errc::access, remote->gone_reason());
    if (remote)
      throw Error(Errc::daemon_gone, who() + ": " + remote->gone_reason() + "; its session " + hello.session +
                                         " is over. Attach again once a daemon named '" + opts.name + "' runs");
    const bool shut = imports && imports->ring.state() == DaemonState::shut_down;
    throw Error(Errc::daemon_gone, who() + (shut ? " shut down" : " exited") + "; its session " + hello.session +
                                       " is over. Attach again once a daemon named '" + opts.name + "' runs");
  }

  template <class Result, class Args>
  Result call(proto::Op op, const Args& args, std::chrono::milliseconds timeout) {
    auto reply = call_raw(op, args, timeout);
    return proto::decode_as<Result>(reply.result, "'" + std::string(proto::name_of(op)) + "' result");
  }

  template <class Args>
  proto::Reply call_raw(proto::Op op, const Args& args, std::chrono::milliseconds timeout) {
    std::lock_guard lock(mu);
    const std::uint64_t id = next_id++;
    const std::string name(proto::name_of(op));
    if (!channel->send(proto::encode_request(op, id, hello.session, args)))
      throw Error(Errc::timeout, "cannot send '" + name + "' to " + who() + " at " + channel->endpoint() +
                                     ": its queue is full; is the daemon frozen?");
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      if (gone()) throw_gone();
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left <= 0ms)
        throw Error(Errc::timeout, who() + " did not answer '" + name + "' within " +
                                       std::to_string(timeout.count()) + " ms at " + channel->endpoint() +
                                       "; is it frozen (SIGSTOP) or overloaded?");
      // Short slices, so that a daemon that dies without answering is noticed quickly.
      const auto bytes = channel->receive(std::min<std::chrono::milliseconds>(left, 100ms));
      if (!bytes) continue;
      auto reply = proto::decode_reply(*bytes);
      if (reply.id != id) continue;  // the late answer to a request that timed out
      if (!reply.ok) throw Error(errc_from_string(reply.error.code), reply.error.message);
      return reply;
    }
  }

  void detach() noexcept {
    if (detached.exchange(true) || hello.session.empty() || gone()) return;
    try {
      (void)call<proto::NoArgs>(proto::Op::detach, proto::NoArgs{}, 300ms);
    } catch (...) {
      // best effort: the daemon also notices our exit through our pid
    }
  }

  void import_ring(const proto::HandlesResult& h) {
    auto imp = std::make_shared<detail::Imports>();
    imp->backend = h.backend;
    imp->layout = layout_of(desc);
    if (h.slots.size() != desc.slots)
      throw Error(Errc::bad_message, who() + " sent " + std::to_string(h.slots.size()) + " slot handles for " +
                                         std::to_string(desc.slots) + " slots");
    imp->ring = RingReader(h.control_shm, hello.session, h.lease);
    share::ImportSource source{h, desc.slot_bytes, -1, who(),
                               [this, &h] { return channel->fetch_descriptors(h, hello.session); }};
    if (h.backend == "host") {
      imp->slots = share::import_slots(source);
    } else if (h.backend == "cuda") {
#ifdef CUVIEW_HAVE_CUDA
      if (hello.daemon_pid == static_cast<std::int32_t>(::getpid()))
        throw Error(Errc::cuda, "cannot import the CUDA ring of " + who() +
                                    ": it is published by this same process, and CUDA IPC handles open only in "
                                    "another process; attach from a separate program (cuview-gui, cuview-ctl), or "
                                    "read your own buffers directly");
      cuda::check(cudaDeviceGetByPCIBusId(&imp->device, h.device_pci.c_str()),
                  "finding the daemon's GPU " + h.device_pci + " in this process (cudaDeviceGetByPCIBusId)");
      cuda::DeviceGuard guard(imp->device);
      imp->stream = cuda::Stream::create();
      source.device = imp->device;
      imp->slots = share::import_slots(source);
      for (const auto& s : h.slots)
        imp->events.push_back(
            cuda::Event::from_ipc_handle(cuda::from_bytes<cudaIpcEventHandle_t>(s.event, "CUDA IPC event handle")));
#else
      throw Error(Errc::cuda, "this cuview client was built without CUDA, so it cannot import the CUDA ring of " +
                                  who() + "; rebuild with the CUDA toolkit, or start the daemon with --backend host");
#endif
    } else {
      throw Error(Errc::bad_message, who() + " reports unknown backend '" + h.backend + "'");
    }
    imports = std::move(imp);
    sharing = h.sharing;
  }
};

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;
Client::~Client() = default;

bool daemon_running(const std::string& name) {
  return InstanceLock::is_held(InstancePaths(name)) || running_parts(name) > 0;
}

Client Client::attach(const AttachOptions& options) {
  auto impl = std::make_unique<Impl>(options);
  if (!options.remote.empty()) {
    validate_instance_name(options.name);
    auto channel = transport::open_remote_channel(options.remote, impl->address(), options.timeout);
    impl->remote = channel.get();
    impl->channel = std::move(channel);
    proto::HelloArgs hello{options.client, static_cast<std::int32_t>(::getpid())};
    impl->hello = impl->call<proto::HelloResult>(proto::Op::hello, hello, options.timeout);
    impl->desc = impl->call<proto::DescribeResult>(proto::Op::describe, proto::NoArgs{}, options.timeout);
    return Client(std::move(impl));
  }
  impl->channel = transport::open_local_channel(options.name, options.part);
  proto::HelloArgs hello{options.client, static_cast<std::int32_t>(::getpid())};
  impl->hello = impl->call<proto::HelloResult>(proto::Op::hello, hello, options.timeout);
  impl->channel->watch_publisher(impl->hello.daemon_pid);
  impl->desc = impl->call<proto::DescribeResult>(proto::Op::describe, proto::NoArgs{}, options.timeout);
  if (options.import == Import::frames) {
    auto handles = impl->call<proto::HandlesResult>(proto::Op::handles, proto::NoArgs{}, options.timeout);
    try {
      impl->import_ring(handles);
    } catch (const Error& e) {
      // Handles of a daemon that died meanwhile fail to open (on CUDA: "invalid resource
      // handle"). That is the daemon going away, which callers may retry, not a broken import.
      if (impl->channel->publisher_exited())
        throw Error(Errc::daemon_gone, impl->who() + " exited while its ring was being imported (" + e.what() +
                                           "); attach again once a daemon named '" + options.name + "' runs");
      throw;
    }
  }
  return Client(std::move(impl));
}

const proto::HelloResult& Client::hello() const noexcept { return impl_->hello; }
const proto::DescribeResult& Client::description() const noexcept { return impl_->desc; }
const std::string& Client::name() const noexcept { return impl_->opts.name; }
const std::string& Client::sharing() const noexcept { return impl_->sharing; }

std::optional<Frame> Client::next_frame(std::chrono::milliseconds timeout) {
  auto& im = *impl_;
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const auto& ring = frame_ring("next_frame");
    const std::uint32_t seen = ring.notify_value();
    if (auto info = ring.acquire_newer(im.last_seq.load())) {
      im.last_seq.store(info->seq);
      return Frame(im.imports, *info);
    }
    const auto now = Clock::now();
    if (now >= deadline) return std::nullopt;
    // Short slices so that a daemon that dies without waking us is noticed quickly.
    ring.wait_notify(seen, std::min<Clock::duration>(deadline - now, 100ms));
  }
}

std::optional<Frame> Client::frame_from_step(std::uint64_t min_step) {
  const auto& ring = frame_ring("frame_from_step");
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::optional<std::uint64_t> step;
    for (const auto& f : ring.offered())
      if (f.step >= min_step && (!step || f.step < *step)) step = f.step;
    if (!step) return std::nullopt;
    if (auto info = ring.acquire_step(*step, 0)) return Frame(impl_->imports, *info);
    // overwritten since the snapshot: look again
  }
  return std::nullopt;
}

const RingReader& Client::frame_ring(std::string_view call) const {
  const auto& im = *impl_;
  const std::string what(call);
  if (im.detached) throw Error(Errc::not_attached, what + " after detach from " + im.who());
  if (im.remote)
    throw Error(Errc::unsupported, what + " on a remote attachment to " + im.who() + " through " + im.opts.remote +
                                       ": remote clients receive views (watch, next_view) or regions (fetch), not "
                                       "the ring's frames");
  if (!im.imports)
    throw Error(Errc::not_attached, what + " on a control-only attachment to " + im.who() +
                                        "; attach with Import::frames to receive frames");
  if (im.gone()) im.throw_gone();
  return im.imports->ring;
}

Frame Client::adopt(const FrameInfo& info) const noexcept { return Frame(impl_->imports, info); }

bool Client::said_shut_down() const noexcept {
  return impl_->imports && impl_->imports->ring.state() == DaemonState::shut_down;
}

bool Client::remote() const noexcept { return impl_->remote != nullptr; }

namespace {
transport::RemoteChannel& remote_channel_of(transport::RemoteChannel* remote, const std::string& who,
                                            std::string_view call) {
  if (remote == nullptr)
    throw Error(Errc::unsupported, std::string(call) + " on a local attachment to " + who +
                                       ": local clients receive frames (next_frame) and sample them (ViewSampler)");
  return *remote;
}
}  // namespace

void Client::watch(const ViewWatch& w) { watch_with(w, 2); }

void Client::view_credit(std::uint64_t seq, std::optional<std::uint64_t> from_step) {
  auto& im = *impl_;
  auto& ch = remote_channel_of(im.remote, im.who(), "view_credit");
  std::lock_guard lock(im.mu);
  ch.credit(seq, from_step);
}

void Client::watch_with(const ViewWatch& w, std::uint32_t credits) {
  auto& im = *impl_;
  auto& ch = remote_channel_of(im.remote, im.who(), "watch");
  const auto& r = w.region;
  remote::ViewArgs a{im.address(), w.field, static_cast<std::uint32_t>(std::max(r.view_w, 0)),
                     static_cast<std::uint32_t>(std::max(r.view_h, 0)), r.center_x, r.center_y, r.pixels_per_cell,
                     w.encoding, credits};
  std::lock_guard lock(im.mu);
  if (im.gone()) im.throw_gone();
  (void)ch.gateway_call<proto::NoArgs>(remote::Op::view, a, im.opts.timeout);
}

bool Client::take_view(RemoteView& out, std::chrono::milliseconds timeout, bool credit) {
  auto& im = *impl_;
  auto& ch = remote_channel_of(im.remote, im.who(), "next_view");
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    std::unique_lock lock(im.mu);
    if (im.detached) throw Error(Errc::not_attached, "next_view after detach from " + im.who());
    if (im.gone()) im.throw_gone();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    // Short slices under the lock, so that control calls of other threads get their turn.
    auto arrived = ch.take_view(std::clamp<std::chrono::milliseconds>(left, 0ms, 20ms));
    if (arrived) {
      auto& h = arrived->header;
      if (h.rect && (std::uint64_t{h.rect->x} + h.rect->w > h.view_w || std::uint64_t{h.rect->y} + h.rect->h > h.view_h))
        throw Error(Errc::bad_message, "a view of " + im.who() + " through " + im.opts.remote + " has samples " +
                                           std::to_string(h.rect->w) + "x" + std::to_string(h.rect->h) + " at (" +
                                           std::to_string(h.rect->x) + ", " + std::to_string(h.rect->y) +
                                           ") outside its " + std::to_string(h.view_w) + "x" + std::to_string(h.view_h) +
                                           " samples");
      const std::uint64_t count = h.rect ? std::uint64_t{h.rect->w} * h.rect->h : std::uint64_t{h.view_w} * h.view_h;
      const auto encoding = remote::encoding_named(h.encoding);
      if (count > 0)
        ch.decoder.decode(encoding, h.lo, h.hi, count, h.raw_bytes,
                          std::string_view(static_cast<const char*>(arrived->payload.data()), arrived->payload.size()),
                          out.view.values);
      else
        out.view.values.clear();
      if (credit) ch.credit(h.seq);
      auto& region = out.view.region;
      region = ViewRegion{};
      const auto& part = im.desc.part;
      region.field_w = static_cast<int>(part ? part->global_width : im.desc.width);
      region.field_h = static_cast<int>(part ? part->global_height : im.desc.height);
      region.view_w = static_cast<int>(h.view_w), region.view_h = static_cast<int>(h.view_h);
      region.center_x = h.center_x, region.center_y = h.center_y, region.pixels_per_cell = h.pixels_per_cell;
      out.view.components = 1;
      out.view.vectors.clear();
      out.header = std::move(h);
      return true;
    }
    if (left <= 0ms) return false;
  }
}

bool Client::next_view(RemoteView& out, std::chrono::milliseconds timeout) {
  if (!take_view(out, timeout)) return false;
  if (const auto rect = out.header.rect) {
    // A part's samples: placed in the whole view, NaN (no value) where the other parts are.
    const std::size_t vw = out.header.view_w, vh = out.header.view_h;
    std::vector<float> whole(vw * vh, std::numeric_limits<float>::quiet_NaN());
    for (std::uint32_t y = 0; y < rect->h; ++y)
      std::copy_n(out.view.values.data() + std::size_t{y} * rect->w, rect->w,
                  whole.data() + (std::size_t{rect->y} + y) * vw + rect->x);
    out.view.values = std::move(whole);
  }
  return true;
}

RemoteRegion Client::fetch(const std::string& field, std::uint32_t x, std::uint32_t y, std::uint32_t w,
                           std::uint32_t h) {
  auto& im = *impl_;
  auto& ch = remote_channel_of(im.remote, im.who(), "fetch");
  std::lock_guard lock(im.mu);
  if (im.gone()) im.throw_gone();
  auto r = ch.gateway_call<remote::FetchResult>(remote::Op::fetch, remote::FetchArgs{im.address(), field, x, y, w, h},
                                                std::max<std::chrono::milliseconds>(im.opts.timeout, 30s),
                                                remote::kMaxPayloadBytes);
  const std::uint64_t count = std::uint64_t{r.w} * r.h * r.components;
  if (r.w != w || r.h != h || r.x != x || r.y != y || count > remote::kMaxFetchValues)
    throw Error(Errc::bad_message, "the gateway answered fetch of " + field + " with a different rectangle");
  if (r.raw_bytes != count * sizeof(float))
    throw Error(Errc::bad_message, "the gateway's fetch of " + field + " says " + std::to_string(r.raw_bytes) +
                                       " bytes for " + std::to_string(count) + " float32 values");
  RemoteRegion out{r.seq, r.step, r.sim_time, r.x, r.y, r.w, r.h, r.components, {}};
  std::vector<std::byte> raw;
  ch.decoder.decompress(std::string_view(r.data.data(), r.data.size()), r.raw_bytes, remote::kMaxFetchValues * 4, raw);
  out.values.resize(count);
  std::memcpy(out.values.data(), raw.data(), raw.size());
  return out;
}

bool Client::daemon_alive() const noexcept { return !impl_->gone(); }

double Client::daemon_silence_s() const noexcept {
  if (!impl_->imports) return 0;
  return static_cast<double>(monotonic_ns() - impl_->imports->ring.heartbeat_ns()) * 1e-9;
}

proto::Stats Client::stats() { return impl_->call<proto::Stats>(proto::Op::stats, proto::NoArgs{}, impl_->opts.timeout); }
void Client::pause() { (void)impl_->call<proto::NoArgs>(proto::Op::pause, proto::NoArgs{}, impl_->opts.timeout); }
void Client::resume() { (void)impl_->call<proto::NoArgs>(proto::Op::resume, proto::NoArgs{}, impl_->opts.timeout); }
void Client::step(std::uint64_t n) {
  (void)impl_->call<proto::NoArgs>(proto::Op::step, proto::StepArgs{n}, impl_->opts.timeout);
}
void Client::set(const std::map<std::string, double>& params, const std::optional<std::string>& preset) {
  proto::SetArgs a;
  if (!params.empty()) a.params = params;
  a.preset = preset;
  (void)impl_->call<proto::NoArgs>(proto::Op::set, a, impl_->opts.timeout);
}
void Client::draw(const Stroke& s) {
  (void)impl_->call<proto::NoArgs>(proto::Op::draw, proto::DrawArgs{s.input, s.x, s.y, s.radius, s.value}, impl_->opts.timeout);
}
std::uint64_t Client::checkpoint(const std::string& path) {
  proto::CheckpointArgs a;
  if (!path.empty()) a.path = path;
  return impl_->call<proto::CheckpointResult>(proto::Op::checkpoint, a, impl_->opts.timeout).ticket;
}

proto::CheckpointStatus Client::wait_checkpoint(std::uint64_t ticket, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto c = stats().checkpoint;
    if (c.error_ticket == ticket && !c.error.empty())
      throw Error(Errc::system,
                  "checkpoint " + std::to_string(ticket) + " of '" + impl_->opts.name + "' failed: " + c.error);
    if (c.answered >= ticket) return c;
    if (std::chrono::steady_clock::now() > deadline)
      throw Error(Errc::timeout, "checkpoint " + std::to_string(ticket) + " of '" + impl_->opts.name +
                                     "' was not written within " + std::to_string(timeout.count()) +
                                     " ms (a large state, or a slow disk); its stats will say when it is");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void Client::reset() { (void)impl_->call<proto::NoArgs>(proto::Op::reset, proto::NoArgs{}, impl_->opts.timeout); }
void Client::shutdown() {
  (void)impl_->call<proto::NoArgs>(proto::Op::shutdown, proto::NoArgs{}, impl_->opts.timeout);
  impl_->detached = true;  // the daemon forgets every client as it exits
}
void Client::detach() noexcept { impl_->detach(); }

proto::Reply Client::forward(proto::Op op, const msgpack::object& args) {
  return impl_->call_raw(op, args, impl_->opts.timeout);
}

// ---------------------------------------------------------------- RemoteHost

struct RemoteHost::Impl {
  std::unique_ptr<transport::RemoteChannel> channel;
  remote::HelloResult hello;
  std::chrono::milliseconds timeout;
};

RemoteHost::RemoteHost(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RemoteHost::RemoteHost(RemoteHost&&) noexcept = default;
RemoteHost& RemoteHost::operator=(RemoteHost&&) noexcept = default;
RemoteHost::~RemoteHost() = default;

RemoteHost RemoteHost::connect(const std::string& url, const std::string& client, std::chrono::milliseconds timeout) {
  auto impl = std::make_unique<Impl>();
  impl->channel = transport::open_remote_channel(url, "", timeout);
  impl->timeout = timeout;
  impl->hello = impl->channel->gateway_call<remote::HelloResult>(remote::Op::hello, remote::HelloArgs{client}, timeout);
  return RemoteHost(std::move(impl));
}

const remote::HelloResult& RemoteHost::hello() const noexcept { return impl_->hello; }

std::vector<remote::PublisherEntry> RemoteHost::publishers() {
  return impl_->channel->gateway_call<remote::ListResult>(remote::Op::list, proto::NoArgs{}, impl_->timeout).publishers;
}

}  // namespace cuview
