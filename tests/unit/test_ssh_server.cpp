// The test sshd (tests/support/ssh_server.hpp) does what the ssh transport's tests rely on: a
// command over ssh, a Unix-socket forwarding, and a forwarding that dies when the server stops.
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "cuview/posix.hpp"
#include "process.hpp"
#include "ssh_server.hpp"

using namespace cuview;
using namespace cuview::test;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

sockaddr_un address_of(const fs::path& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  REQUIRE(path.string().size() < sizeof a.sun_path);
  path.string().copy(a.sun_path, sizeof a.sun_path - 1);
  return a;
}

UniqueFd listen_unix(const fs::path& path) {
  UniqueFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const auto a = address_of(path);
  REQUIRE(::bind(s.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(s.get(), 4) == 0);
  return s;
}

/// A connection to `path`, retried until `deadline` (ssh creates the socket after logging in).
UniqueFd connect_unix(const fs::path& path, std::chrono::steady_clock::time_point deadline, ChildProcess& ssh) {
  for (;;) {
    UniqueFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    const auto a = address_of(path);
    if (::connect(s.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0) return s;
    if (!ssh.running()) FAIL("ssh -L exited: " << ssh.err());
    if (std::chrono::steady_clock::now() > deadline) FAIL("no " << path << " within 10 s: " << ssh.err());
    std::this_thread::sleep_for(20ms);  // ssh gives no signal that its forwarding is up but the socket
  }
}

/// Up to `n` bytes from `fd` within `timeout`; "" on end of file or timeout.
std::string read_some(int fd, std::size_t n, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return {};
  std::string buf(n, '\0');
  const ssize_t got = ::read(fd, buf.data(), n);
  buf.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return buf;
}

UniqueFd accept_within(int listener, std::chrono::milliseconds timeout) {
  pollfd p{listener, POLLIN, 0};
  REQUIRE(::poll(&p, 1, static_cast<int>(timeout.count())) == 1);
  return UniqueFd(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC));
}

ChildProcess shell(const std::string& command) { return ChildProcess({"/bin/sh", "-c", command}); }

}  // namespace

TEST_CASE("a command run through the test sshd's ssh command prints its output", "[remote][ssh]") {
  SshServer server;
  auto ssh = shell(server.ssh_command() + " localhost echo ok");
  REQUIRE(ssh.wait_for(20s) == 0);
  CHECK(ssh.out() == "ok\n");
}

TEST_CASE("a Unix socket forwarded with ssh -L carries bytes both ways; stopping sshd ends it", "[remote][ssh]") {
  SshServer server;
  const fs::path remote = server.dir() / "remote.sock";
  const fs::path local = server.dir() / "local.sock";
  UniqueFd listener = listen_unix(remote);
  auto forward = shell(server.ssh_command() + " -N -o ExitOnForwardFailure=yes -L '" + local.string() + "':'" +
                       remote.string() + "' localhost");
  UniqueFd client = connect_unix(local, std::chrono::steady_clock::now() + 10s, forward);
  REQUIRE(::write(client.get(), "hello", 5) == 5);
  UniqueFd accepted = accept_within(listener.get(), 10s);
  REQUIRE(accepted);
  CHECK(read_some(accepted.get(), 5, 10s) == "hello");
  REQUIRE(::write(accepted.get(), "world", 5) == 5);
  CHECK(read_some(client.get(), 5, 10s) == "world");

  server.stop();
  CHECK(read_some(client.get(), 5, 10s).empty());  // the forwarded connection ends
  CHECK(forward.wait_for(10s) == 255);             // and ssh exits, as for any lost connection
}

TEST_CASE("after stop() a new ssh fails with ssh's connection error, 255", "[remote][ssh]") {
  SshServer server;
  const int port = server.port();
  server.stop();
  CHECK_FALSE(server.running());
  auto ssh = shell(server.ssh_command() + " localhost true");
  CHECK(ssh.wait_for(20s) == 255);
  CHECK_THAT(ssh.err(), Catch::Contains("port " + std::to_string(port)) && Catch::Contains("refused"));
}

TEST_CASE("the test sshd leaves no process and no directory behind", "[remote][ssh]") {
  fs::path dir;
  pid_t session_shell = 0;
  {
    SshServer server;
    dir = server.dir();
    // A session still running when the server goes: sshd's children must go with it.
    auto ssh = shell(server.ssh_command() + " localhost 'echo $$; exec sleep 60'");
    for (auto deadline = std::chrono::steady_clock::now() + 20s; session_shell == 0;) {
      const std::string out = ssh.out();
      if (!out.empty() && out.back() == '\n') session_shell = std::stoi(out);
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      REQUIRE(ssh.running());
      std::this_thread::sleep_for(20ms);
    }
    CHECK(::kill(session_shell, 0) == 0);
  }
  CHECK_FALSE(fs::exists(dir));
  CHECK(::kill(session_shell, 0) != 0);
}
