#include "announce.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <msgpack.hpp>

#include "cuview/error.hpp"

namespace cuview::gateway {
using namespace std::chrono_literals;

std::vector<char> encode_announcement(const std::string& host, const std::string& user, const std::string& listen) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> pack(buffer);
  pack.pack_map(5);
  pack.pack(std::string("cuview"));
  pack.pack(std::string("gateway"));
  pack.pack(std::string("v"));
  pack.pack(1);
  pack.pack(std::string("host"));
  pack.pack(host);
  pack.pack(std::string("user"));
  pack.pack(user);
  pack.pack(std::string("listen"));
  pack.pack(listen);
  return {buffer.data(), buffer.data() + buffer.size()};
}

Announcer::Announcer(std::uint16_t port, const std::string& listen) : port_(port) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const char* user = std::getenv("USER");
  datagram_ = encode_announcement(host, user ? user : std::to_string(::getuid()), listen);
  socket_ = UniqueFd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!socket_) throw Error(Errc::system, std::string("announce: socket(AF_INET, SOCK_DGRAM): ") + std::strerror(errno));
  const int on = 1;
  if (::setsockopt(socket_.get(), SOL_SOCKET, SO_BROADCAST, &on, sizeof on) != 0)
    throw Error(Errc::system, std::string("announce: setsockopt(SO_BROADCAST): ") + std::strerror(errno));
  spdlog::info("gateway: announcing on UDP port {} (host {}, listen '{}'; no publisher names)", port, host, listen);
  thread_ = std::thread([this] { run(); });
}

Announcer::~Announcer() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Announcer::run() {
  // The LAN's broadcast, and the loopback's: viewers on this host hear it even without a network.
  const char* targets[] = {"255.255.255.255", "127.255.255.255"};
  bool refused_said[2] = {false, false};
  std::unique_lock lock(mu_);
  while (!stop_) {
    for (std::size_t i = 0; i < 2; ++i) {
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = htons(port_);
      ::inet_pton(AF_INET, targets[i], &to.sin_addr);
      if (::sendto(socket_.get(), datagram_.data(), datagram_.size(), 0, reinterpret_cast<const sockaddr*>(&to),
                   sizeof to) < 0 &&
          !std::exchange(refused_said[i], true))
        spdlog::warn("gateway: announcing to {}:{} failed: {} (tried again every second)", targets[i], port_,
                     std::strerror(errno));
    }
    wake_.wait_for(lock, 1s, [this] { return stop_; });
  }
}

}  // namespace cuview::gateway
