// cuview-gateway's network side: the sockets remote clients reach it on, its peers, the gateway's
// own ops (hello, list), heartbeats, and the routing of everything else to one PublisherFeed per
// publisher. One thread runs it; feeds hand their messages back through an inproc outbox, so that
// this thread alone touches the sockets.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "announce.hpp"
#include "cuview/posix.hpp"
#include "publisher_feed.hpp"

namespace cuview::gateway {

/// Where this user's gateway keeps its socket and lock: $XDG_RUNTIME_DIR/cuview/.gateway (0700).
struct GatewayPaths {
  GatewayPaths();
  std::filesystem::path dir, socket, lock, log, pid;
};

/// Held by the running gateway (flock): one per user and host.
class GatewayLock {
 public:
  /// Throws Error(already_running) naming the socket of the gateway that holds it.
  explicit GatewayLock(const GatewayPaths& paths);
  static bool is_held(const GatewayPaths& paths);

 private:
  UniqueFd fd_;
};

struct GatewayOptions {
  GatewayPaths paths;
  std::string listen;               ///< tcp://HOST:PORT with CURVE; empty: none
  std::string dial;                 ///< tcp://HOST:PORT of a listening viewer; empty: none
  std::filesystem::path key;        ///< the gateway's CURVE key file
  std::filesystem::path authorized; ///< the clients' public keys
  FeedSettings feed;
  std::uint16_t announce_port = 0;  ///< UDP port to announce this gateway on (announce.hpp); 0: silent
};

class Gateway {
 public:
  /// Binds its sockets. Throws Error naming the endpoint that could not be bound.
  explicit Gateway(GatewayOptions options);
  ~Gateway();
  /// Serves until `stop` becomes true.
  void run(const std::atomic<bool>& stop);
  /// The tcp endpoint actually bound (its port when 0 was asked), "" without --listen.
  [[nodiscard]] const std::string& tcp_endpoint() const noexcept { return tcp_endpoint_; }

 private:
  struct Peer {
    std::chrono::steady_clock::time_point last_seen;
  };
  void on_message(std::size_t socket, std::vector<zmq::message_t>& parts);
  void on_gateway_request(const PeerId& peer, std::string body);
  void route_outbox();
  /// Sends [kind reply, from, body] to `peer` (from: "" for the gateway's own answers, else a publisher's address).
  void reply(const PeerId& peer, std::string_view from, std::string_view body);
  void send_to(const PeerId& peer, std::vector<zmq::message_t>& parts);
  void forget(const PeerId& peer);
  void beat();
  PublisherFeed& feed(const std::string& name);

  GatewayOptions options_;
  std::string session_;
  zmq::context_t context_{1};
  struct Impl;  // the CURVE authenticator, when listening on TCP
  std::unique_ptr<Impl> impl_;
  std::vector<zmq::socket_t> sockets_;  // [0]: the Unix socket; then tcp listen, tcp dial
  zmq::socket_t outbox_{context_, zmq::socket_type::pull};
  std::string tcp_endpoint_;
  std::map<PeerId, Peer> peers_;
  std::map<std::string, std::unique_ptr<PublisherFeed>> feeds_;
  std::chrono::steady_clock::time_point next_beat_{};
  std::unique_ptr<Announcer> announcer_;  ///< with announce_port: the beacon's own thread
};

}  // namespace cuview::gateway
