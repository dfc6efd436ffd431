#include "cuview/fd_passing.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cuview/error.hpp"

namespace cuview {
namespace {

constexpr std::size_t kMaxFds = 64;
constexpr std::size_t kMaxMessage = 64 * 1024;

sockaddr_un address_of(const std::filesystem::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string p = path.string();
  if (p.size() >= sizeof addr.sun_path)
    throw Error(Errc::bad_value, "socket path " + p + " is longer than the " +
                                     std::to_string(sizeof addr.sun_path - 1) +
                                     " bytes a Unix socket allows; set XDG_RUNTIME_DIR to a shorter directory");
  std::memcpy(addr.sun_path, p.c_str(), p.size() + 1);
  return addr;
}

}  // namespace

UniqueFd listen_fd_socket(const std::filesystem::path& path) {
  const sockaddr_un addr = address_of(path);
  UniqueFd s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!s) throw_errno("socket(AF_UNIX) for " + path.string(), errno);
  ::unlink(addr.sun_path);  // a socket file left by a crashed daemon (the instance lock is ours)
  // Created 0600 from the start: no window in which another user could connect.
  const mode_t old = ::umask(0177);
  const int rc = ::bind(s.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int bind_errno = errno;
  ::umask(old);
  if (rc != 0) throw_errno("bind " + path.string(), bind_errno);
  if (::chmod(addr.sun_path, 0600) != 0) throw_errno("chmod 0600 " + path.string(), errno);
  if (::listen(s.get(), 16) != 0) throw_errno("listen on " + path.string(), errno);
  return s;
}

UniqueFd connect_fd_socket(const std::filesystem::path& path) {
  const sockaddr_un addr = address_of(path);
  UniqueFd s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!s) throw_errno("socket(AF_UNIX) for " + path.string(), errno);
  if (::connect(s.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) return s;
  const int e = errno;
  if (e == ENOENT || e == ECONNREFUSED)
    throw Error(Errc::no_daemon, "nothing listens on the descriptor socket " + path.string() +
                                     " (the daemon exited or restarted); attach again");
  if (e == EACCES || e == EPERM)
    throw Error(Errc::access, "may not connect to the descriptor socket " + path.string() +
                                  ": it belongs to another user, and cuview hands GPU memory only to the daemon's own "
                                  "user; run the client as that user");
  throw_errno("connect to " + path.string(), e);
}

UniqueFd accept_fd_socket(int listener) {
  const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED) return {};
    throw_errno("accept on the descriptor socket", errno);
  }
  return UniqueFd(fd);
}

PeerCredentials peer_credentials(int socket) {
  ucred c{};
  socklen_t len = sizeof c;
  if (::getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &c, &len) != 0) throw_errno("SO_PEERCRED", errno);
  return {c.pid, c.uid, c.gid};
}

void send_with_fds(int socket, std::string_view bytes, std::span<const int> fds, const std::string& what) {
  if (fds.size() > kMaxFds) throw Error(Errc::internal, what + ": more than 64 descriptors in one message");
  iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * kMaxFds));
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    if (::sendmsg(socket, &msg, MSG_NOSIGNAL) >= 0) return;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      pollfd p{socket, POLLOUT, 0};
      if (::poll(&p, 1, 1000) > 0) continue;
      throw Error(Errc::timeout, what + ": the peer does not read");
    }
    throw_errno(what, errno);
  }
}

std::string receive_with_fds(int socket, std::vector<UniqueFd>& fds, std::chrono::milliseconds timeout,
                             const std::string& what) {
  fds.clear();
  pollfd p{socket, POLLIN, 0};
  int rc;
  do rc = ::poll(&p, 1, static_cast<int>(timeout.count()));
  while (rc < 0 && errno == EINTR);
  if (rc < 0) throw_errno(what, errno);
  if (rc == 0) throw Error(Errc::timeout, what + ": nothing arrived within " + std::to_string(timeout.count()) + " ms");
  std::string bytes(kMaxMessage, '\0');
  iovec iov{bytes.data(), bytes.size()};
  std::vector<char> control(CMSG_SPACE(sizeof(int) * kMaxFds));
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  ssize_t n;
  do n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  if (n < 0) throw_errno(what, errno);
  // Own whatever descriptors arrived before looking at anything else, so none can leak.
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      fds.emplace_back(fd);
    }
  }
  if (n == 0) throw Error(Errc::daemon_gone, what + ": the other side closed the connection");
  if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
    throw Error(Errc::bad_message, what + ": the message or its descriptors were truncated");
  bytes.resize(static_cast<std::size_t>(n));
  return bytes;
}

UniqueFd take_fd_of(pid_t pid, int fd) {
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd) throw_errno("pidfd_open of process " + std::to_string(pid), errno);
  const int got = static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0));
  if (got >= 0) return UniqueFd(got);
  const int e = errno;
  if (e == EPERM || e == EACCES)
    throw Error(Errc::access, "pidfd_getfd of descriptor " + std::to_string(fd) + " of process " + std::to_string(pid) +
                                  " was refused: it needs ptrace permission over that process (the same user and "
                                  "kernel.yama.ptrace_scope = 0, or CAP_SYS_PTRACE); use the descriptor socket "
                                  "(the default) instead");
  throw_errno("pidfd_getfd of descriptor " + std::to_string(fd) + " of process " + std::to_string(pid), e);
#else
  (void)pid, (void)fd;
  throw Error(Errc::system, "this system's headers have no pidfd_getfd; use the descriptor socket (the default)");
#endif
}

}  // namespace cuview
