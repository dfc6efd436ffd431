// Move-only owners of the operating-system resources cuview uses: file descriptors, POSIX
// shared-memory segments and their mappings, process descriptors. Each releases exactly once;
// a moved-from object owns nothing and releases nothing.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "cuview/unique_handle.hpp"

namespace cuview {

struct FdTraits {
  using handle_type = int;
  static constexpr int null() noexcept { return -1; }
  static void close(int fd) noexcept;  // ::close, its error ignored
};
/// Owns one file descriptor, closed when the owner goes (never throws). Not thread-safe.
using UniqueFd = UniqueHandle<FdTraits>;

/// Whether a segment this object created is removed from /dev/shm when the owner goes.
enum class Unlink { on_destroy, never };
enum class Access { read_only, read_write };

/// A mapped POSIX shared-memory segment (mode 0600). The creator names it with an unguessable
/// name and unlinks it on destruction; openers only unmap.
class SharedMemory {
 public:
  SharedMemory() noexcept = default;
  /// Creates a new segment named "/cuview-<uid>-<128 random bits>" of `size` bytes, zeroed.
  /// Throws Error(system) naming the segment when shm_open/ftruncate/mmap fail.
  static SharedMemory create(std::size_t size, Unlink unlink = Unlink::on_destroy);
  /// Maps an existing segment; checks it is ours (owner uid, mode 0600) and at least `size` bytes.
  /// Throws Error(no_daemon) if it no longer exists, Error(access) if its owner or mode is wrong.
  static SharedMemory open(const std::string& name, std::size_t size, Access access);

  SharedMemory(SharedMemory&& other) noexcept;
  SharedMemory& operator=(SharedMemory&& other) noexcept;
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;
  ~SharedMemory();  // munmap, and shm_unlink if this object created it; never throws

  [[nodiscard]] void* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] explicit operator bool() const noexcept { return data_ != nullptr; }

 private:
  void reset() noexcept;
  std::string name_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
  bool unlink_ = false;
};

/// A Linux process descriptor (pidfd): becomes readable when the process exits and, unlike a
/// pid, never names a different process later.
class ProcessHandle {
 public:
  ProcessHandle() noexcept = default;
  /// Throws Error(bad_value) if no process `pid` exists, Error(system) for other failures.
  explicit ProcessHandle(pid_t pid);
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  [[nodiscard]] int fd() const noexcept { return fd_.get(); }
  [[nodiscard]] explicit operator bool() const noexcept { return static_cast<bool>(fd_); }
  /// True once the process has exited (never blocks).
  [[nodiscard]] bool exited() const;

 private:
  UniqueFd fd_;
  pid_t pid_ = -1;
};

/// 2n lower-case hex characters from the kernel's random source.
std::string random_hex(std::size_t bytes);

/// CLOCK_MONOTONIC in nanoseconds: comparable between processes on one host.
std::int64_t monotonic_ns() noexcept;
/// CLOCK_REALTIME in nanoseconds since the Unix epoch.
std::int64_t realtime_ns() noexcept;

/// Futex wait on a 32-bit word in shared memory: returns when *word != expected, when woken,
/// or after `timeout`. Spurious returns are allowed; callers re-check their condition.
void futex_wait(const void* word, std::uint32_t expected, std::chrono::nanoseconds timeout) noexcept;
/// Wakes every waiter on `word` in any process.
void futex_wake_all(const void* word) noexcept;

/// Resident set size of this process in KiB (from /proc/self/statm), 0 if unavailable.
std::uint64_t resident_kib() noexcept;

}  // namespace cuview
