// Remote viewers through cuview-gateway: killed at random moments, frozen, the gateway itself
// killed under three of them and restarted, a flood of malformed messages at its socket, and
// strangers and malformed WebSocket frames at its web page's port. The simulation keeps its step
// rate and memory; the gateway keeps its memory and goes on serving.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <random>
#include <thread>

#include <zmq.hpp>

#include "campaign.hpp"

using namespace cuview::test;
using namespace std::chrono_literals;

namespace cuview::faults {
namespace {
/// Resident memory of process `pid`, KiB (0 when it is gone).
std::uint64_t rss_kib_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  std::uint64_t kib = 0;
  while (f >> key) {
    if (key == "VmRSS:") {
      f >> kib;
      return kib;
    }
    f.ignore(1 << 10, '\n');
  }
  return 0;
}

std::vector<std::string> remote_viewer(const std::string& extra_flag = "") {
  std::vector<std::string> argv{bin("cuview-ctl"), "--name", "r", "--remote", gateway_url(), "attach",
                                "--frames",        "1000000", "--view", "320x180"};
  if (!extra_flag.empty()) argv.push_back(extra_flag);
  return argv;
}

/// A remote viewer that must receive `n` views now: the gateway still serves.
bool gateway_serves(int n = 5) {
  const auto r = ctl("r", {"--remote", gateway_url(), "attach", "--frames", std::to_string(n), "--view", "64x64"}, 30s);
  return r.code == 0;
}

/// The web page's port and token from the URL the gateway printed (cuview-gateway --http).
std::pair<int, std::string> web_of(ChildProcess& gateway) {
  const auto deadline = Clock::now() + 30s;
  while (Clock::now() < deadline) {
    const auto out = gateway.out();
    const auto at = out.find("http://127.0.0.1:");
    const auto tok = out.find("?token=", at);
    if (at != std::string::npos && tok != std::string::npos && out.find('\n', tok) != std::string::npos)
      return {std::stoi(out.substr(at + 17)), out.substr(tok + 7, 48)};
    std::this_thread::sleep_for(20ms);
  }
  return {0, {}};
}

/// A TCP connection to the page's port that sends `bytes` and returns what came back: until it
/// holds `until` (empty: until the server closes), 4 KiB or 5 s.
std::string talk(int port, const std::string& bytes, bool read_reply = true, const std::string& until = "") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string got;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    (void)!::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    char buf[4096];
    while (read_reply) {
      const auto n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      got.append(buf, static_cast<std::size_t>(n));
      if (got.size() >= 4096 || (!until.empty() && got.find(until) != std::string::npos)) break;
    }
  }
  ::close(fd);
  return got;
}

std::string upgrade(int port, const std::string& cookie, const std::string& origin = "") {
  std::string r = "GET /api/live?name=r HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                  "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                  "Sec-WebSocket-Version: 13\r\n";
  if (!cookie.empty()) r += "Cookie: cuview_token=" + cookie + "\r\n";
  if (!origin.empty()) r += "Origin: " + origin + "\r\n";
  return r + "\r\n";
}

/// One client frame (masked, as a client's must be): `opcode`, `payload`, and the length it
/// claims (the true one unless told).
std::string frame(int opcode, const std::string& payload, std::uint64_t claimed = ~0ull) {
  const std::uint64_t len = claimed == ~0ull ? payload.size() : claimed;
  std::string f(1, static_cast<char>(0x80 | opcode));
  if (len < 126) {
    f += static_cast<char>(0x80 | len);
  } else if (len < 65536) {
    f += static_cast<char>(0x80 | 126), f += static_cast<char>(len >> 8), f += static_cast<char>(len & 0xff);
  } else {
    f += static_cast<char>(0x80 | 127);
    for (int i = 7; i >= 0; --i) f += static_cast<char>((len >> (8 * i)) & 0xff);
  }
  const char mask[4] = {0x12, 0x34, 0x56, 0x78};
  f.append(mask, 4);
  for (std::size_t i = 0; i < payload.size(); ++i) f += static_cast<char>(payload[i] ^ mask[i % 4]);
  return f;
}
}  // namespace

std::vector<Row> remote_viewers(const Config& c) {
  RuntimeDir rt;
  auto daemon = daemon_for(c, "r");
  std::optional<ChildProcess> gateway(start_gateway({"--http", "127.0.0.1:0"}));
  const double rate0 = step_rate("r", c.baseline);
  std::vector<Row> rows;
  std::mt19937 rng(static_cast<std::uint32_t>(c.seed));
  {
    Row row{"remote viewers SIGKILLed at random moments (" + std::to_string(c.ctl_kills / 2) + ")"};
    if (!gateway_serves()) row.fail("the gateway served no views before the kills");
    const auto rss0 = rss_kib_of(gateway->pid());
    std::uint64_t rss_max = rss0;
    for (int i = 0; i < c.ctl_kills / 2; ++i) {
      ++row.trials;
      ChildProcess v(remote_viewer());
      std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(30, 600)(rng)));
      v.signal(SIGKILL);
      (void)v.wait_for(5s);
      rss_max = std::max(rss_max, rss_kib_of(gateway->pid()));
    }
    if (!gateway->running()) row.fail("the gateway exited: " + gateway->err());
    if (!gateway_serves()) row.fail("the gateway served no views after the kills");
    const double rate = step_rate("r", c.baseline);
    if (!daemon.running()) row.fail("the daemon exited");
    row.worst = "step rate " + fmt(rate / rate0, 3) + "× the rate with no viewer; gateway memory " +
                std::to_string(rss0 / 1024) + " → at most " + std::to_string(rss_max / 1024) + " MiB";
    if (rss_max > rss0 + 64 * 1024) row.fail("the gateway's memory grew by more than 64 MiB");
    rows.push_back(row);
  }
  {
    Row row{"a remote viewer frozen (SIGSTOP) for " + std::to_string(c.freeze.count()) + " s beside a reading one"};
    ++row.trials;
    ChildProcess frozen(remote_viewer());
    std::this_thread::sleep_for(500ms);
    frozen.signal(SIGSTOP);
    const double rate = step_rate("r", c.freeze);
    if (!gateway_serves(20)) row.fail("a second remote viewer got no views while the first was frozen");
    frozen.signal(SIGCONT);
    row.worst = "step rate " + fmt(rate / rate0, 3) + "× the rate with no viewer";
    rows.push_back(row);
  }
  {
    Row row{"the gateway SIGKILLed under 3 remote viewers, then restarted: they re-attach"};
    ++row.trials;
    std::vector<ChildProcess> viewers;
    for (int i = 0; i < 3; ++i) viewers.emplace_back(remote_viewer("--reattach"));
    std::this_thread::sleep_for(1s);
    const auto before = stats("r");
    gateway->signal(SIGKILL);
    (void)gateway->wait_for(5s);
    std::this_thread::sleep_for(500ms);
    gateway.reset();
    gateway.emplace(start_gateway({"--http", "127.0.0.1:0"}));
    // Each viewer says "attached" once more after the restart.
    const auto deadline = Clock::now() + 20s;
    std::size_t back = 0;
    while (Clock::now() < deadline) {
      back = 0;
      for (auto& v : viewers) {
        const auto out = v.out();
        std::size_t n = 0;
        for (auto p = out.find("attached to"); p != std::string::npos; p = out.find("attached to", p + 1)) ++n;
        if (n >= 2) ++back;
      }
      if (back == viewers.size()) break;
      std::this_thread::sleep_for(100ms);
    }
    if (back != viewers.size())
      row.fail(std::to_string(back) + " of 3 remote viewers re-attached within 20 s of the gateway's restart");
    const auto after = stats("r");
    if (after.step <= before.step) row.fail("the simulation stopped stepping while the gateway was down");
    row.worst = std::to_string(back) + "/3 re-attached; daemon memory " + std::to_string(before.rss_kib / 1024) +
                " → " + std::to_string(after.rss_kib / 1024) + " MiB";
    rows.push_back(row);
  }
  {
    Row row{"malformed messages at the gateway's socket for " + std::to_string(c.hostile.count()) + " s"};
    zmq::context_t ctx;
    zmq::socket_t s(ctx, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 0);
    s.set(zmq::sockopt::sndhwm, 100);
    s.connect("ipc://" + gateway_url().substr(5));
    std::uniform_int_distribution<int> byte(0, 255), len(0, 300), parts(1, 5);
    const auto end = Clock::now() + c.hostile;
    while (Clock::now() < end) {
      ++row.trials;
      const int n = parts(rng);
      for (int p = 0; p < n; ++p) {
        std::string junk(static_cast<std::size_t>(len(rng)), '\0');
        for (auto& ch : junk) ch = static_cast<char>(byte(rng));
        if (p == 0 && n == 2) junk = row.trials % 2 ? "" : "r";  // aimed at the gateway's ops, or the publisher's
        (void)s.send(zmq::buffer(junk), (p + 1 < n ? zmq::send_flags::sndmore : zmq::send_flags::none) |
                                            zmq::send_flags::dontwait);
      }
      zmq::message_t m;
      while (s.recv(m, zmq::recv_flags::dontwait)) {
      }
    }
    if (!gateway->running()) row.fail("the gateway exited: " + gateway->err());
    if (!gateway_serves()) row.fail("the gateway served no views after the flood");
    row.worst = std::to_string(row.trials) + " malformed messages; gateway still serving";
    rows.push_back(row);
  }
  {
    Row row{"strangers and malformed WebSocket frames at the web page's port for " + std::to_string(c.hostile.count()) +
            " s"};
    const auto [port, token] = web_of(*gateway);
    if (port == 0) row.fail("the gateway printed no web page URL: " + gateway->out());
    const auto rss0 = rss_kib_of(gateway->pid());
    std::uint64_t rss_max = rss0;
    std::uniform_int_distribution<int> kind(0, 7), byte(0, 255), len(0, 300);
    const auto junk = [&] {
      std::string j(static_cast<std::size_t>(len(rng)), '\0');
      for (auto& ch : j) ch = static_cast<char>(byte(rng));
      return j;
    };
    int refused = 0, answered = 0;
    const auto end = Clock::now() + c.hostile;
    while (port != 0 && Clock::now() < end) {
      ++row.trials;
      const std::string wrong(48, 'a');
      switch (kind(rng)) {
        case 0:  // no token, a wrong one, another origin: 403 before anything is read further
          refused += talk(port, upgrade(port, "")).find(" 403 ") != std::string::npos;
          break;
        case 1:
          refused += talk(port, upgrade(port, wrong)).find(" 403 ") != std::string::npos;
          break;
        case 2:
          refused += talk(port, upgrade(port, token, "http://evil.example")).find(" 403 ") != std::string::npos;
          break;
        case 3:  // bytes that are not HTTP
          (void)talk(port, junk(), false);
          break;
        case 4:  // the page's connection, then text that is not the page's: an error message back
          answered += talk(port, upgrade(port, token) + frame(1, junk()), true, "\"error\"").find("error") != std::string::npos;
          break;
        case 5:  // a binary frame of junk
          answered += talk(port, upgrade(port, token) + frame(2, junk()), true, "\"error\"").find("error") != std::string::npos;
          break;
        case 6:  // a frame that claims to be huge
          (void)talk(port, upgrade(port, token) + frame(1, junk(), 1ull << 40), false);
          break;
        default:  // a frame header cut short, then silence
          (void)talk(port, upgrade(port, token) + frame(1, junk()).substr(0, 3), false);
          break;
      }
      rss_max = std::max(rss_max, rss_kib_of(gateway->pid()));
    }
    if (!gateway->running()) row.fail("the gateway exited: " + gateway->err());
    if (refused == 0) row.fail("no stranger was refused with 403");
    if (answered == 0) row.fail("no malformed message was answered with an error");
    const auto page = talk(port, upgrade(port, token), true, "describe");
    if (page.find(" 101 ") == std::string::npos || page.find("describe") == std::string::npos)
      row.fail("the page's live connection did not open after the flood: " + page.substr(0, 200));
    if (!gateway_serves()) row.fail("the gateway served no views after the flood");
    if (!daemon.running()) row.fail("the daemon exited");
    if (rss_max > rss0 + 64 * 1024) row.fail("the gateway's memory grew by more than 64 MiB");
    row.worst = std::to_string(refused) + " strangers refused, " + std::to_string(answered) +
                " malformed messages answered; gateway memory " + std::to_string(rss0 / 1024) + " → at most " +
                std::to_string(rss_max / 1024) + " MiB";
    rows.push_back(row);
  }
  return rows;
}

}  // namespace cuview::faults
