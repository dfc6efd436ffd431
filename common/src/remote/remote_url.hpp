// The places a remote client can reach a gateway, as a user writes them:
//   ssh://[user@]host[:port]     through the user's own ssh (its config, agent, ProxyJump apply)
//   tcp://host:port[?key=KEY]    CURVE-encrypted TCP; KEY pins the gateway's public key on first use
//   unix:PATH                    a gateway socket on this host (or one forwarded by hand)
//   tcp+listen://addr:port?key=KEY   listen there for a gateway that dials out (--dial); CURVE as tcp://
#pragma once

#include <optional>
#include <string>

namespace cuview::remote {

struct RemoteUrl {
  enum class Scheme { ssh, tcp, unix_socket };
  Scheme scheme = Scheme::ssh;
  std::string text;  ///< as given, for messages
  std::string user;  ///< ssh: empty for ssh's default
  std::string host;
  int port = 0;      ///< ssh: 0 for ssh's default; tcp: required
  std::string path;  ///< unix: the socket
  std::optional<std::string> key;  ///< tcp: ?key=
  bool listen = false;              ///< tcp+listen://: bind and wait for the gateway to dial in

  /// Throws Error(bad_value) naming what is wrong with `url` and the forms there are.
  static RemoteUrl parse(const std::string& url);
  /// "host:port", the name a tcp gateway's key is pinned under.
  [[nodiscard]] std::string host_port() const { return host + ":" + std::to_string(port); }
};

}  // namespace cuview::remote
