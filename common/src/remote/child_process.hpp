// A program this library starts (the user's ssh), owned: stopped (SIGTERM, then SIGKILL) and
// reaped when its owner goes. Started with posix_spawn, which is safe in a threaded process; no
// signal handler of the caller is touched.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cuview/posix.hpp"

namespace cuview::remote {

class ChildProcess {
 public:
  ChildProcess() noexcept = default;
  /// Runs `argv` (argv[0] looked up on PATH) with stdin from /dev/null, stdout and stderr into
  /// pipes this object reads. Throws Error(system) naming the program when it cannot start.
  static ChildProcess spawn(const std::vector<std::string>& argv);
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  /// The exit status once it has exited (never blocks): the code, or 128 + signal.
  [[nodiscard]] std::optional<int> exit_status();
  /// Waits until it exits, reading its output meanwhile; empty after `timeout`.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  /// What it wrote so far (reads what is pending without blocking).
  const std::string& out();
  const std::string& err();
  /// SIGTERM, then SIGKILL after 500 ms; reaps it.
  void stop() noexcept;

 private:
  void drain(int timeout_ms);
  pid_t pid_ = -1;
  std::optional<int> status_;
  UniqueFd out_fd_, err_fd_;
  std::string out_, err_;
};

/// The user's ssh as a command line: $CUVIEW_SSH_COMMAND (run by sh, as git runs
/// $GIT_SSH_COMMAND) or plain `ssh`, followed by `args`.
std::vector<std::string> ssh_command_line(const std::vector<std::string>& args);

}  // namespace cuview::remote
