#include "cuview/runtime_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "cuview/error.hpp"

namespace cuview {
namespace fs = std::filesystem;

void validate_instance_name(const std::string& name) {
  const bool ok =
      !name.empty() && name.size() <= 32 && name.front() != '.' && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
               c == '.';
      });
  if (!ok)
    throw Error(
        Errc::bad_value,
        "instance name '" + name + "' is not valid: use 1-32 letters, digits, '_', '-' or '.', not starting with '.'");
}

fs::path runtime_root() {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  if (xdg != nullptr && *xdg != '\0') return fs::path(xdg) / "cuview";
  return fs::path("/tmp") / ("cuview-" + std::to_string(::getuid()));
}

InstancePaths::InstancePaths(const std::string& n, std::optional<std::uint32_t> k) : name(n), part(k) {
  validate_instance_name(n);
  name_dir = runtime_root() / n;
  name_lock = name_dir / "lock";
  dir = k ? name_dir / ("part-" + std::to_string(*k)) : name_dir;
  lock = dir / "lock";
  segments = dir / "segments";
  control = dir / "control";
  frames = dir / "frames";
  fds = dir / "fds";
}

std::string InstancePaths::who() const {
  return part ? "part " + std::to_string(*part) + " of '" + name + "'" : "'" + name + "'";
}

namespace {
std::string mode_string(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

void check_stat(const fs::path& dir, const struct stat& st) {
  if (!S_ISDIR(st.st_mode))
    throw Error(Errc::access, dir.string() + " is not a directory; remove it so that cuview can create its own");
  if (st.st_uid != ::getuid())
    throw Error(Errc::access, dir.string() + " belongs to uid " + std::to_string(st.st_uid) + ", not to you (uid " +
                                  std::to_string(::getuid()) +
                                  "); cuview only uses its own user's directories and attaches only to its own "
                                  "user's daemons. Set XDG_RUNTIME_DIR to a directory of your own");
  if ((st.st_mode & 077) != 0)
    throw Error(Errc::access, dir.string() + " has mode " + mode_string(st.st_mode) +
                                  ", which lets other users in; run `chmod 700 " + dir.string() + "` and start again");
}
}  // namespace

void ensure_private_dir(const fs::path& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    if (errno == EACCES)
      throw Error(Errc::access, "cannot create " + dir.string() +
                                    ": permission denied; its parent belongs to "
                                    "another user. Set XDG_RUNTIME_DIR to a directory of your own");
    throw_errno("creating directory " + dir.string(), errno);
  }
  if (!check_private_dir(dir)) throw_errno("checking directory " + dir.string(), ENOENT);
}

bool check_private_dir(const fs::path& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;
    if (errno == EACCES)
      throw Error(Errc::access, "cannot enter " + dir.string() +
                                    ": permission denied; it belongs to another user, and cuview attaches only to "
                                    "its own user's daemons");
    throw_errno("checking directory " + dir.string(), errno);
  }
  check_stat(dir, st);
  return true;
}

namespace {
/// flock(2) without waiting, tried for up to ~100 ms: another process's is_held() probe holds a
/// shared lock for an instant, which must not make a start fail.
bool try_flock(int fd, int op) {
  for (int i = 0;; ++i) {
    if (::flock(fd, op | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK || i == 20) return false;
    ::usleep(5000);
  }
}
}  // namespace

InstanceLock::InstanceLock(const InstancePaths& paths, const std::string& rename) {
  if (paths.part) {
    // Shared on the name: every part of this run may hold it, a whole publisher may not.
    name_fd_ = UniqueFd(::open(paths.name_lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!name_fd_) throw_errno("opening lock file " + paths.name_lock.string(), errno);
    if (!try_flock(name_fd_.get(), LOCK_SH)) {
      if (errno == EWOULDBLOCK)
        throw Error(Errc::already_running,
                    "a publisher named '" + paths.name +
                        "' (cuview-compute or a program) is already running as a whole (it holds " +
                        paths.name_lock.string() + "), so " + paths.who() +
                        " cannot start; stop it with `cuview-ctl --name " + paths.name + " shutdown` or " + rename);
      throw_errno("locking " + paths.name_lock.string(), errno);
    }
  }
  fd_ = UniqueFd(::open(paths.lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd_) throw_errno("opening lock file " + paths.lock.string(), errno);
  if (!try_flock(fd_.get(), LOCK_EX)) {
    if (errno == EWOULDBLOCK) {
      if (paths.part)
        throw Error(Errc::already_running, paths.who() + " is already running (it holds " + paths.lock.string() +
                                               "); stop that run with `cuview-ctl --name " + paths.name +
                                               " shutdown` or " + rename);
      throw Error(Errc::already_running,
                  "a publisher named '" + paths.name + "' (cuview-compute or a program) is already running (it holds " +
                      paths.lock.string() + (running_parts(paths.name) > 0 ? ", as parts of an MPI run" : "") +
                      "); stop it with `cuview-ctl --name " + paths.name + " shutdown` or " + rename);
    }
    throw_errno("locking " + paths.lock.string(), errno);
  }
  // The lock file is never unlinked: unlinking a flock()ed file lets two processes lock two inodes.
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_.get(), 0) == 0) (void)!::pwrite(fd_.get(), pid.data(), pid.size(), 0);
}

bool InstanceLock::is_held(const InstancePaths& paths) {
  UniqueFd fd(::open(paths.lock.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return false;
  if (::flock(fd.get(), LOCK_SH | LOCK_NB) == 0) return false;  // nobody holds it; our shared lock goes with fd
  return errno == EWOULDBLOCK;
}

std::uint32_t running_parts(const std::string& name) {
  std::uint32_t k = 0;
  while (InstanceLock::is_held(InstancePaths(name, k))) ++k;
  return k;
}

namespace {
/// K of "part-K" (decimal, no leading zero, at most 2^32 − 1): a part's directory and address.
std::optional<std::uint32_t> part_index_of(const std::string& s) {
  if (s.size() < 6 || s.size() > 15 || s.rfind("part-", 0) != 0 || (s.size() > 6 && s[5] == '0') ||
      !std::all_of(s.begin() + 5, s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const auto k = std::stoull(s.substr(5));
  if (k > 0xffffffffull) return std::nullopt;
  return static_cast<std::uint32_t>(k);
}
}  // namespace

std::vector<std::uint32_t> parts_here(const std::string& name) {
  std::vector<std::uint32_t> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(InstancePaths(name).name_dir, ec))
    if (const auto k = part_index_of(entry.path().filename().string());
        k && InstanceLock::is_held(InstancePaths(name, *k)))
      out.push_back(*k);
  std::sort(out.begin(), out.end());
  return out;
}

std::string PublisherAddress::text() const { return part ? name + "/part-" + std::to_string(*part) : name; }

PublisherAddress parse_publisher_address(const std::string& address) {
  const auto slash = address.find('/');
  PublisherAddress a;
  a.name = address.substr(0, slash);
  auto refuse = [&] {
    throw Error(Errc::bad_value, "publisher address '" + address +
                                     "' is not valid: it is NAME (1-32 letters, digits, '_', '-' or '.') or "
                                     "NAME/part-K for part K of a run of parts");
  };
  try {
    validate_instance_name(a.name);
  } catch (const Error&) {
    refuse();
  }
  if (slash == std::string::npos) return a;
  a.part = part_index_of(address.substr(slash + 1));
  if (!a.part) refuse();
  return a;
}

std::vector<RunningInstance> list_instances() {
  std::vector<RunningInstance> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(runtime_root(), ec)) {
    const std::string n = entry.path().filename().string();
    try {
      if (!entry.is_directory()) continue;
      // The name's lock is held exclusively by a whole publisher and shared by parts: a shared
      // probe fails only for the former. Parts are recognised by their own locks.
      if (InstanceLock::is_held(InstancePaths(n)))
        out.push_back({n, 0, {}});
      else if (auto here = parts_here(n); !here.empty())
        out.push_back({n, running_parts(n), std::move(here)});
    } catch (const Error&) {
      // not an instance directory (invalid name): ignore
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

std::vector<std::string> list_running_instances() {
  std::vector<std::string> names;
  for (auto& i : list_instances()) names.push_back(std::move(i.name));
  return names;
}

}  // namespace cuview
