// File descriptors between processes: a Unix-domain SOCK_SEQPACKET socket whose messages carry
// descriptors as SCM_RIGHTS, and pidfd_getfd as a second path. ZeroMQ cannot carry descriptors,
// so the mechanisms that share GPU memory through one (VMM, IPC memory pools) hand them over here.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cuview/posix.hpp"

namespace cuview {

/// Creates a listening socket at `path` (mode 0600; a stale socket file there is replaced).
/// Non-blocking and close-on-exec. Throws Error(system) naming the path.
UniqueFd listen_fd_socket(const std::filesystem::path& path);

/// Connects to the socket at `path`. Throws Error(no_daemon) when nothing listens there,
/// Error(access) when this user may not open it, Error(system) otherwise.
UniqueFd connect_fd_socket(const std::filesystem::path& path);

/// Accepts one pending connection, or returns an empty UniqueFd when none is pending.
UniqueFd accept_fd_socket(int listener);

/// The process at the other end of a Unix socket, as the kernel saw it connect (SO_PEERCRED).
struct PeerCredentials {
  pid_t pid = -1;
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
};
PeerCredentials peer_credentials(int socket);

/// Sends one message of `bytes` with `fds` attached (each is duplicated into the receiver).
/// Throws Error(system) naming `what`.
void send_with_fds(int socket, std::string_view bytes, std::span<const int> fds, const std::string& what);

/// Receives one message (at most 64 KiB) and the descriptors attached to it, waiting at most
/// `timeout`. Received descriptors are close-on-exec and owned by `fds`. Throws Error(timeout)
/// when nothing came, Error(daemon_gone) when the peer closed, Error(system) otherwise.
std::string receive_with_fds(int socket, std::vector<UniqueFd>& fds, std::chrono::milliseconds timeout,
                             const std::string& what);

/// Duplicates descriptor `fd` of process `pid` into this one with pidfd_getfd(2). Needs ptrace
/// permission over `pid` (same user and kernel.yama.ptrace_scope 0, or CAP_SYS_PTRACE). Throws
/// Error(access) saying so when the kernel refuses, Error(system) for other failures.
UniqueFd take_fd_of(pid_t pid, int fd);

}  // namespace cuview
