#include "ssh_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "cuview/posix.hpp"

namespace cuview::test {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr const char* kHostAlias = "cuview-test-host";
constexpr int kStartAttempts = 5;

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

/// Debian's program, else the first on PATH (a host without openssh-server may carry its own,
/// as the GPU machines' bundle does); sshd must be run by its absolute path to re-exec itself.
fs::path program(const fs::path& debian) {
  if (::access(debian.c_str(), X_OK) == 0) return debian;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path p = fs::absolute(fs::path(dir.empty() ? "." : dir) / debian.filename());
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return debian;
}
const fs::path& sshd_program() {
  static const fs::path p = program("/usr/sbin/sshd");
  return p;
}
const fs::path& keygen_program() {
  static const fs::path p = program("/usr/bin/ssh-keygen");
  return p;
}

void write_file(const fs::path& file, const std::string& text, mode_t mode) {
  {
    std::ofstream out(file, std::ios::trunc);
    out << text;
    if (!out) fail("cannot write " + file.string());
  }
  ::chmod(file.c_str(), mode);
}

std::string read_file(const fs::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), {}};
}

void keygen(const fs::path& file, const std::string& comment) {
  ChildProcess p({keygen_program().string(), "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", file.string()});
  const auto code = p.wait_for(30s);
  if (code != 0) fail("ssh-keygen for " + file.string() + " failed:\n" + p.out() + p.err());
}

/// A port of 127.0.0.1 free a moment ago (the kernel's pick for port 0).
int free_port() {
  UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (!s || ::bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(s.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0)
    fail("cannot find a free port on 127.0.0.1");
  return ntohs(a.sin_port);
}

bool accepts_connections(int port) {
  UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return s && ::connect(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
}

std::string user_name() {
  const passwd* pw = ::getpwuid(::geteuid());
  if (pw == nullptr) fail("no passwd entry for uid " + std::to_string(::geteuid()) + ": sshd cannot log it in");
  return pw->pw_name;
}

/// The processes below `root` that have no children of their own (from /proc's parent links).
std::vector<pid_t> leaves_below(pid_t root) {
  std::multimap<pid_t, pid_t> children;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string stat;
    try {
      stat = read_file(entry.path() / "stat");
    } catch (const std::exception&) {
      continue;  // it exited while being read (ESRCH): not below anyone any more
    }
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    char state = 0;
    pid_t parent = 0;
    fields >> state >> parent;
    children.emplace(parent, static_cast<pid_t>(std::stol(name)));
  }
  std::vector<pid_t> below{root}, leaves;
  for (std::size_t i = 0; i < below.size(); ++i) {
    const auto [begin, end] = children.equal_range(below[i]);
    if (begin == end && i > 0) leaves.push_back(below[i]);
    for (auto it = begin; it != end; ++it) below.push_back(it->second);
  }
  return leaves;
}

bool gone(pid_t pid) { return !fs::exists("/proc/" + std::to_string(pid)); }

}  // namespace

SshServer::SshServer(SshServerOptions options) {
  if (::access(sshd_program().c_str(), X_OK) != 0 || ::access(keygen_program().c_str(), X_OK) != 0)
    fail("sshd or ssh-keygen is missing (not at /usr/sbin/sshd and /usr/bin/ssh-keygen, nor on PATH): install "
         "openssh-server (scripts/install-deps.sh)");
  // sshd running as root wants its privilege-separation directory.
  if (::geteuid() == 0 && ::mkdir("/run/sshd", 0755) != 0 && errno != EEXIST)
    fail("cannot create /run/sshd, which sshd needs when run as root");
  std::string pattern = (fs::temp_directory_path() / "cuview-sshd-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) fail("mkdtemp " + pattern + " failed");
  dir_ = pattern;
  try {
    write_keys_and_client_config();
    for (int attempt = 0; attempt < kStartAttempts && !sshd_; ++attempt) {
      if (try_start(free_port(), options)) break;
    }
    if (!sshd_) fail("sshd could not bind a free port of 127.0.0.1 in " + std::to_string(kStartAttempts) + " tries");
  } catch (...) {
    stop();
    std::error_code ec;
    fs::remove_all(dir_, ec);
    throw;
  }
}

SshServer::~SshServer() {
  stop();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void SshServer::write_keys_and_client_config() {
  keygen(dir_ / "host_key", kHostAlias);
  keygen(dir_ / "id_ed25519", "cuview-test-user");
  write_file(dir_ / "authorized_keys", read_file(dir_ / "id_ed25519.pub"), 0600);
  // HostKeyAlias: the host key is trusted whatever port sshd ends up on.
  std::istringstream host_pub(read_file(dir_ / "host_key.pub"));
  std::string type, key;
  host_pub >> type >> key;
  write_file(dir_ / "known_hosts", std::string(kHostAlias) + " " + type + " " + key + "\n", 0600);
}

bool SshServer::try_start(int port, const SshServerOptions& options) {
  std::ostringstream env;
  for (const auto& name : options.pass_env)
    if (const char* value = std::getenv(name.c_str())) env << " " << name << "=\"" << value << "\"";
  for (const auto& [name, value] : options.set_env) env << " " << name << "=\"" << value << "\"";
  const fs::path config = dir_ / "sshd_config";
  std::ostringstream c;
  c << "Port " << port << "\nListenAddress 127.0.0.1\n"
    << "HostKey " << (dir_ / "host_key").string() << "\n"
    << "PidFile " << (dir_ / "sshd.pid").string() << "\n"
    << "AuthorizedKeysFile " << (dir_ / "authorized_keys").string() << "\n"
    << "UsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n"
    << "PubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
    << "AllowStreamLocalForwarding yes\nStreamLocalBindUnlink yes\nAllowTcpForwarding yes\n"
    << "PermitUserEnvironment no\nPrintMotd no\nLogLevel ERROR\n";
  if (!env.str().empty()) c << "SetEnv" << env.str() << "\n";
  write_file(config, c.str(), 0600);

  std::ostringstream client;
  client << "Host localhost " << kHostAlias << "\n"
         << "  HostName 127.0.0.1\n  Port " << port << "\n  User " << user_name() << "\n"
         << "  IdentityFile " << (dir_ / "id_ed25519").string() << "\n  IdentitiesOnly yes\n  IdentityAgent none\n"
         << "  HostKeyAlias " << kHostAlias << "\n"
         << "  UserKnownHostsFile " << (dir_ / "known_hosts").string() << "\n  GlobalKnownHostsFile /dev/null\n"
         << "  StrictHostKeyChecking yes\n  CheckHostIP no\n  BatchMode yes\n"
         << "  ControlMaster no\n  ControlPath none\n  ConnectTimeout 5\n  LogLevel ERROR\n";
  write_file(dir_ / "ssh_config", client.str(), 0600);

  auto sshd = std::make_unique<ChildProcess>(std::vector<std::string>{sshd_program().string(), "-D", "-e", "-f", config.string()});
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!accepts_connections(port)) {
    if (!sshd->running()) {
      const std::string err = sshd->err();
      if (err.find("Address already in use") != std::string::npos) return false;  // taken meanwhile: another port
      fail("sshd exited before listening on 127.0.0.1:" + std::to_string(port) + ":\n" + err);
    }
    if (std::chrono::steady_clock::now() > deadline) {
      const std::string err = sshd->err();
      fail("sshd did not listen on 127.0.0.1:" + std::to_string(port) + " within 5 s:\n" + err);
    }
    std::this_thread::sleep_for(20ms);  // no readiness signal from sshd: its port is the signal
  }
  port_ = port;
  sshd_ = std::move(sshd);
  return true;
}

std::string SshServer::ssh_command() const { return "ssh -F " + quoted(dir_ / "ssh_config"); }

bool SshServer::running() const { return sshd_ != nullptr && sshd_->running(); }

void SshServer::stop() {
  if (!sshd_) return;
  const pid_t listener = sshd_->pid();
  // Sessions outlive the listener (that is how sshd restarts without dropping anyone), and an
  // orphan is no longer found below it: kill from the leaves up, so every process dies while its
  // parent is alive to reap it, and the listener last.
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  for (auto leaves = leaves_below(listener); !leaves.empty() && std::chrono::steady_clock::now() < deadline;
       leaves = leaves_below(listener)) {
    for (const pid_t pid : leaves) ::kill(pid, SIGKILL);
    for (const pid_t pid : leaves)
      while (!gone(pid) && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  }
  sshd_->signal(SIGKILL);
  (void)sshd_->wait_for(5s);
  sshd_.reset();
}

}  // namespace cuview::test
