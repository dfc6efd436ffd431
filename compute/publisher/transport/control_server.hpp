// How requests reach a publisher and replies and notices leave it, apart from what they mean.
// A ControlServer moves bytes, knows which connection sent them, watches whether the process
// behind a connection is still there, and hands out file descriptors; the publisher's op handlers
// (publisher/control_ops.hpp) implement ControlHandler and see only a request and the peer that
// sent it. Today's one implementation is local (make_local_control_server): ZeroMQ over ipc://
// in the 0700 runtime directory, pidfds for liveness, a descriptor socket for SCM_RIGHTS. A
// transport for another kind of link is another implementation of these two classes.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cuview/protocol.hpp"
#include "cuview/runtime_dir.hpp"

namespace cuview {

/// The side that knows what requests mean. Called on the server's thread only, one call at a time.
class ControlHandler {
 public:
  virtual ~ControlHandler() = default;
  /// The reply to one request (`bytes`) from `peer`, a name the transport gives one connection.
  /// Never throws: a refusal is an error reply.
  virtual std::string answer(const std::string& peer, std::string_view bytes) = 0;
  /// The process behind `peer` (ControlServer::watch) exited: release what it held.
  virtual void peer_exited(const std::string& peer) = 0;
  /// The descriptors process `pid` may take with `request`, owned by the handler. Throws Error
  /// naming what is wrong (stale session, unknown token, another process's token).
  virtual std::vector<int> descriptors_for(const proto::FdRequest& request, pid_t pid) = 0;
  /// Once per turn of the server's loop, at least every 50 ms: heartbeats, rates.
  virtual void tick() = 0;
};

class ControlServer {
 public:
  virtual ~ControlServer() = default;
  /// Where clients send requests, for the log.
  [[nodiscard]] virtual std::string endpoint() const = 0;
  /// Where clients fetch descriptors (the `handles` reply's fd_socket); empty where there is none.
  [[nodiscard]] virtual std::string descriptor_endpoint() const = 0;
  /// Serves on a thread of its own until stop(); returns at once. `handler` must outlive stop().
  virtual void start(ControlHandler& handler) = 0;
  /// Stops and joins the thread: the handler is not called after it returns. notify() still works
  /// (the goodbye notice goes out after the last answer). Idempotent; never throws.
  virtual void stop() noexcept = 0;
  /// Binds `peer` to process `pid` (from its hello) and from then on calls peer_exited() when it
  /// exits. Throws Error(bad_value) when there is no such process, Error(access) when it is
  /// another user's. Called from inside ControlHandler::answer().
  virtual void watch(const std::string& peer, pid_t pid) = 0;
  /// Stops watching `peer` (it detached, or said hello again). Never throws.
  virtual void forget(const std::string& peer) noexcept = 0;
  /// Sends a notice (proto::kFrameTopic, kByeTopic) to every subscriber; never blocks, drops it
  /// for a subscriber that is not keeping up. Any thread.
  virtual void notify(std::string_view topic, const std::string& body) = 0;
};

/// The local transport on `paths` (control and frames as ZeroMQ ipc:// endpoints, the descriptor
/// socket), bound now; the files are removed when the server goes. Throws Error, or zmq::error_t
/// when an endpoint cannot be bound.
std::unique_ptr<ControlServer> make_local_control_server(const InstancePaths& paths);

}  // namespace cuview
