// The ZAP handler (ZeroMQ RFC 27) of a context: libzmq asks it about every peer of a socket that
// has a ZAP domain, and the peer gets in only if it says 200. cuview's gateway accepts CURVE
// clients whose key is in authorized_keys; NULL and PLAIN peers are always refused.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include <zmq.hpp>

namespace cuview::remote {

/// Decides about one CURVE peer: the user id to accept it as (e.g. its key's comment), or nullopt
/// to refuse it. Called on the handler's thread only.
using ZapDecision = std::function<std::optional<std::string>(
    std::string_view mechanism, std::string_view client_public_z85, std::string_view peer_address)>;
/// Receives one line per refused peer (and per malformed request or throwing decision).
using ZapLog = std::function<void(const std::string&)>;

/// Binds inproc://zeromq.zap.01 in `context` and answers ZAP requests on a thread of its own until
/// destroyed. One per context; construct it before binding the sockets it guards, destroy it before
/// the context. Move-less (its thread refers to it). Throws Error(already_running) when the context
/// already has a ZAP handler, Error(system) for other ZeroMQ failures.
class ZapHandler {
 public:
  ZapHandler(zmq::context_t& context, ZapDecision decide, ZapLog log = {});
  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;
  ~ZapHandler();  // stops the thread and joins it; never throws, never waits on a peer

  /// Peers refused so far (any mechanism). Thread-safe.
  [[nodiscard]] std::uint64_t refusals() const noexcept { return refusals_.load(std::memory_order_relaxed); }
  /// Peers accepted so far. Thread-safe.
  [[nodiscard]] std::uint64_t acceptances() const noexcept { return acceptances_.load(std::memory_order_relaxed); }

  static constexpr const char* kEndpoint = "inproc://zeromq.zap.01";

 private:
  void run() noexcept;
  /// One request's frames in, the reply's frames out.
  void answer();
  void say(const std::string& line) const noexcept;

  ZapDecision decide_;
  ZapLog log_;
  zmq::socket_t rep_;
  zmq::socket_t stop_receiver_, stop_sender_;  ///< the destructor's one message ends the thread
  std::atomic<std::uint64_t> refusals_{0}, acceptances_{0};
  std::thread thread_;
};

}  // namespace cuview::remote
