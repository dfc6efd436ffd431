// The requests every connection makes (session.hpp) and the control calls of Attachment.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include "client/imports.hpp"
#include "client/session.hpp"
#include "cuview/runtime_dir.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "cuview/cuda/device_guard.hpp"
#endif

namespace cuview {
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace detail {

std::string Session::address() const { return PublisherAddress{opts.name, opts.part}.text(); }

std::string Session::who() const {
  const std::string what = opts.part ? "part " + std::to_string(*opts.part) + " of '" + opts.name + "'"
                                     : "daemon '" + opts.name + "'";
  return what + (hello.daemon_pid ? " (pid " + std::to_string(hello.daemon_pid) + ")" : "");
}

bool Session::gone() const noexcept { return (channel && channel->publisher_exited()) || said_shut_down(); }

bool Session::said_shut_down() const noexcept {
  return imports && imports->ring.state() == DaemonState::shut_down;
}

void Session::throw_gone() const {
  if (remote && remote->refused()) throw Error(Errc::access, remote->gone_reason());
  if (remote)
    throw Error(Errc::daemon_gone, who() + ": " + remote->gone_reason() + "; its session " + hello.session +
                                       " is over. Attach again once a daemon named '" + opts.name + "' runs");
  // The reason its bye notice gave ("shutdown", or the failure that ended the program).
  const std::string why = said_shut_down() && channel ? channel->farewell(hello.session) : std::string();
  throw Error(Errc::daemon_gone, who() + (said_shut_down() ? " shut down" : " exited") +
                                     (why.empty() || why == "shutdown" ? "" : " (" + why + ")") + "; its session " +
                                     hello.session + " is over. Attach again once a daemon named '" + opts.name +
                                     "' runs");
}

void Session::introduce(std::chrono::milliseconds timeout) {
  phase_done("connecting");
  hello = call<proto::HelloResult>(proto::Op::hello, proto::HelloArgs{opts.client, static_cast<std::int32_t>(::getpid())},
                                   timeout);
  if (!remote) channel->watch_publisher(hello.daemon_pid);
#ifdef CUVIEW_HAVE_CUDA
  // A CUDA context takes ~0.1 s to start (the driver loaded, then the GPU's primary context made):
  // begun now, on a thread of its own, while the ring is described and its handles are asked for.
  // Which GPU is known only from the handles: on a machine of one GPU, its context; else the
  // driver alone.
  if (!remote && opts.import == Import::frames && hello.backend == "cuda")
    cuda_starting = std::async(std::launch::async, [] {
      int n = 0;
      if (cudaGetDeviceCount(&n) != cudaSuccess || n != 1) return;
      try {
        cuda::DeviceGuard guard(0);  // retains the primary context for the process's life
      } catch (const Error&) {
        // import_ring makes it again and says what failed
      }
    });
#endif
  desc = call<proto::DescribeResult>(proto::Op::describe, proto::NoArgs{}, timeout);
  phase_done("hello and description");
}

void Session::phase_done(const std::string& what) const {
  const auto now = monotonic_ns();
  char ms[32];
  std::snprintf(ms, sizeof ms, " %.1f ms", static_cast<double>(now - phase_last_ns_) * 1e-6);
  const std::lock_guard lock(phases_mu_);
  phases_ += (phases_.empty() ? "" : ", ") + what + ms;
  phase_last_ns_ = now;
}

std::string Session::phases_text() const {
  const std::lock_guard lock(phases_mu_);
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.1f ms", static_cast<double>(phase_last_ns_ - phase_start_ns_) * 1e-6);
  return std::string(ms) + " (" + phases_ + ")";
}

proto::Reply Session::exchange(proto::Op op, const std::string& request, std::uint64_t id,
                               std::chrono::milliseconds timeout) {
  const std::string name(proto::name_of(op));
  if (!channel->send(request))
    throw Error(Errc::timeout, "cannot send '" + name + "' to " + who() + " at " + channel->endpoint() +
                                   ": its queue is full; is the daemon frozen?");
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    // A reply already here is read before the publisher counts as gone: one that answers and then
    // exits at once (a shutdown) has answered.
    auto bytes = channel->receive(0ms);
    if (!bytes && gone()) throw_gone();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (!bytes && left <= 0ms)
      throw Error(Errc::timeout, who() + " did not answer '" + name + "' within " + std::to_string(timeout.count()) +
                                     " ms at " + channel->endpoint() + "; is it frozen (SIGSTOP) or overloaded?");
    // Short slices, so that a daemon that dies without answering is noticed quickly.
    if (!bytes) bytes = channel->receive(std::min<std::chrono::milliseconds>(left, 100ms));
    if (!bytes) continue;
    auto reply = proto::decode_reply(*bytes, op == proto::Op::render ? proto::kMaxReplyBytes : proto::kMaxRequestBytes);
    if (reply.id != id) continue;  // the late answer to a request that timed out
    if (!reply.ok) throw Error(errc_from_string(reply.error.code), reply.error.message);
    return reply;
  }
}

void Session::detach() noexcept {
  if (detached.exchange(true) || hello.session.empty() || gone()) return;
  try {
    (void)call<proto::NoArgs>(proto::Op::detach, proto::NoArgs{}, 300ms);
  } catch (...) {
    // best effort: the daemon also notices our exit through our pid
  }
}

}  // namespace detail

// ---------------------------------------------------------------- Attachment

Attachment::Attachment(std::unique_ptr<detail::Session> session) : session_(std::move(session)) {}
Attachment::Attachment(Attachment&&) noexcept = default;
Attachment& Attachment::operator=(Attachment&&) noexcept = default;
Attachment::~Attachment() = default;

const proto::HelloResult& Attachment::hello() const noexcept { return session_->hello; }
const proto::DescribeResult& Attachment::description() const noexcept { return session_->desc; }
const std::string& Attachment::name() const noexcept { return session_->opts.name; }
const std::string& Attachment::via() const noexcept { return session_->opts.remote; }
std::string Attachment::attach_phases() const { return session_->phases_text(); }

bool Attachment::daemon_alive() const noexcept { return !session_->gone(); }

double Attachment::daemon_silence_s() const noexcept {
  if (!session_->imports) return 0;
  return static_cast<double>(monotonic_ns() - session_->imports->ring.heartbeat_ns()) * 1e-9;
}

proto::Stats Attachment::stats() {
  return session_->call<proto::Stats>(proto::Op::stats, proto::NoArgs{}, session_->opts.timeout);
}
void Attachment::pause() { (void)session_->call<proto::NoArgs>(proto::Op::pause, proto::NoArgs{}, session_->opts.timeout); }
void Attachment::resume() {
  (void)session_->call<proto::NoArgs>(proto::Op::resume, proto::NoArgs{}, session_->opts.timeout);
}
void Attachment::step(std::uint64_t n) {
  (void)session_->call<proto::NoArgs>(proto::Op::step, proto::StepArgs{n}, session_->opts.timeout);
}
void Attachment::set(const std::map<std::string, double>& params, const std::optional<std::string>& preset) {
  proto::SetArgs a;
  if (!params.empty()) a.params = params;
  a.preset = preset;
  (void)session_->call<proto::NoArgs>(proto::Op::set, a, session_->opts.timeout);
}
void Attachment::reset() { (void)session_->call<proto::NoArgs>(proto::Op::reset, proto::NoArgs{}, session_->opts.timeout); }
void Attachment::draw(const Stroke& s) {
  (void)session_->call<proto::NoArgs>(proto::Op::draw, proto::DrawArgs{s.input, s.x, s.y, s.radius, s.value, s.z},
                                      session_->opts.timeout);
}
std::uint64_t Attachment::checkpoint(const std::string& path) {
  proto::CheckpointArgs a;
  if (!path.empty()) a.path = path;
  return session_->call<proto::CheckpointResult>(proto::Op::checkpoint, a, session_->opts.timeout).ticket;
}

proto::CheckpointStatus Attachment::wait_checkpoint(std::uint64_t ticket, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const auto c = stats().checkpoint;
    if (c.error_ticket == ticket && !c.error.empty())
      throw Error(Errc::system, "checkpoint " + std::to_string(ticket) + " of '" + name() + "' failed: " + c.error);
    if (c.answered >= ticket) return c;
    if (Clock::now() > deadline)
      throw Error(Errc::timeout, "checkpoint " + std::to_string(ticket) + " of '" + name() +
                                     "' was not written within " + std::to_string(timeout.count()) +
                                     " ms (a large state, or a slow disk); its stats will say when it is");
    std::this_thread::sleep_for(20ms);
  }
}

void Attachment::shutdown() {
  try {
    (void)session_->call<proto::NoArgs>(proto::Op::shutdown, proto::NoArgs{}, session_->opts.timeout);
  } catch (const Error& e) {
    // Gone before its answer came back (it exits as soon as it has stopped): what was asked for.
    if (e.code() != Errc::daemon_gone) throw;
  }
  session_->detached = true;  // the daemon forgets every client as it exits
}
void Attachment::detach() noexcept {
  if (session_) session_->detach();
}

proto::Reply Attachment::forward(proto::Op op, const msgpack::object& args) {
  return session_->call_raw(op, args, session_->opts.timeout);
}

}  // namespace cuview
