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

InstancePaths::InstancePaths(const std::string& n) : name(n) {
  validate_instance_name(n);
  dir = runtime_root() / n;
  lock = dir / "lock";
  segments = dir / "segments";
  control = dir / "control";
  frames = dir / "frames";
  fds = dir / "fds";
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

InstanceLock::InstanceLock(const InstancePaths& paths) {
  fd_ = UniqueFd(::open(paths.lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd_) throw_errno("opening lock file " + paths.lock.string(), errno);
  if (::flock(fd_.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK)
      throw Error(Errc::already_running, "a cuview-compute daemon named '" + paths.name +
                                             "' is already running (it holds " + paths.lock.string() +
                                             "); stop it with `cuview-ctl --name " + paths.name +
                                             " shutdown` or pick another --name");
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

std::vector<std::string> list_running_instances() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(runtime_root(), ec)) {
    const std::string n = entry.path().filename().string();
    try {
      if (entry.is_directory() && InstanceLock::is_held(InstancePaths(n))) names.push_back(n);
    } catch (const Error&) {
      // not an instance directory (invalid name): ignore
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace cuview
