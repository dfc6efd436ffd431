// The two ways in to a gateway, as a user takes them: ssh:// through a real sshd (the gateway
// started on demand, the forwarding's death noticed), and tcp:// with CURVE keys (an authorised
// key served, a keyless, unknown or mis-pinned peer refused and told nothing).
#include <signal.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include <zmq.hpp>

#include "cuview/client.hpp"
#include "cuview/remote/curve_keys.hpp"
#include "cuview/runtime_dir.hpp"
#include "cuview/remote_protocol.hpp"
#include "process.hpp"
#include "ssh_server.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {
/// Stops the gateway `--ensure` started in the background (it outlives the ssh session by design).
struct StopEnsuredGateway {
  ~StopEnsuredGateway() {
    std::ifstream f(runtime_root() / ".gateway" / "pid");
    int pid = 0;
    if (f >> pid && pid > 0) ::kill(pid, SIGTERM);
    for (int i = 0; i < 100 && pid > 0 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(20ms);
  }
};

int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

/// The user's steps: a key for the laptop (`cuview-ctl keygen`), its line in the gateway's
/// authorized_keys (both hosts share $XDG_CONFIG_HOME here).
void authorise_this_user() {
  auto keygen = ctl("run1", {"keygen"});
  INFO(keygen.out << keygen.err);
  REQUIRE(keygen.code == 0);
  const auto pub = remote::read_keypair(remote::default_client_key()).public_key;
  CHECK_THAT(keygen.out, Catch::Contains(pub));
  std::ofstream(remote::default_authorized_keys()) << pub << " laptop\n";
}

/// The processes of this user whose command line holds `text` (read from /proc).
int processes_with(const std::string& text) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const auto pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos || pid == std::to_string(::getpid())) continue;
    std::string cmdline;
    try {
      std::ifstream f(entry.path() / "cmdline", std::ios::binary);
      cmdline.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    } catch (const std::exception&) {
      continue;  // it exited while being read (ESRCH)
    }
    if (cmdline.find(text) != std::string::npos) ++n;
  }
  return n;
}

/// The ssh forwardings (`ssh -N -L ...`, and any shell around one) still running, once the
/// processes that started them have exited: a moment's grace for the kernel to reap them.
int forwardings_left() {
  int n = 0;
  for (int i = 0; i < 50 && (n = processes_with("ExitOnForwardFailure")) > 0; ++i) std::this_thread::sleep_for(50ms);
  return n;
}

/// How a peer's connection to the gateway ended its handshake, as ZeroMQ's monitor of the peer's
/// socket reports it.
enum class Handshake {
  succeeded,
  refused_key,       ///< the gateway's ZAP handler refused the peer's key (HANDSHAKE_FAILED_AUTH)
  failed_protocol,   ///< the two sides' mechanisms or keys disagree (HANDSHAKE_FAILED_PROTOCOL)
  dropped_unshaken,  ///< the gateway closed the connection before any handshake succeeded
};
std::ostream& operator<<(std::ostream& o, Handshake h) {
  constexpr const char* names[] = {"succeeded", "refused_key", "failed_protocol", "dropped_unshaken"};
  return o << names[static_cast<int>(h)];
}
struct Outcome {
  Handshake handshake;
  std::uint32_t value;  ///< the event's value: a ZAP status code, a ZMTP protocol error
};

/// Connects `s` (a DEALER, its security set) to `endpoint`, queues a gateway `list` on it, and
/// waits for the handshake's outcome — the real event, however slow the machine; a minute without
/// one fails the test.
Outcome connect_and_ask(zmq::context_t& ctx, zmq::socket_t& s, const std::string& endpoint) {
  static int monitors = 0;
  const std::string where = "inproc://remote-access-test-monitor-" + std::to_string(monitors++);
  REQUIRE(zmq_socket_monitor(s.handle(), where.c_str(),
                             ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                                 ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) == 0);
  zmq::socket_t events(ctx, zmq::socket_type::pair);
  events.set(zmq::sockopt::linger, 0);
  events.set(zmq::sockopt::rcvtimeo, 60'000);
  events.connect(where);  // before the peer connects: no event is lost
  s.connect(endpoint);
  (void)s.send(zmq::buffer(std::string()), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  (void)s.send(zmq::buffer(remote::encode_gateway_request(remote::Op::list, 1, proto::NoArgs{})),
               zmq::send_flags::dontwait);
  zmq::message_t event, address;  // the first event watched for ends the handshake
  if (!events.recv(event)) FAIL("no handshake with the gateway at " << endpoint << " ended within a minute");
  if (event.more()) (void)events.recv(address);
  REQUIRE(event.size() >= 6);
  std::uint16_t id = 0;
  std::uint32_t value = 0;
  std::memcpy(&id, event.data(), 2);
  std::memcpy(&value, static_cast<const char*>(event.data()) + 2, 4);
  zmq_socket_monitor(s.handle(), nullptr, 0);
  if (id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) return {Handshake::succeeded, value};
  if (id == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) return {Handshake::refused_key, value};
  if (id == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) return {Handshake::failed_protocol, value};
  return {Handshake::dropped_unshaken, value};  // DISCONNECTED, or FAILED_NO_DETAIL
}

/// Whether a reply waits on `s` (within `wait`).
bool replied(zmq::socket_t& s, std::chrono::milliseconds wait) {
  zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, wait);
  return (item.revents & ZMQ_POLLIN) != 0;
}

/// Waits (a minute at most) for the gateway's log to hold `text`; what it holds then.
std::string log_with(const ChildProcess& gateway, const std::string& text) {
  const auto until = std::chrono::steady_clock::now() + 60s;
  std::string log = gateway.err();
  while (log.find(text) == std::string::npos && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(20ms);
    log = gateway.err();
  }
  return log;
}
}  // namespace

TEST_CASE("cuview-ctl --remote ssh://localhost reaches a daemon through a real sshd, starting the gateway on demand",
          "[integration][remote][ssh][host]") {
  RuntimeDir rt;
  auto daemon = start_daemon("run1", Backend::host);
  SshServer sshd;
  ScopedEnv ssh("CUVIEW_SSH_COMMAND", sshd.ssh_command());
  ScopedEnv gw("CUVIEW_REMOTE_GATEWAY", bin("cuview-gateway"));
  StopEnsuredGateway stop_gateway;
  auto r = ctl("run1", {"--remote", "ssh://localhost", "status"}, 60s);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("grayscott"));
  r = ctl("run1", {"--remote", "ssh://localhost:" + std::to_string(sshd.port()), "pause"}, 60s);
  REQUIRE(r.code == 0);
  CHECK(stats("run1").paused);
  // Paused: the view of the frame it stopped at, once.
  r = ctl("run1", {"--remote", "ssh://localhost", "attach", "--frames", "1", "--view", "160x90"}, 60s);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("received 1 views"));

  // The forwarding dies under a watching client: it notices the connection drop (not a silence)
  // and says so; the simulation runs on.
  AttachOptions o;
  o.name = "run1";
  o.remote = "ssh://localhost";
  auto client = RemoteClient::attach(o);
  client.resume();
  client.watch({"u", ViewRegion::fit(128, 128, 64, 64, 1, 64, 64), "u8"});
  RemoteView view;
  REQUIRE(client.next_view(view, 10s));
  sshd.stop();
  const auto until = std::chrono::steady_clock::now() + 60s;  // a failure guard only
  Errc code{};
  std::string message = "(no error within a minute)";
  try {
    while (std::chrono::steady_clock::now() < until) (void)client.next_view(view, 100ms);
  } catch (const Error& e) {
    code = e.code();
    message = e.what();
  }
  CHECK(code == Errc::daemon_gone);
  CHECK_THAT(message, Catch::Contains("the connection to the gateway at ssh://localhost dropped") &&
                          Catch::Contains("Attach again"));
  const auto step = stats("run1").step;
  (void)wait_stats("run1", [&](const StatsView& s) { return s.step > step; });
}

TEST_CASE("a client of ssh:// that exits leaves no ssh behind, whatever ssh command it was given",
          "[integration][remote][ssh][host]") {
  RuntimeDir rt;
  auto daemon = start_daemon("run1", Backend::host);
  SshServer sshd;
  ScopedEnv gw("CUVIEW_REMOTE_GATEWAY", bin("cuview-gateway"));
  StopEnsuredGateway stop_gateway;
  // A shell wrapper that does not `exec` (docs/remote.md's form, and a PATH `ssh` script without
  // exec): killing only the process started would orphan ssh.
  const fs::path wrappers = rt.path() / "wrapper-bin";
  fs::create_directories(wrappers);
  std::ofstream(wrappers / "ssh") << "#!/bin/sh\n/usr/bin/" << sshd.ssh_command() << " \"$@\"\n";
  fs::permissions(wrappers / "ssh", fs::perms::owner_all);
  const std::string python_lib = (fs::path(CUVIEW_BIN_DIR).parent_path() / "lib" / "libcuview.so").string();
  REQUIRE(fs::exists(python_lib));
  const bool have_gui = fs::exists(bin("cuview-gui"));  // built where Qt 6 is installed
  const bool have_python = ::access("/usr/bin/python3", X_OK) == 0;
  CHECK(have_python);
  for (const bool custom : {true, false}) {
    ScopedEnv command("CUVIEW_SSH_COMMAND", custom ? sshd.ssh_command() : "");
    ScopedEnv path("PATH", custom ? std::string(std::getenv("PATH")) : wrappers.string() + ":" + std::getenv("PATH"));
    INFO((custom ? "CUVIEW_SSH_COMMAND=" + sshd.ssh_command() : std::string("ssh from PATH, a script")));
    for (int k = 0; k < 5; ++k) {
      auto r = ctl("run1", {"--remote", "ssh://localhost", "attach", "--frames", "2", "--view", "32x32"}, 60s);
      INFO(r.out << r.err);
      REQUIRE(r.code == 0);
      CHECK(forwardings_left() == 0);
      if (have_gui) {
        ChildProcess gui({bin("cuview-gui"), "--remote", "ssh://localhost", "--name", "run1", "--screenshot",
                          (rt.path() / "view.png").string(), "--frames", "2", "--timeout", "60"});
        const auto code = gui.wait_for(90s);
        INFO(gui.err());
        CHECK(code == 0);
        CHECK(forwardings_left() == 0);
      }
      if (have_python) {
        ChildProcess py({"/usr/bin/env", "PYTHONPATH=" + std::string(CUVIEW_SOURCE_DIR) + "/python",
                         "CUVIEW_LIBRARY=" + python_lib, "/usr/bin/python3", "-c",
                         "import cuview; s = cuview.attach('run1', remote='ssh://localhost'); print(s.status()['step'])"});
        const auto code = py.wait_for(90s);
        INFO(py.out() << py.err());
        CHECK(code == 0);
        CHECK(forwardings_left() == 0);
      }
    }
  }
}

TEST_CASE("ssh:// to a host without cuview-gateway says what to install", "[integration][remote][ssh][host]") {
  RuntimeDir rt;
  SshServer sshd;
  ScopedEnv ssh("CUVIEW_SSH_COMMAND", sshd.ssh_command());
  ScopedEnv gw("CUVIEW_REMOTE_GATEWAY", "/nonexistent/cuview-gateway");
  const auto r = ctl("run1", {"--remote", "ssh://localhost", "status"}, 60s);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Catch::Contains("cuview-gateway is not installed on localhost"));
}

TEST_CASE("a tcp gateway serves an authorised key and tells a peer without one nothing",
          "[integration][remote][curve][host]") {
  RuntimeDir rt;
  ScopedEnv config("XDG_CONFIG_HOME", (rt.path() / "config").string());
  auto daemon = start_daemon("run1", Backend::host);
  authorise_this_user();
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(free_port());
  auto gateway = start_gateway({"--listen", endpoint});
  const auto gateway_key = remote::load_or_create_keypair(remote::default_gateway_key(), "gateway").public_key;

  // A wrong key on first use: refused with what to do, and nothing pinned, so the right key works after.
  const auto wrong = remote::generate_keypair().public_key;
  auto r = ctl("run1", {"--remote", endpoint + "?key=" + wrong, "status"});
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Catch::Contains("is not its key") && Catch::Contains("--print-key") && Catch::Contains("[access]"));
  CHECK_FALSE(remote::KnownGateways::read(remote::default_known_gateways()).key_for(endpoint.substr(6)));
  // First use pins the key given in the URL; later uses need no key.
  r = ctl("run1", {"--remote", endpoint + "?key=" + gateway_key, "status"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("grayscott"));
  r = ctl("run1", {"--remote", endpoint, "pause"});
  REQUIRE(r.code == 0);
  CHECK(stats("run1").paused);
  // A different key offered for a pinned gateway: refused before anything is sent.
  const auto other = remote::generate_keypair().public_key;
  r = ctl("run1", {"--remote", endpoint + "?key=" + other, "status"});
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Catch::Contains("known_gateways"));
  // Z85 keys may end with '/': such a key is a key, not a URL's trailing slash.
  std::string slashed;
  while (slashed.empty() || slashed.back() != '/') slashed = remote::generate_keypair().public_key;
  r = ctl("run1", {"--remote", endpoint + "?key=" + slashed, "status"});
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Catch::Contains("known_gateways"));
  // The gateway's key made again: a client with the old one pinned is told so, and which line to remove.
  {
    const auto known = remote::default_known_gateways();
    const auto pinned = remote::KnownGateways::read(known).key_for(endpoint.substr(6));
    REQUIRE(pinned);
    std::ofstream(known, std::ios::trunc) << "# gateways\n" << endpoint.substr(6) << " " << wrong << "\n";
    r = ctl("run1", {"--remote", endpoint, "status"});
    CHECK(r.code == 1);
    CHECK_THAT(r.err, Catch::Contains("does not hold the key pinned") && Catch::Contains("line 2 of " + known.string()) &&
                          Catch::Contains("[access]"));
    std::ofstream(known, std::ios::trunc) << endpoint.substr(6) << " " << *pinned << "\n";
  }

  // Each peer's handshake is waited for: a refusal is an event the peer's socket reports (and the
  // gateway logs a refused key), after which nothing can reach it; the authorised key, on the
  // same path, is answered.
  zmq::context_t ctx;
  zmq::socket_t s(ctx, zmq::socket_type::dealer);
  s.set(zmq::sockopt::linger, 0);
  SECTION("a plain TCP peer is refused at the handshake and hears nothing") {
    // The peer reads the gateway's mechanism and gives up, or the gateway, having read the peer's,
    // closes the connection first: which comes first depends on the two processes' timing.
    const auto o = connect_and_ask(ctx, s, endpoint);
    INFO(o.handshake << ", " << o.value);
    CHECK(((o.handshake == Handshake::failed_protocol && o.value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) ||
           o.handshake == Handshake::dropped_unshaken));
    CHECK_FALSE(replied(s, 0ms));
  }
  SECTION("a CURVE peer with a key not in authorized_keys is refused, logged, and hears nothing") {
    const auto stranger = remote::generate_keypair();
    remote::apply_client_curve(s, stranger, gateway_key);
    const auto o = connect_and_ask(ctx, s, endpoint);
    CHECK(o.handshake == Handshake::refused_key);
    CHECK(o.value == 400);  // ZAP's "not allowed"
    CHECK_THAT(log_with(gateway, stranger.public_key),
               Catch::Contains("refused a CURVE peer") && Catch::Contains(stranger.public_key));
    CHECK_FALSE(replied(s, 0ms));
  }
  SECTION("an authorised key that expects another gateway's key is dropped before any handshake") {
    remote::apply_client_curve(s, remote::read_keypair(remote::default_client_key()), other);
    const auto o = connect_and_ask(ctx, s, endpoint);
    CHECK(o.handshake == Handshake::dropped_unshaken);
    CHECK_FALSE(replied(s, 0ms));
  }
  SECTION("the authorised key, by the same path, is answered") {
    remote::apply_client_curve(s, remote::read_keypair(remote::default_client_key()), gateway_key);
    const auto o = connect_and_ask(ctx, s, endpoint);
    CHECK(o.handshake == Handshake::succeeded);
    CHECK(replied(s, 60s));
  }
}

TEST_CASE("a gateway that dials out reaches a client listening for it, with CURVE both ways",
          "[integration][remote][curve][host]") {
  RuntimeDir rt;
  ScopedEnv config("XDG_CONFIG_HOME", (rt.path() / "config").string());
  auto daemon = start_daemon("run1", Backend::host);
  authorise_this_user();
  const auto gateway_key = remote::load_or_create_keypair(remote::default_gateway_key(), "gateway").public_key;
  const std::string where = "127.0.0.1:" + std::to_string(free_port());
  AttachOptions o;
  o.name = "run1";
  o.remote = "tcp+listen://" + where + "?key=" + gateway_key;
  o.timeout = 20s;
  std::optional<ChildProcess> gateway;
  std::thread dial([&] {
    std::this_thread::sleep_for(300ms);  // the client listens first
    gateway.emplace(start_gateway({"--dial", "tcp://" + where}));
  });
  auto client = RemoteClient::attach(o);
  dial.join();
  CHECK(client.stats().name == "run1");
  client.watch({"u", ViewRegion::fit(128, 128, 64, 64, 1, 64, 64), "u16"});
  RemoteView view;
  CHECK(client.next_view(view, 10s));
  CHECK(view.header.encoding == "u16");
}
