// Frozen, slow and many viewers: a viewer SIGSTOPped while it holds a frame, one reading a frame
// per second, and many verifying every frame; the daemon must keep its step rate.
#include <signal.h>

#include "campaign.hpp"

using namespace cuview::test;
using namespace std::chrono_literals;

namespace cuview::faults {

std::vector<Row> frozen_and_slow(const Config& c) {
  RuntimeDir rt;
  auto daemon = daemon_for(c, "f");
  const double rate0 = step_rate("f", c.freeze);
  std::vector<Row> rows;
  auto judge = [&](Row& row, const StatsView& a, const StatsView& b, double rate) {
    ++row.trials;
    if (b.step <= a.step) row.fail("the simulation stopped stepping");
    if (b.frames_published <= a.frames_published) row.fail("the daemon stopped publishing frames");
    if (!daemon.running()) row.fail("the daemon exited");
    row.worst = "step rate " + fmt(rate, 0) + "/s = " + fmt(rate / rate0, 3) + "× the rate with no viewer (" +
                fmt(rate0, 0) + "/s)";
  };
  {
    Row row{"frozen viewer: SIGSTOP for " + std::to_string(c.freeze.count()) + " s while it holds a frame"};
    ChildProcess v({bin("cuview-ctl"), "--name", "f", "attach", "--frames", "1000000", "--verify"});
    (void)wait_stats("f", [](const StatsView& s) { return s.readers == 1; });
    v.signal(SIGSTOP);
    const auto a = stats("f");
    const double rate = step_rate("f", c.freeze);
    judge(row, a, stats("f"), rate);
    v.signal(SIGCONT);
    rows.push_back(row);
  }
  {
    Row row{"slow viewer: reads one frame per second"};
    ChildProcess v(
        {bin("cuview-ctl"), "--name", "f", "attach", "--frames", "1000000", "--verify", "--hold-ms", "1000"});
    (void)wait_stats("f", [](const StatsView& s) { return s.readers == 1; });
    const auto a = stats("f");
    const double rate = step_rate("f", c.slow);
    judge(row, a, stats("f"), rate);
    rows.push_back(row);
  }
  (void)wait_stats("f", [](const StatsView& s) { return s.readers == 0; });
  {
    Row row{std::to_string(c.many_viewers) + " viewers at once, each verifying every frame"};
    std::vector<ChildProcess> viewers;
    for (int i = 0; i < c.many_viewers; ++i)
      viewers.emplace_back(
          std::vector<std::string>{bin("cuview-ctl"), "--name", "f", "attach", "--frames", "1000000", "--verify"});
    const int n = c.many_viewers;
    (void)wait_stats(
        "f", [n](const StatsView& s) { return static_cast<int>(s.readers) == n; }, 60s);
    const auto a = stats("f");
    const double rate = step_rate("f", c.slow);
    judge(row, a, stats("f"), rate);
    for (auto& v : viewers) {
      if (!v.running()) row.fail("a viewer exited early: " + v.err());
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace cuview::faults
