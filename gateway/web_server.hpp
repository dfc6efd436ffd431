// cuview-gateway --http: the web viewer's server (issue 56). A page, a small HTTP API for scripts
// and the page's live connection (a WebSocket per open tab, /api/live, on a thread of its own) on
// a loopback port, reached from afar the way Jupyter is (`ssh -L PORT:localhost:PORT host`, then
// the URL the gateway printed, with its token). Its pictures are the runs' own (`render`:
// mode "plane" for a field's plane, the volume modes for a volume), asked over control-only
// connections: no CUDA context and no frames in the gateway, every picture paid for inside the
// run's cost budget. docs/remote.md "The web viewer".
//
// Every request must name this machine as its Host (127.0.0.1, localhost or [::1]: a page of
// another site cannot reach it by DNS rebinding), carry the token (`?token=` once, then the
// cookie the page sets) and, when it says where it comes from (Origin), come from this page.
// Anything else is refused with 403 and a sentence saying what was wrong, before it is read further.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace cuview::gateway {

struct WebOptions {
  std::string address = "127.0.0.1";  ///< where to listen (loopback by default)
  std::uint16_t port = 0;             ///< 0: the kernel picks one (the URL says which)
  std::filesystem::path root;         ///< the page's files (index.html)
  std::string token;                  ///< make_web_token()'s
};

/// 48 hexadecimal digits from the kernel's random source (192 bits, Jupyter's size).
[[nodiscard]] std::string make_web_token();

class WebServer {
 public:
  /// Listens, and serves on a thread of its own. Throws Error naming the address that could not
  /// be bound, or the page's folder when it lacks index.html.
  explicit WebServer(WebOptions options);
  ~WebServer();  ///< stops serving and joins its thread
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;
  /// http://ADDRESS:PORT/?token=TOKEN: what the gateway prints, and what a browser opens.
  [[nodiscard]] std::string url() const;
  [[nodiscard]] std::uint16_t port() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuview::gateway
