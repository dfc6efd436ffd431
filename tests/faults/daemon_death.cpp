// Daemon death under viewers: three in-process clients notice a SIGKILLed daemon, refuse the old
// session and attach to a new daemon, whose lock a second daemon may not take.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "campaign.hpp"
#include "cuview/client.hpp"
#include "cuview/posix.hpp"

using namespace cuview::test;
using namespace std::chrono_literals;

namespace cuview::faults {

std::vector<Row> daemon_death(const Config& c) {
  RuntimeDir rt;
  Row row{"daemon death: SIGKILL under 3 attached viewers, then a new daemon"};
  Row lock_row{"a live daemon's lock: a second daemon of the same name is refused"};
  double worst_notice = 0, worst_reattach = 0;
  for (int i = 0; i < c.daemon_kills; ++i) {
    auto daemon = std::make_unique<ChildProcess>(daemon_for(c, "f"));
    const std::string old_session = stats("f").session;
    const auto old_segments = segments_of("f");
    std::atomic<int> ready{0};
    std::atomic<std::int64_t> kill_ns{0};
    std::mutex mu;
    std::vector<double> notice_ms, reattach_ms;
    std::vector<std::string> problems;
    std::vector<std::thread> viewers;
    for (int v = 0; v < 3; ++v) {
      viewers.emplace_back([&] {
        auto report = [&](const std::string& p) {
          std::lock_guard lock(mu);
          problems.push_back(p);
        };
        try {
          auto client = Client::attach(AttachOptions{.name = "f", .client = "faults viewer"});
          bool counted = false;
          for (;;) {
            try {
              auto f = client.next_frame(10s);
              if (!f) return report("no frame within 10 s before the kill");
              if (auto bad = f->verify()) return report(*bad);
              if (!counted) ++ready, counted = true;
            } catch (const Error& e) {
              if (e.code() != Errc::daemon_gone) return report(std::string("unexpected error: ") + e.what());
              break;
            }
          }
          const double noticed = static_cast<double>(monotonic_ns() - kill_ns.load()) * 1e-6;
          if (kill_ns.load() == 0) return report("daemon_gone before the daemon was killed");
          // The old attachment must refuse to work; a new one must be a new session.
          try {
            (void)client.stats();
            return report("a request on the old session succeeded");
          } catch (const Error&) {
          }
          const auto t = Clock::now();
          std::optional<Client> fresh;
          while (!fresh) {
            try {
              fresh.emplace(Client::attach(AttachOptions{.name = "f", .client = "faults viewer", .timeout = 1000ms}));
            } catch (const Error&) {
              if (ms_since(t) > 30'000) return report("no re-attach within 30 s");
              std::this_thread::sleep_for(20ms);
            }
          }
          if (fresh->hello().session == old_session) return report("re-attached to the old session");
          auto f = fresh->next_frame(10s);
          if (!f) return report("no frame from the new daemon");
          if (auto bad = f->verify()) return report(*bad);
          std::lock_guard lock(mu);
          notice_ms.push_back(noticed);
          reattach_ms.push_back(ms_since(t));
        } catch (const std::exception& e) {
          report(e.what());
        }
      });
    }
    const auto t0 = Clock::now();
    while (ready.load() < 3 && ms_since(t0) < 30'000) std::this_thread::sleep_for(5ms);
    kill_ns = monotonic_ns();
    daemon->signal(SIGKILL);
    (void)daemon->wait_for(10s);
    daemon = std::make_unique<ChildProcess>(daemon_for(c, "f"));
    for (auto& t : viewers) t.join();
    ++row.trials;
    for (const auto& p : problems) row.fail(p);
    for (double n : notice_ms) {
      worst_notice = std::max(worst_notice, n);
      if (n > 1000) row.fail("a viewer noticed after " + fmt(n, 0) + " ms");
    }
    for (double r : reattach_ms) worst_reattach = std::max(worst_reattach, r);
    for (const auto& s : old_segments)
      if (shm_exists(s)) row.fail("segment " + s + " of the killed daemon survived the restart");
    // The new daemon is live: a second one must not take its lock.
    ++lock_row.trials;
    ChildProcess second({bin("cuview-compute"), "--name", "f", "--backend", "host", "--size", "16x16"});
    const auto code = second.wait_for(30s);
    if (!code || *code != 3)
      lock_row.fail("a second daemon was not refused (exit " + (code ? std::to_string(*code) : "none") + ")");
    if (stats("f").session == old_session) lock_row.fail("the old session answered");
    daemon->signal(SIGTERM);
    (void)daemon->wait_for(30s);
  }
  row.worst = "noticed ≤ " + fmt(worst_notice, 0) + " ms after the kill; re-attached ≤ " + fmt(worst_reattach, 0) +
              " ms after noticing (new daemon's start included)";
  lock_row.worst = "refused every time";
  return {row, lock_row};
}

}  // namespace cuview::faults
