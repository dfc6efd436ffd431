#include "remote/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <thread>

#include "cuview/error.hpp"

extern char** environ;

namespace cuview::remote {
using Clock = std::chrono::steady_clock;

ChildProcess ChildProcess::spawn(const std::vector<std::string>& argv) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw_errno("pipe for the output of " + argv.at(0), errno);
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]), ::close(out[1]);
    throw_errno("pipe for the errors of " + argv.at(0), errno);
  }
  ChildProcess c;
  c.out_fd_ = UniqueFd(out[0]);
  c.err_fd_ = UniqueFd(err[0]);
  UniqueFd out_w(out[1]), err_w(err[1]);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group, so that a Ctrl-C at the user's terminal reaches the program that
  // started it (which decides) rather than tearing down the forwarding under it.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0], &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw_errno("starting " + argv[0], rc);
  ::fcntl(c.out_fd_.get(), F_SETFL, O_NONBLOCK);
  ::fcntl(c.err_fd_.get(), F_SETFL, O_NONBLOCK);
  c.pid_ = pid;
  return c;
}

ChildProcess::ChildProcess(ChildProcess&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)), status_(o.status_), out_fd_(std::move(o.out_fd_)),
      err_fd_(std::move(o.err_fd_)), out_(std::move(o.out_)), err_(std::move(o.err_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& o) noexcept {
  if (this != &o) {
    stop();
    pid_ = std::exchange(o.pid_, -1);
    status_ = o.status_;
    out_fd_ = std::move(o.out_fd_);
    err_fd_ = std::move(o.err_fd_);
    out_ = std::move(o.out_);
    err_ = std::move(o.err_);
  }
  return *this;
}

ChildProcess::~ChildProcess() { stop(); }

void ChildProcess::drain(int timeout_ms) {
  pollfd fds[2] = {{out_fd_.get(), POLLIN, 0}, {err_fd_.get(), POLLIN, 0}};
  if (::poll(fds, 2, timeout_ms) <= 0) return;
  char buf[4096];
  for (int i = 0; i < 2; ++i) {
    if (fds[i].fd < 0) continue;
    for (;;) {
      const auto n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) break;
      auto& s = i == 0 ? out_ : err_;
      if (s.size() < 1 << 20) s.append(buf, static_cast<std::size_t>(n));
    }
  }
}

std::optional<int> ChildProcess::exit_status() {
  if (status_ || pid_ < 0) return status_;
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) == pid_) {
    drain(0);
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  return status_;
}

std::optional<int> ChildProcess::wait(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!exit_status()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return std::nullopt;
    drain(static_cast<int>(std::min<long long>(left, 20)));
  }
  drain(0);
  return status_;
}

const std::string& ChildProcess::out() {
  drain(0);
  return out_;
}
const std::string& ChildProcess::err() {
  drain(0);
  return err_;
}

void ChildProcess::stop() noexcept {
  if (pid_ < 0 || exit_status()) return;  // never signal a group whose leader is long gone
  // The whole process group it leads: `sh -c "ssh ..."` without `exec` leaves ssh a child of sh,
  // and killing sh alone would orphan ssh (re-parented to init, forwarding for ever).
  const pid_t group = pid_;
  const auto group_alive = [group] { return ::kill(-group, 0) == 0 || errno != ESRCH; };
  ::kill(-group, SIGTERM);
  for (int i = 0; i < 50 && (!exit_status() || group_alive()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (group_alive()) ::kill(-group, SIGKILL);
  if (!exit_status()) {
    int st = 0;
    ::waitpid(pid_, &st, 0);
    status_ = 128 + SIGKILL;
  }
}

std::vector<std::string> ssh_command_line(const std::vector<std::string>& args) {
  const char* custom = std::getenv("CUVIEW_SSH_COMMAND");
  std::vector<std::string> argv;
  if (custom != nullptr && *custom != '\0') {
    argv = {"/bin/sh", "-c", std::string(custom) + " \"$@\"", "cuview-ssh"};
  } else {
    argv = {"ssh"};
  }
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace cuview::remote
