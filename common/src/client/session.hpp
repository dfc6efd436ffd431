// What every connection to one publisher shares, local or through a gateway: the request
// channel, the publisher's hello and description, requests matched to their replies, and how its
// going away is told. Client (local_client.cpp) adds the imported ring, RemoteClient
// (remote_client.cpp) the gateway's views and fetches.
#pragma once

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>

#include "cuview/attachment.hpp"
#include "cuview/posix.hpp"
#include "transport/remote_channel.hpp"
#include "transport/request_channel.hpp"

namespace cuview::detail {

struct Session {
  AttachOptions opts;
  std::unique_ptr<transport::RequestChannel> channel;
  transport::RemoteChannel* remote = nullptr;  ///< the channel, when it goes through a gateway
  std::mutex mu;                               // guards channel and next_id
  std::uint64_t next_id = 1;
  proto::HelloResult hello;
  proto::DescribeResult desc;
  std::string sharing;
  std::shared_ptr<Imports> imports;  ///< the imported ring (local, Import::frames)
  std::atomic<std::uint64_t> last_seq{0};
  std::atomic<std::uint64_t> reads{0};  ///< the blocks this client reads (0: all): Client::read_fields
  std::atomic<std::uint32_t> every{1};  ///< frames of every k-th cell it also takes: Client::read_every
  std::atomic<bool> detached{false};

  explicit Session(const AttachOptions& o) : opts(o) {}
  ~Session() { detach(); }

  /// How a gateway names this publisher: "NAME" or "NAME/part-K".
  [[nodiscard]] std::string address() const;
  /// "daemon 'NAME' (pid N)" or "part K of 'NAME' (pid N)", for messages.
  [[nodiscard]] std::string who() const;
  /// The publisher exited, shut down or restarted (or the gateway says so).
  [[nodiscard]] bool gone() const noexcept;
  /// Whether the publisher said it shut down (rather than just exited).
  [[nodiscard]] bool said_shut_down() const noexcept;
  [[noreturn]] void throw_gone() const;

  /// Says hello and describes: the first two requests of every connection.
  void introduce(std::chrono::milliseconds timeout);

  template <class Result, class Args>
  Result call(proto::Op op, const Args& args, std::chrono::milliseconds timeout) {
    auto reply = call_raw(op, args, timeout);
    return proto::decode_as<Result>(reply.result, "'" + std::string(proto::name_of(op)) + "' result");
  }
  /// Sends `op` with `args` and waits for its reply; throws Error with the publisher's code and
  /// message when it refuses.
  template <class Args>
  proto::Reply call_raw(proto::Op op, const Args& args, std::chrono::milliseconds timeout) {
    std::lock_guard lock(mu);
    const std::uint64_t id = next_id++;
    // Before hello, this client's own version; after it, the session's (the publisher's when older).
    const std::uint32_t version = hello.protocol ? proto::session_version(hello.protocol) : proto::kVersion;
    return exchange(op, proto::encode_request(op, id, hello.session, args, version), id, timeout);
  }
  void detach() noexcept;

  /// Ends an attach phase named `what`, timed since the previous one (or the session's start):
  /// Attachment::attach_phases() lists them, the first frame's last.
  void phase_done(const std::string& what) const;
  [[nodiscard]] std::string phases_text() const;
  /// A CUDA context starting on a thread of its own while the control exchange goes on (begun by
  /// introduce() for a local reader of a CUDA publisher); waited for before the ring is imported.
  std::future<void> cuda_starting;
  /// Whether a frame was taken yet (take_frame times the first).
  mutable std::atomic<bool> took_frame{false};

 private:
  mutable std::mutex phases_mu_;
  std::int64_t phase_start_ns_ = monotonic_ns();
  mutable std::int64_t phase_last_ns_ = phase_start_ns_;
  mutable std::string phases_;
  /// Sends one encoded request and waits for the reply of `id` (under `mu`).
  proto::Reply exchange(proto::Op op, const std::string& request, std::uint64_t id, std::chrono::milliseconds timeout);
};

/// The Frame of `info`, a slot of `s`'s ring it holds: the slot's memory (and event) mapped first,
/// if this is the first frame taken from it. If mapping fails, the slot is released and the error
/// thrown (Errc::daemon_gone when the publisher went away meanwhile).
Frame take_frame(const Session& s, const FrameInfo& info);

}  // namespace cuview::detail
