// Where a daemon named NAME keeps its endpoints: $XDG_RUNTIME_DIR/cuview/NAME/ (mode 0700).
// A publisher decomposed into parts (MPI ranks) keeps one such set per part, in
// $XDG_RUNTIME_DIR/cuview/NAME/part-K/, all parts sharing NAME (docs/protocol.md "Parts").
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cuview/posix.hpp"

namespace cuview {

/// Throws Error(bad_value) unless `name` is 1-32 characters of [A-Za-z0-9_.-], not starting with '.'.
void validate_instance_name(const std::string& name);

/// $XDG_RUNTIME_DIR/cuview, or /tmp/cuview-UID when XDG_RUNTIME_DIR is unset. Does not create it.
std::filesystem::path runtime_root();

/// Paths of one instance, or of part `part` of a decomposed one. Pure computation: nothing is
/// created or checked.
struct InstancePaths {
  explicit InstancePaths(const std::string& name, std::optional<std::uint32_t> part = std::nullopt);
  std::string name;
  std::optional<std::uint32_t> part;  ///< part K of a decomposed publisher; empty: a whole one
  std::filesystem::path name_dir;     ///< .../cuview/NAME
  /// .../cuview/NAME/lock: a whole publisher holds it exclusively, every part of a decomposed one
  /// shared, so that a whole publisher and parts of one name exclude each other.
  std::filesystem::path name_lock;
  std::filesystem::path dir;       ///< .../cuview/NAME, or .../cuview/NAME/part-K for a part
  std::filesystem::path lock;      ///< held (flock) by the running daemon (the part)
  std::filesystem::path segments;  ///< shared-memory names of the running daemon, for clean-up after a crash
  std::filesystem::path control;   ///< ROUTER socket
  std::filesystem::path frames;    ///< PUB socket
  std::filesystem::path fds;       ///< descriptor socket (SOCK_SEQPACKET, SCM_RIGHTS)
  [[nodiscard]] std::string control_endpoint() const { return "ipc://" + control.string(); }
  [[nodiscard]] std::string frames_endpoint() const { return "ipc://" + frames.string(); }
  /// "'flow'" or "part 1 of 'flow'", for messages.
  [[nodiscard]] std::string who() const;
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
/// so a crashed daemon's lock is never stale and a live daemon's lock is never stolen). A part
/// also holds the name's lock shared.
class InstanceLock {
 public:
  /// Throws Error(already_running) if another process holds it (for a part: also when a whole
  /// publisher holds the name); the message ends with `rename`, how the caller picks another name
  /// in its own words (ApiWords::rename).
  explicit InstanceLock(const InstancePaths& paths, const std::string& rename = "pick another --name");
  /// True when some process holds the lock of `paths` (a daemon, or that part, is running).
  static bool is_held(const InstancePaths& paths);

 private:
  UniqueFd name_fd_, fd_;
};

/// A running instance: a whole publisher (parts 0, here empty) or a decomposed one (parts ≥ 1:
/// part-0 to part-(parts−1) are running on this host), of which `here` lists every part running on
/// this host (an MPI run over several hosts keeps only its own ranks' parts on each).
struct RunningInstance {
  std::string name;
  std::uint32_t parts = 0;
  std::vector<std::uint32_t> here{};
  bool operator==(const RunningInstance&) const = default;
};
/// Instances running now (their lock, or one of their parts', is held), sorted by name.
std::vector<RunningInstance> list_instances();
/// Their names.
std::vector<std::string> list_running_instances();
/// Parts of `name` running now, counted from part 0 (0: none, or a whole publisher).
std::uint32_t running_parts(const std::string& name);
/// Every part of `name` running on this host, in order (whatever the other hosts run).
std::vector<std::uint32_t> parts_here(const std::string& name);

/// How a gateway and its remote clients name one publisher: "NAME" for a whole one, "NAME/part-K"
/// for part K of a decomposed one (the same layout as the runtime directory's).
struct PublisherAddress {
  std::string name;
  std::optional<std::uint32_t> part;
  [[nodiscard]] std::string text() const;
};
/// Parses "NAME" or "NAME/part-K". Throws Error(bad_value) saying what an address looks like.
PublisherAddress parse_publisher_address(const std::string& address);

}  // namespace cuview
