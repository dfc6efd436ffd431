// Remote viewers through cuview-gateway: killed at random moments, frozen, the gateway itself
// killed under three of them and restarted, and a flood of malformed messages at its socket. The
// simulation keeps its step rate and memory; the gateway keeps its memory and goes on serving.
#include <signal.h>

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
}  // namespace

std::vector<Row> remote_viewers(const Config& c) {
  RuntimeDir rt;
  auto daemon = daemon_for(c, "r");
  std::optional<ChildProcess> gateway(start_gateway());
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
    gateway.emplace(start_gateway());
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
  return rows;
}

}  // namespace cuview::faults
