// Test support, shared by the Catch2 suites and the fault campaign (no Catch2 in here: failures
// throw std::runtime_error with the whole story). Real child processes (posix_spawn, never fork after CUDA init), a
// private runtime directory per test, and helpers to start a daemon and run cuview-ctl.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cuview/client.hpp"

namespace cuview::test {

enum class Backend { host, cuda };
/// Throws std::runtime_error(what).
[[noreturn]] void fail(const std::string& what);
const char* to_string(Backend b);

/// One child process. Its stdout and stderr go to files; the destructor SIGKILLs and reaps it
/// if it still runs.
class ChildProcess {
 public:
  /// `pass_fd` is inherited by the child under the same number (e.g. a --ready-fd pipe).
  /// `own_group`: the child leads a new process group, which the destructor SIGKILLs whole (a
  /// launcher's children, such as mpirun's ranks, go with it).
  explicit ChildProcess(const std::vector<std::string>& argv, int pass_fd = -1, bool own_group = false);
  ChildProcess(ChildProcess&& o) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ~ChildProcess();

  [[nodiscard]] pid_t pid() const { return pid_; }
  void signal(int sig) const;
  /// Exit code (128 + signal when killed), or empty if still running after `timeout`.
  std::optional<int> wait_for(std::chrono::milliseconds timeout);
  [[nodiscard]] bool running();
  [[nodiscard]] std::string out() const;
  [[nodiscard]] std::string err() const;

 private:
  pid_t pid_ = -1;
  bool group_ = false;
  std::optional<int> status_;
  std::filesystem::path out_, err_;
};

/// Creates a fresh 0700 directory and points XDG_RUNTIME_DIR at it, and XDG_STATE_HOME (where
/// checkpoints go) at its `state` folder, for this process and its children; removes it on
/// destruction.
class RuntimeDir {
 public:
  RuntimeDir();
  ~RuntimeDir();
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string bin(const std::string& program);

/// Runs `f` with XDG_RUNTIME_DIR at `dir` (what a process on another host sees: a run of parts over
/// "hosts" played on one machine), then sets it back, and returns what `f` returned.
template <class F>
auto on_host(const std::filesystem::path& dir, F&& f) {
  const char* now = std::getenv("XDG_RUNTIME_DIR");
  struct Back {
    std::string home;
    bool had;
    ~Back() { had ? (void)::setenv("XDG_RUNTIME_DIR", home.c_str(), 1) : (void)::unsetenv("XDG_RUNTIME_DIR"); }
  } back{now ? now : "", now != nullptr};
  ::setenv("XDG_RUNTIME_DIR", dir.c_str(), 1);
  return f();
}

/// Sets an environment variable (for the processes this test starts), restoring it afterwards.
struct ScopedEnv {
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  const char* name_;
  std::optional<std::string> old_;
};

/// Creates `dir` (0700): the runtime directory of one of the "hosts" of such a test.
std::filesystem::path host_dir(const std::filesystem::path& dir);

/// A client of the daemon `name` that imports its frames (the client library, in this process).
cuview::Client attach(const std::string& name, const std::string& client = "integration test");

/// Starts cuview-compute and returns once it wrote "ready" on its --ready-fd (fails the test,
/// with the daemon's log, if it exits first or takes longer than 60 s).
ChildProcess start_daemon(const std::string& name, Backend backend, std::vector<std::string> extra = {},
                          const std::string& size = "128x128");

/// Starts examples/embed-wave (a program embedding the publisher) and returns once it published
/// a frame (fails the test, with its output, if it exits first or takes longer than 60 s).
ChildProcess start_embed_wave(const std::string& name, Backend backend, const std::string& size = "128x96");

/// Starts cuview-gateway (in this test's runtime directory) and returns once its socket exists.
ChildProcess start_gateway(std::vector<std::string> extra = {});
/// The gateway's socket as a client's URL: unix:$XDG_RUNTIME_DIR/cuview/.gateway/gateway.sock.
std::string gateway_url();

struct Result {
  int code = -1;
  std::string out, err;
};
/// Runs cuview-ctl --name NAME ARGS... to completion (at most `timeout`).
Result ctl(const std::string& name, const std::vector<std::string>& args,
           std::chrono::milliseconds timeout = std::chrono::seconds(120));

/// Polls `cuview-ctl status --json` through the client library until `pred` holds; the last
/// stats are returned. Fails the test after `timeout`.
struct StatsView {
  std::uint64_t step = 0, frames_published = 0, rss_kib = 0, frames_skipped = 0;
  std::uint32_t clients = 0, readers = 0, held_slots = 0;
  bool paused = false;
  std::string session, backend;
  double F = 0;                          ///< Gray–Scott's feed rate (0 for other simulations)
  std::map<std::string, double> params;  ///< every parameter
};
StatsView stats(const std::string& name);
StatsView wait_stats(const std::string& name, const std::function<bool(const StatsView&)>& pred,
                     std::chrono::milliseconds timeout = std::chrono::seconds(30));

/// Whether a POSIX shared-memory segment of that name exists (and this user may open it).
bool shm_exists(const std::string& name);
/// The shared-memory segments the running daemon `name` listed in its runtime directory.
std::vector<std::string> segments_of(const std::string& name);

/// For a test runner's main(): 77 (CTest's "skipped") when the selection asks for [gpu] tests and
/// no CUDA device is usable here, after saying why; empty otherwise.
std::optional<int> skip_without_gpu(int argc, char** argv);

/// Whether `cuview-compute --check-cuda --device N` says the CUDA backend can run on GPU `device`;
/// `reason` gets its words.
bool cuda_usable(std::string* reason = nullptr, int device = 0);

}  // namespace cuview::test
