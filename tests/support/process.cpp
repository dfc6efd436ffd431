#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "cuview/client.hpp"
#include "cuview/posix.hpp"
#include "cuview/runtime_dir.hpp"

extern char** environ;

namespace cuview::test {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

void fail(const std::string& what) { throw std::runtime_error(what); }

const char* to_string(Backend b) { return b == Backend::cuda ? "cuda" : "host"; }

std::string bin(const std::string& program) {
  // The build's own folder, unless the binaries were moved (the GPU host runs a bundle).
  const char* dir = std::getenv("CUVIEW_BIN_DIR");
  return std::string(dir != nullptr && *dir != '\0' ? dir : CUVIEW_BIN_DIR) + "/" + program;
}

static std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

static fs::path scratch(const std::string& stem) {
  static int counter = 0;
  return fs::temp_directory_path() /
         ("cuview-test-" + std::to_string(::getpid()) + "-" + std::to_string(++counter) + "-" + stem);
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, int pass_fd, bool own_group) : group_(own_group) {
  out_ = scratch("out");
  err_ = scratch("err");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (pass_fd >= 0) posix_spawn_file_actions_adddup2(&fa, pass_fd, pass_fd);  // clears FD_CLOEXEC (glibc ≥ 2.29)
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (own_group) {  // a process group of its own: the destructor ends its children too (mpirun's ranks)
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  }
  const int rc = ::posix_spawn(&pid_, args[0], &fa, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) fail("posix_spawn " + argv[0] + ": " + std::strerror(rc));
}

ChildProcess::ChildProcess(ChildProcess&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)),
      group_(o.group_),
      status_(o.status_),
      out_(std::move(o.out_)),
      err_(std::move(o.err_)) {}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && group_) ::kill(-pid_, SIGKILL);  // whatever of its group is left, even after it exited
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
  std::error_code ec;
  if (!out_.empty()) fs::remove(out_, ec);
  if (!err_.empty()) fs::remove(err_, ec);
}

void ChildProcess::signal(int sig) const {
  if (pid_ > 0 && !status_) ::kill(pid_, sig);
}

std::optional<int> ChildProcess::wait_for(std::chrono::milliseconds timeout) {
  if (status_) return status_;
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  if (pidfd >= 0) {
    pollfd p{pidfd, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(timeout.count()));
    ::close(pidfd);
  }
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) != pid_) return std::nullopt;
  status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return status_;
}

bool ChildProcess::running() { return !wait_for(0ms).has_value(); }
std::string ChildProcess::out() const { return read_file(out_); }
std::string ChildProcess::err() const { return read_file(err_); }

RuntimeDir::RuntimeDir() {
  path_ = scratch("xdg");
  fs::create_directories(path_);
  ::chmod(path_.c_str(), 0700);
  ::setenv("XDG_RUNTIME_DIR", path_.c_str(), 1);
  // Daemons write a final checkpoint when they stop: into the test's own directory, not ~.
  ::setenv("XDG_STATE_HOME", (path_ / "state").c_str(), 1);
}

RuntimeDir::~RuntimeDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

fs::path host_dir(const fs::path& dir) {
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all);
  return dir;
}

std::string gateway_url() {
  return "unix:" + (runtime_root() / ".gateway" / "gateway.sock").string();
}

ChildProcess start_gateway(std::vector<std::string> extra) {
  std::vector<std::string> argv{bin("cuview-gateway")};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const fs::path socket = runtime_root() / ".gateway" / "gateway.sock";
  std::error_code ec;
  fs::remove(socket, ec);
  ChildProcess g(argv);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!fs::exists(socket)) {
    if (!g.running()) fail("cuview-gateway exited before serving " + socket.string() + ": " + g.err());
    if (std::chrono::steady_clock::now() > deadline) fail("cuview-gateway did not serve " + socket.string() + " in 30 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return g;
}

cuview::Client attach(const std::string& name, const std::string& client) {
  AttachOptions o;
  o.name = name;
  o.client = client;
  return Client::attach(o);
}

ChildProcess start_daemon(const std::string& name, Backend backend, std::vector<std::string> extra,
                          const std::string& size) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) fail("pipe2 for --ready-fd: " + std::string(std::strerror(errno)));
  std::vector<std::string> argv{bin("cuview-compute"), "--name", name, "--backend",
                                to_string(backend),    "--size", size, "--ready-fd",
                                std::to_string(fds[1])};
  argv.insert(argv.end(), extra.begin(), extra.end());
  ChildProcess daemon(argv, fds[1]);
  ::close(fds[1]);
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (got.find("ready") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[64];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;  // the daemon exited (or closed the pipe) without saying ready
    got.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (got.find("ready") == std::string::npos) {
    (void)daemon.wait_for(2s);
    fail("cuview-compute " + name + " (" + to_string(backend) + ") did not become ready:\n" + daemon.err());
  }
  return daemon;
}

ChildProcess start_embed_wave(const std::string& name, Backend backend, const std::string& size) {
  ChildProcess wave({bin("embed-wave"), "--name", name, "--backend", to_string(backend), "--size", size});
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  for (;;) {
    try {
      if (stats(name).step > 0) return wave;  // running (nothing is published before a reader comes)
    } catch (const Error&) {
      // not answering yet
    }
    if (!wave.running())
      fail("embed-wave " + name + " (" + to_string(backend) + ") exited:\n" + wave.out() + wave.err());
    if (std::chrono::steady_clock::now() > deadline)
      fail("embed-wave " + name + " (" + to_string(backend) + ") did not publish within 60 s:\n" + wave.err());
    std::this_thread::sleep_for(50ms);
  }
}

Result ctl(const std::string& name, const std::vector<std::string>& args, std::chrono::milliseconds timeout) {
  std::vector<std::string> argv{bin("cuview-ctl"), "--name", name};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildProcess p(argv);
  auto code = p.wait_for(timeout);
  if (!code) fail("cuview-ctl did not finish within " + std::to_string(timeout.count()) + " ms:\n" + p.out() + p.err());
  return {*code, p.out(), p.err()};
}

StatsView stats(const std::string& name) {
  AttachOptions o;
  o.name = name;
  o.client = "test stats";
  o.import = Import::control_only;
  auto s = Client::attach(o).stats();
  StatsView v;
  v.step = s.step;
  v.frames_published = s.frames_published;
  v.frames_skipped = s.frames_skipped;
  v.rss_kib = s.rss_kib;
  v.clients = s.clients;
  v.readers = s.readers;
  v.held_slots = s.held_slots;
  v.paused = s.paused;
  v.session = s.session;
  v.backend = s.backend;
  v.params = s.params;
  if (auto f = s.params.find("F"); f != s.params.end()) v.F = f->second;
  return v;
}

StatsView wait_stats(const std::string& name, const std::function<bool(const StatsView&)>& pred,
                     std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  StatsView v = stats(name);
  while (!pred(v)) {
    if (std::chrono::steady_clock::now() > deadline)
      fail("daemon " + name + " did not reach the expected state within " + std::to_string(timeout.count()) +
           " ms: step " + std::to_string(v.step) + ", clients " + std::to_string(v.clients) + ", readers " +
           std::to_string(v.readers) + ", held slots " + std::to_string(v.held_slots) + ", frames " +
           std::to_string(v.frames_published));
    std::this_thread::sleep_for(20ms);  // polling an observable state, not waiting for time to pass
    v = stats(name);
  }
  return v;
}

bool cuda_usable(std::string* reason, int device) {
  static std::map<int, std::pair<bool, std::string>> cached;  // by device: one probe each
  auto it = cached.find(device);
  if (it == cached.end()) {
    ChildProcess p({bin("cuview-compute"), "--check-cuda", "--device", std::to_string(device)});
    auto code = p.wait_for(60s);
    it = cached.emplace(device, std::pair{code && *code == 0, p.out()}).first;
  }
  if (reason) *reason = it->second.second;
  return it->second.first;
}

bool shm_exists(const std::string& name) {
  const int fd = ::shm_open(name.c_str(), O_RDONLY, 0);
  if (fd >= 0) ::close(fd);
  return fd >= 0;
}

std::vector<std::string> segments_of(const std::string& name) {
  std::ifstream in(InstancePaths(name).segments);
  std::vector<std::string> out;
  for (std::string s; std::getline(in, s);) out.push_back(s);
  return out;
}

std::optional<int> skip_without_gpu(int argc, char** argv) {
  bool wants_gpu = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.find("[gpu]") != std::string::npos && a.find("~[gpu]") == std::string::npos) wants_gpu = true;
  }
  std::string reason;
  if (!wants_gpu || cuda_usable(&reason)) return std::nullopt;
  std::printf("SKIPPED: the [gpu] tests need a usable CUDA device: %s", reason.c_str());
  return 77;
}

}  // namespace cuview::test
