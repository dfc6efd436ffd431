#include "cuview/posix.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <ctime>

#include "cuview/error.hpp"

namespace cuview {

void FdTraits::close(int fd) noexcept { (void)::close(fd); }

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  std::size_t got = 0;
  while (got < bytes) {
    ssize_t n = ::getrandom(raw.data() + got, bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("getrandom for a segment or session name", errno);
    }
    got += static_cast<std::size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes * 2);
  for (unsigned char c : raw) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

SharedMemory SharedMemory::create(std::size_t size, Unlink unlink) {
  SharedMemory shm;
  shm.name_ = "/cuview-" + std::to_string(::getuid()) + "-" + random_hex(16);
  UniqueFd fd(::shm_open(shm.name_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd) throw_errno("creating shared-memory segment " + shm.name_, errno);
  shm.unlink_ = unlink == Unlink::on_destroy;
  // From here the destructor of `shm` unlinks the name if anything below throws.
  if (::fchmod(fd.get(), 0600) != 0) throw_errno("chmod 0600 on " + shm.name_, errno);
  if (::ftruncate(fd.get(), static_cast<off_t>(size)) != 0)
    throw_errno("sizing shared-memory segment " + shm.name_ + " to " + std::to_string(size) + " bytes", errno);
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) throw_errno("mapping shared-memory segment " + shm.name_, errno);
  shm.data_ = p;
  shm.size_ = size;
  return shm;
}

SharedMemory SharedMemory::open(const std::string& name, std::size_t size, Access access) {
  const int oflag = (access == Access::read_write ? O_RDWR : O_RDONLY) | O_CLOEXEC;
  UniqueFd fd(::shm_open(name.c_str(), oflag, 0));
  if (!fd) {
    if (errno == ENOENT)  // its daemon was there (it named the segment) and went: gone, not absent
      throw Error(Errc::daemon_gone, "shared-memory segment " + name +
                                       " no longer exists: the daemon that published it has exited; attach again");
    throw_errno("opening shared-memory segment " + name, errno);
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) throw_errno("fstat on shared-memory segment " + name, errno);
  if (st.st_uid != ::getuid() || (st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw Error(Errc::access, "shared-memory segment " + name + " is owned by uid " + std::to_string(st.st_uid) +
                                  " with mode " + mode + "; cuview only maps segments of its own user with mode 0600");
  }
  if (static_cast<std::size_t>(st.st_size) < size)
    throw Error(Errc::bad_value, "shared-memory segment " + name + " holds " + std::to_string(st.st_size) +
                                     " bytes, the daemon described " + std::to_string(size));
  const int prot = access == Access::read_write ? PROT_READ | PROT_WRITE : PROT_READ;
  void* p = ::mmap(nullptr, size, prot, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) throw_errno("mapping shared-memory segment " + name, errno);
  SharedMemory shm;
  shm.name_ = name;
  shm.data_ = p;
  shm.size_ = size;
  shm.unlink_ = false;
  return shm;
}

SharedMemory::SharedMemory(SharedMemory&& other) noexcept
    : name_(std::move(other.name_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      unlink_(std::exchange(other.unlink_, false)) {
  other.name_.clear();
}

SharedMemory& SharedMemory::operator=(SharedMemory&& other) noexcept {
  if (this != &other) {
    reset();
    name_ = std::exchange(other.name_, {});
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    unlink_ = std::exchange(other.unlink_, false);
  }
  return *this;
}

SharedMemory::~SharedMemory() { reset(); }

void SharedMemory::reset() noexcept {
  if (data_ != nullptr) ::munmap(data_, size_);
  if (unlink_ && !name_.empty()) ::shm_unlink(name_.c_str());
  data_ = nullptr;
  size_ = 0;
  unlink_ = false;
  name_.clear();
}

ProcessHandle::ProcessHandle(pid_t pid) : pid_(pid) {
  if (pid <= 0) throw Error(Errc::bad_value, "pid " + std::to_string(pid) + " is not a valid process id");
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) {
    if (errno == ESRCH) throw Error(Errc::bad_value, "no process with pid " + std::to_string(pid) + " is running");
    throw_errno("pidfd_open(" + std::to_string(pid) + ")", errno);
  }
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  fd_ = UniqueFd(fd);
}

bool ProcessHandle::exited() const {
  if (!fd_) return true;
  pollfd p{fd_.get(), POLLIN, 0};
  int rc = ::poll(&p, 1, 0);
  return rc > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}

static std::int64_t clock_ns(clockid_t id) noexcept {
  timespec ts{};
  ::clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
std::int64_t monotonic_ns() noexcept { return clock_ns(CLOCK_MONOTONIC); }
std::int64_t realtime_ns() noexcept { return clock_ns(CLOCK_REALTIME); }

void futex_wait(const void* word, std::uint32_t expected, std::chrono::nanoseconds timeout) noexcept {
  const auto ns = timeout.count() < 0 ? 0 : timeout.count();
  timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  // Not FUTEX_PRIVATE_FLAG: the word lives in memory shared between processes.
  ::syscall(SYS_futex, word, FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake_all(const void* word) noexcept { ::syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0); }

std::uint64_t resident_kib() noexcept {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0, resident = 0;
  const int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  if (n != 2) return 0;
  return static_cast<std::uint64_t>(resident) * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / 1024;
}

}  // namespace cuview
