// One client's ZeroMQ connection to a gateway (remote_protocol.hpp): a DEALER on the gateway's
// socket, reached through the user's ssh forwarding a local Unix socket (ssh://), over
// CURVE-encrypted TCP (tcp://), or directly (unix:). It carries multipart messages and keeps
// count of the gateway's heartbeats; it does not interpret requests.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <zmq.hpp>

#include "remote/remote_url.hpp"

namespace cuview::remote {

class SshForward;

/// One message from the gateway: [kind, from, body(, payload)].
struct Incoming {
  std::string kind, from, body;
  zmq::message_t payload;  ///< views only
};

class RemoteLink {
 public:
  /// Connects to the gateway at `url`; for ssh:// this starts (or reuses) the forwarding, and the
  /// gateway itself when none runs there. Throws Error: bad_value (the URL), no_daemon (ssh or the
  /// gateway could not be started: ssh's own words are quoted), access (keys), timeout.
  static std::unique_ptr<RemoteLink> open(const std::string& url, std::chrono::milliseconds timeout);
  ~RemoteLink();

  [[nodiscard]] const RemoteUrl& url() const noexcept { return url_; }
  /// Queues [to, body]; false when it cannot be queued now.
  [[nodiscard]] bool send(std::string_view to, std::string_view body);
  /// The next message, waiting at most `timeout`. Beats are counted and returned like any other.
  std::optional<Incoming> receive(std::chrono::milliseconds timeout);
  /// True once the connection to the gateway dropped (it, or the ssh forwarding, exited: noticed
  /// at once), or when the gateway has been silent for longer than kSilenceLimitMs while we
  /// listened (frozen, or the network is gone).
  [[nodiscard]] bool silent() const noexcept;
  /// Why the gateway cannot be heard, in words ("" while it can).
  [[nodiscard]] std::string why_silent() const;
  /// The gateway refused this client, or could not be authenticated: its key is not the one
  /// expected (why_silent() says which file and line), or it refused this user's key.
  [[nodiscard]] bool refused() const noexcept { return !refused_.empty(); }
  /// The gateway's session, from its beats and hello ("" until one came).
  [[nodiscard]] const std::string& gateway_session() const noexcept { return gateway_session_; }
  /// Records the session a beat or hello named; a different one than before means the gateway
  /// restarted, and everything it knew of this client is gone.
  void note_gateway_session(const std::string& s);
  [[nodiscard]] bool gateway_restarted() const noexcept { return gateway_restarted_; }

 private:
  RemoteLink(RemoteUrl url, std::shared_ptr<SshForward> forward);
  /// tcp: this user's key, and the gateway's (pinned, or offered in the URL: pinned once the
  /// gateway has answered, so that a wrong key in a URL is never pinned).
  void apply_keys();
  bool blocking_send_ = false;  ///< tcp+listen: wait for the gateway to dial in
  RemoteUrl url_;
  std::shared_ptr<SshForward> forward_;  // keeps the ssh forwarding up while this link lives
  zmq::context_t context_{1};
  zmq::socket_t socket_{context_, zmq::socket_type::dealer};
  std::chrono::steady_clock::time_point last_heard_;
  std::chrono::steady_clock::time_point listening_since_, last_listened_;
  std::string gateway_session_;
  bool gateway_restarted_ = false;
  bool heard_ = false;  ///< the gateway has spoken at least once
  // Connection events of socket_ (zmq_socket_monitor): a dropped connection, a refused key.
  void read_events();
  zmq::socket_t monitor_;
  bool dropped_ = false;
  bool handshake_done_ = false;  ///< a ZMTP handshake (CURVE's included) succeeded at least once
  std::string refused_;
  /// tcp: what a connection that drops before its CURVE handshake succeeded means (the gateway
  /// does not hold the key this client expects), in words naming where that key came from.
  std::string key_mismatch_;
  std::optional<std::string> pin_when_answered_;  ///< a URL's key, not pinned yet
};

}  // namespace cuview::remote
