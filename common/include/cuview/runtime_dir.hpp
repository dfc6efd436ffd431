// Where a daemon named NAME keeps its endpoints: $XDG_RUNTIME_DIR/cuview/NAME/ (mode 0700).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cuview/posix.hpp"

namespace cuview {

/// Throws Error(bad_value) unless `name` is 1-32 characters of [A-Za-z0-9_.-], not starting with '.'.
void validate_instance_name(const std::string& name);

/// $XDG_RUNTIME_DIR/cuview, or /tmp/cuview-UID when XDG_RUNTIME_DIR is unset. Does not create it.
std::filesystem::path runtime_root();

/// Paths of one instance. Pure computation: nothing is created or checked.
struct InstancePaths {
  explicit InstancePaths(const std::string& name);
  std::string name;
  std::filesystem::path dir;       ///< .../cuview/NAME
  std::filesystem::path lock;      ///< held (flock) by the running daemon
  std::filesystem::path segments;  ///< shared-memory names of the running daemon, for clean-up after a crash
  std::filesystem::path control;   ///< ROUTER socket
  std::filesystem::path frames;    ///< PUB socket
  std::filesystem::path fds;       ///< descriptor socket (SOCK_SEQPACKET, SCM_RIGHTS)
  [[nodiscard]] std::string control_endpoint() const { return "ipc://" + control.string(); }
  [[nodiscard]] std::string frames_endpoint() const { return "ipc://" + frames.string(); }
};

/// Creates (0700) or checks a private directory: it must be a real directory, owned by this user,
/// with no group or world permission bits. Throws Error(access) naming the path, its owner and
/// mode, and the command that fixes it.
void ensure_private_dir(const std::filesystem::path& dir);

/// The client's check, which creates nothing: false when `dir` does not exist; true when it is a
/// private directory of this user; otherwise throws Error(access) — for a directory another user
/// owns or that this user cannot enter, saying that cuview only attaches to one's own daemons.
bool check_private_dir(const std::filesystem::path& dir);

/// Exclusive lock on an instance's lock file (flock, released by the kernel when the holder dies,
/// so a crashed daemon's lock is never stale and a live daemon's lock is never stolen).
class InstanceLock {
 public:
  /// Throws Error(already_running) if another process holds it.
  explicit InstanceLock(const InstancePaths& paths);
  /// True when some process holds the lock of `paths` (a daemon is running under that name).
  static bool is_held(const InstancePaths& paths);

 private:
  UniqueFd fd_;
};

/// Names of instances whose daemon is running now (their lock is held), sorted.
std::vector<std::string> list_running_instances();

}  // namespace cuview
