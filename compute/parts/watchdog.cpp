#include "parts/watchdog.hpp"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

namespace cuview::parts {

namespace {
std::string this_host() {
  char buf[256] = {};
  (void)::gethostname(buf, sizeof buf - 1);
  return buf;
}
}  // namespace

Watchdog::Watchdog(Comm& comm, std::function<void(const std::string&)> on_death)
    : on_death_(std::move(on_death)), stop_(::eventfd(0, EFD_CLOEXEC)) {
  const std::string host = this_host();
  const auto all = comm.allgather(std::to_string(::getpid()) + " " + host);
  for (int r = 0; r < static_cast<int>(all.size()); ++r) {
    if (r == comm.rank()) continue;
    const auto space = all[r].find(' ');
    const pid_t pid = static_cast<pid_t>(std::atoi(all[r].substr(0, space).c_str()));
    const std::string peer_host = all[r].substr(space + 1);
    if (peer_host != host) continue;
    UniqueFd fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (!fd) {
      spdlog::warn("cannot watch rank {} (pid {}): pidfd_open failed; a death of it is left to mpirun", r, pid);
      continue;
    }
    peers_.push_back({r, pid, peer_host, std::move(fd)});
  }
  thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  finishing();
  const std::uint64_t one = 1;
  (void)!::write(stop_.get(), &one, sizeof one);
  if (thread_.joinable()) thread_.join();
}

void Watchdog::watch() {
  std::vector<pollfd> fds{{stop_.get(), POLLIN, 0}};
  for (const auto& p : peers_) fds.push_back({p.pidfd.get(), POLLIN, 0});
  for (;;) {
    if (::poll(fds.data(), fds.size(), -1) < 0) continue;
    if (fds[0].revents != 0) return;
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      // At the normal end every rank says finishing() before the last collective, so a rank that
      // exits after it is never mourned. Otherwise be quick: mpirun ends the others soon too.
      if (finishing_.load()) return;
      const Peer& p = peers_[i - 1];
      const std::string reason = "rank " + std::to_string(p.rank) + " (pid " + std::to_string(p.pid) + " on " +
                                 p.host + ") died; the run cannot go on without it";
      on_death_(reason);
      spdlog::error("{}: ending this rank", reason);
      ::_exit(1);
    }
  }
}

}  // namespace cuview::parts
