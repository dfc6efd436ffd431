// LAN discovery, the gateway's half (after Tracy's broadcast of running clients): once a second a
// small UDP datagram to the broadcast addresses says that a gateway runs here, for whom, and the
// tcp:// URL it listens on. It names no publisher: a peer without a key learns nothing but that a
// gateway is there (docs/remote.md has the datagram). Plain POSIX sockets, a thread of its
// own: announcing never waits on the gateway's network loop, nor it on a send.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cuview/posix.hpp"

namespace cuview::gateway {

inline constexpr std::uint16_t kDefaultAnnouncePort = 8991;

/// The beacon's contents: MessagePack map {"cuview": "gateway", "v": 1, "host", "user", "listen"}.
std::vector<char> encode_announcement(const std::string& host, const std::string& user, const std::string& listen);

/// Sends the beacon every second to 255.255.255.255 and 127.255.255.255 on `port` until destroyed.
/// A send the network refuses (no route, no broadcast) is logged once and tried again next second.
/// Move-less; the destructor stops and joins the thread.
class Announcer {
 public:
  /// `listen`: the gateway's tcp:// endpoint, "" when it is reached over ssh only. Throws
  /// Error(system) naming the UDP socket when it cannot be made.
  Announcer(std::uint16_t port, const std::string& listen);
  ~Announcer();
  Announcer(const Announcer&) = delete;
  Announcer& operator=(const Announcer&) = delete;

 private:
  void run();

  std::uint16_t port_;
  std::vector<char> datagram_;
  UniqueFd socket_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // under mu_
  std::thread thread_;
};

}  // namespace cuview::gateway
