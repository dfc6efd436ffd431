// How a client's requests reach a publisher and the replies come back, apart from what they mean.
// Client (client.cpp) encodes requests, matches replies to them and decodes results; a
// RequestChannel only carries bytes, says whether the publisher's process is still there, and
// brings the descriptors some sharing mechanisms need. Today's one implementation is local
// (open_local_channel): ZeroMQ over ipc:// in the user's 0700 runtime directory, the publisher's
// pidfd, the descriptor socket. A channel over another kind of link is another implementation.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuview/posix.hpp"
#include "cuview/protocol.hpp"

namespace cuview::transport {

/// One client's connection to one publisher. Not thread-safe: the Client serialises its calls.
class RequestChannel {
 public:
  virtual ~RequestChannel() = default;
  /// Where requests go, for messages.
  [[nodiscard]] virtual std::string endpoint() const = 0;
  /// Queues one request; false when it cannot be queued now (the publisher is not reading).
  [[nodiscard]] virtual bool send(std::string_view request) = 0;
  /// The next reply, waiting at most `timeout`; empty when none came in time.
  [[nodiscard]] virtual std::optional<std::string> receive(std::chrono::milliseconds timeout) = 0;
  /// Watches the publisher's process, `pid` from its hello, from now on. Throws Error(daemon_gone)
  /// when it is already gone.
  virtual void watch_publisher(pid_t pid) = 0;
  /// True once the watched publisher process has exited (never blocks).
  [[nodiscard]] virtual bool publisher_exited() const noexcept = 0;
  /// The reason the publisher of `session` gave as it went (its bye notice), once it is gone: the
  /// first call waits up to 100 ms for the notice, later ones do not wait. Empty when it gave none.
  /// Thread-safe.
  [[nodiscard]] virtual std::string farewell(const std::string& session) = 0;
  /// The descriptors a `handles` reply announces (`h.fds` of them, in its order), for this
  /// client's `session`. Throws Error naming what refused them.
  [[nodiscard]] virtual std::vector<UniqueFd> fetch_descriptors(const proto::HandlesResult& h,
                                                                const std::string& session) = 0;
};

/// The local channel to the publisher named `name`, connected. Throws Error(access) for a runtime
/// directory of another user, Error(no_daemon) when no publisher of that name runs (naming those
/// that do).
/// `part`: part K of a decomposed publisher named `name` (docs/protocol.md "Parts").
std::unique_ptr<RequestChannel> open_local_channel(const std::string& name,
                                                   std::optional<std::uint32_t> part = std::nullopt);

}  // namespace cuview::transport
