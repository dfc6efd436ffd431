// Client: a connection to a publisher on this host, its ring imported and its frames held
// zero-copy.
#include <unistd.h>

#include <algorithm>

#include "client/imports.hpp"
#include "client/session.hpp"
#include "cuview/runtime_dir.hpp"
#include "cuview/share/registry.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include "cuview/cuda/check.hpp"
#include "cuview/cuda/ipc_bytes.hpp"
#endif

namespace cuview {
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {
/// Imports the ring a `handles` reply describes into `s`.
void import_ring(detail::Session& s, const proto::HandlesResult& h) {
  auto imp = std::make_shared<detail::Imports>();
  imp->backend = h.backend;
  imp->layout = detail::layout_of(s.desc);
  imp->fields = s.desc.fields;
  if (h.slots.size() != s.desc.slots)
    throw Error(Errc::bad_message, s.who() + " sent " + std::to_string(h.slots.size()) + " slot handles for " +
                                       std::to_string(s.desc.slots) + " slots");
  imp->ring = RingReader(h.control_shm, s.hello.session, h.lease);
  share::ImportSource source{h, s.desc.slot_bytes, -1, s.who(),
                             [&s, &h] { return s.channel->fetch_descriptors(h, s.hello.session); }};
  if (h.backend == "host") {
    imp->slots = share::import_slots(source);
  } else if (h.backend == "cuda") {
#ifdef CUVIEW_HAVE_CUDA
    if (s.hello.daemon_pid == static_cast<std::int32_t>(::getpid()))
      throw Error(Errc::cuda, "cannot import the CUDA ring of " + s.who() +
                                  ": it is published by this same process, and CUDA IPC handles open only in "
                                  "another process; attach from a separate program (cuview-gui, cuview-ctl), or "
                                  "read your own buffers directly");
    cuda::check(cudaDeviceGetByPCIBusId(&imp->device, h.device_pci.c_str()),
                "finding the daemon's GPU " + h.device_pci + " in this process (cudaDeviceGetByPCIBusId)");
    cuda::DeviceGuard guard(imp->device);
    imp->stream = cuda::Stream::create();
    s.phase_done("CUDA context and stream on GPU " + std::to_string(imp->device));
    source.device = imp->device;
    imp->slots = share::import_slots(source);  // maps nothing yet: each slot when a frame in it is taken
    for (const auto& slot : h.slots)
      imp->event_handles.push_back(cuda::from_bytes<cudaIpcEventHandle_t>(slot.event, "CUDA IPC event handle"));
    imp->events.resize(h.slots.size());
#else
    throw Error(Errc::cuda, "this cuview client was built without CUDA, so it cannot import the CUDA ring of " +
                                s.who() + "; rebuild with the CUDA toolkit, or start the daemon with --backend host");
#endif
  } else {
    throw Error(Errc::bad_message, s.who() + " reports unknown backend '" + h.backend + "'");
  }
  s.phase_done("importing the ring");
  s.imports = std::move(imp);
  s.sharing = h.sharing;
}
}  // namespace

namespace detail {
Frame take_frame(const Session& s, const FrameInfo& info) {
  const bool first = !s.took_frame.exchange(true);
  if (first) s.phase_done("until the first frame");
  try {
    const auto mapped = s.imports->slots->mapped();
    s.imports->map(info.slot);
    if (first && s.imports->slots->mapped() != mapped)
      s.phase_done("mapping slot " + std::to_string(info.slot) + " (" + std::to_string(s.imports->slots->mapped()) +
                   " of " + std::to_string(s.imports->slots->count()) + " mapped)");
  } catch (const Error& e) {
    s.imports->ring.release(info.slot);
    if (s.gone())
      throw Error(Errc::daemon_gone, s.who() + " exited while slot " + std::to_string(info.slot) +
                                         " of its ring was being mapped (" + e.what() + "); attach again once a "
                                         "daemon named '" + s.opts.name + "' runs");
    throw;
  }
  return FrameAccess::frame(s.imports, info);
}
}  // namespace detail

bool daemon_running(const std::string& name) {
  return InstanceLock::is_held(InstancePaths(name)) || running_parts(name) > 0;
}

Client::Client(std::unique_ptr<detail::Session> session) : Attachment(std::move(session)) {}
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;
Client::~Client() = default;

Client Client::attach(const AttachOptions& options) {
  if (!options.remote.empty())
    throw Error(Errc::bad_value, "Client::attach('" + options.name + "') attaches on this host, and was given the "
                                     "gateway " + options.remote + ": use RemoteClient::attach, or cuview::open");
  auto s = std::make_unique<detail::Session>(options);
  s->channel = transport::open_local_channel(options.name, options.part);
  s->introduce(options.timeout);
  if (options.import == Import::frames) {
    auto handles = s->call<proto::HandlesResult>(proto::Op::handles, proto::NoArgs{}, options.timeout);
    s->phase_done("handles");
    if (s->cuda_starting.valid()) {
      s->cuda_starting.wait();
      s->phase_done("CUDA context (begun at hello)");
    }
    try {
      import_ring(*s, handles);
    } catch (const Error& e) {
      // Handles of a daemon that died meanwhile fail to open (on CUDA: "invalid resource
      // handle"). That is the daemon going away, which callers may retry, not a broken import.
      if (s->channel->publisher_exited())
        throw Error(Errc::daemon_gone, s->who() + " exited while its ring was being imported (" + e.what() +
                                           "); attach again once a daemon named '" + options.name + "' runs");
      throw;
    }
  }
  return Client(std::move(s));
}

proto::RenderResult Client::render(const proto::RenderArgs& view) {
  return session_->call<proto::RenderResult>(proto::Op::render, view, std::max<std::chrono::milliseconds>(
                                                                         session_->opts.timeout, std::chrono::seconds(10)));
}

const std::string& Client::sharing() const noexcept { return session_->sharing; }

std::uint32_t Client::mapped_slots() const { return session_->imports ? session_->imports->slots->mapped() : 0; }

std::optional<Frame> Client::next_frame(std::chrono::milliseconds timeout) {
  auto& s = *session_;
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const auto& ring = frame_ring("next_frame");
    const std::uint32_t seen = ring.notify_value();
    if (auto info = ring.acquire_newer(s.last_seq.load())) {
      s.last_seq.store(info->seq);
      if (holds_all(info->fields, s.reads.load()) && takes_every(info->every, s.every.load()))
        return detail::take_frame(s, *info);
      ring.release(info->slot);  // published before we asked for a field it lacks: the next one has it
      continue;
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
      if (f.step >= min_step && holds_all(f.fields, session_->reads.load()) &&
          takes_every(f.every, session_->every.load()) && (!step || f.step < *step))
        step = f.step;
    if (!step) return std::nullopt;
    if (auto info = ring.acquire_step(*step, 0)) {
      if (holds_all(info->fields, session_->reads.load()) && takes_every(info->every, session_->every.load()))
        return detail::take_frame(*session_, *info);
      ring.release(info->slot);  // another frame of that step, published before we asked
      continue;
    }
    // overwritten since the snapshot: look again
  }
  return std::nullopt;
}

const RingReader& Client::frame_ring(std::string_view call) const {
  const auto& s = *session_;
  const std::string what(call);
  if (s.detached) throw Error(Errc::not_attached, what + " after detach from " + s.who());
  if (!s.imports)
    throw Error(Errc::not_attached, what + " on a control-only attachment to " + s.who() +
                                        "; attach with Import::frames to receive frames");
  if (s.gone()) s.throw_gone();
  return s.imports->ring;
}

void Client::read_fields(const std::vector<std::string>& names) {
  const auto& ring = frame_ring("read_fields");
  const std::uint64_t blocks = proto::blocks_named(session_->desc, names, session_->who());
  session_->reads.store(blocks);
  ring.set_reads(blocks);
}

std::uint64_t Client::reads() const noexcept { return session_->reads.load(); }

void Client::read_every(std::uint32_t k) {
  const auto& ring = frame_ring("read_every");
  k = std::max<std::uint32_t>(k, 1);
  session_->every.store(k);
  ring.set_every(k);
}

std::uint32_t Client::every() const noexcept { return session_->every.load(); }


}  // namespace cuview
