// Viewer death: cuview-ctl and cuview-gui SIGKILLed at random moments against cuview-compute (each
// simulation) or a program embedding the publisher.
#include <signal.h>

#include <algorithm>
#include <random>
#include <thread>

#include "campaign.hpp"

using namespace cuview::test;
using namespace std::chrono_literals;

namespace cuview::faults {

std::vector<Row> viewer_death(const Config& c, const std::string& publisher, int ctl_kills, int gui_kills,
                              const std::string& sim) {
  RuntimeDir rt;
  const bool embedded = publisher == "embed-wave";
  auto daemon = embedded ? start_embed_wave("f", c.backend, c.size)
                : sim.empty()
                    ? daemon_for(c, "f")
                    : start_daemon("f", c.backend, {"--sim", sim}, c.backend == Backend::cuda ? "1024x512" : "128x64");
  const double rate0 = step_rate("f", c.baseline);
  const auto s0 = stats("f");
  const double dev0 = device_used_mib(c);
  std::mt19937_64 rng(c.seed);
  std::vector<Row> rows;
  for (const bool gui : {false, true}) {
    Row row{std::string(gui ? "viewer death: SIGKILL `cuview-gui --screenshot` at a random moment"
                            : "viewer death: SIGKILL `cuview-ctl attach --verify` at a random moment") +
            (embedded ? ", against embed-wave (embedded publisher)" : "") +
            (sim.empty() ? "" : ", against cuview-compute --sim " + sim)};
    const int n = gui ? gui_kills : ctl_kills;
    double worst_reclaim = 0;
    for (int i = 0; i < n; ++i) {
      std::vector<std::string> argv =
          gui ? std::vector<std::string>{bin("cuview-gui"),
                                         "--name",
                                         "f",
                                         "--screenshot",
                                         (rt.path() / "x.png").string(),
                                         "--frames",
                                         "1000000",
                                         "--timeout",
                                         "600"}
              : std::vector<std::string>{bin("cuview-ctl"), "--name",   "f",         "attach", "--frames",
                                         "1000000",         "--verify", "--hold-ms", "3"};
      ChildProcess viewer(argv);
      // Anywhere from before its hello to deep into its frames: mid-attach and mid-frame both.
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % (gui ? 1500 : 400)));
      viewer.signal(SIGKILL);
      (void)viewer.wait_for(10s);
      ++row.trials;
      const auto t = Clock::now();
      try {
        (void)wait_stats(
            "f", [](const StatsView& v) { return v.readers == 0 && v.held_slots == 0 && v.clients <= 1; }, 5s);
        worst_reclaim = std::max(worst_reclaim, ms_since(t));
      } catch (const std::exception& e) {
        row.fail(std::string("after kill ") + std::to_string(i + 1) + ": " + e.what());
      }
      if (!daemon.running()) {
        row.fail("the " + publisher + " exited: " + daemon.err());
        break;
      }
    }
    const double rate1 = step_rate("f", c.baseline);
    const auto s1 = stats("f");
    const double dev1 = device_used_mib(c);
    for (int k = 0; k < 3; ++k) {
      auto r = ctl("f", {"attach", "--frames", "5", "--verify"}, 60s);
      if (r.code != 0) row.fail("a later attach failed: " + r.err);
    }
    row.worst = "lease reclaimed ≤ " + fmt(worst_reclaim, 0) + " ms after the kill; " + publisher + " RSS " +
                std::to_string(static_cast<long long>(s1.rss_kib) - static_cast<long long>(s0.rss_kib)) +
                " KiB vs before; step rate " + fmt(rate1 / rate0, 2) + "× before";
    if (dev0 >= 0) row.worst += "; device memory " + fmt(dev1 - dev0, 1) + " MiB vs before";
    if (s1.held_slots != 0) row.fail(std::to_string(s1.held_slots) + " slot(s) still held");
    // Flat: generous bounds (a 2-core CI machine is noisy), far inside what a leak per kill or a
    // publisher slowed by its dead viewers would show.
    if (s1.rss_kib > s0.rss_kib + 16 * 1024)
      row.fail(publisher + " grew by " + std::to_string(s1.rss_kib - s0.rss_kib) + " KiB over the kills");
    // The step rate is a figure to print, not a verdict: on a shared machine it follows the CPU
    // other processes leave. What must never happen is the publisher stopping.
    if (!(rate1 > 0)) row.fail(publisher + " no longer steps after the kills");
    rows.push_back(row);
  }
  return rows;
}

}  // namespace cuview::faults
