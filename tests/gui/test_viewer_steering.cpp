// Steering from the viewer, offscreen: what it sets reaches the daemon, repeated settings are
// merged before they do, and a refusal is shown.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "main_window.hpp"
#include "viewer_test.hpp"
#include "worker/command_queue.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace cuview::gui;
using namespace std::chrono_literals;

TEST_CASE("a command posted with a key replaces a queued one of that key; the others keep their order", "[gui]") {
  CommandQueue queue;
  auto command = [](const QString& what, const QString& key) { return Command{what, key, [](cuview::Attachment&) {}}; };
  queue.post(command("set F 0.02", "set F"));
  queue.post(command("step", {}));
  queue.post(command("set F 0.03", "set F"));
  queue.post(command("set k 0.06", "set k"));
  queue.post(command("step", {}));
  queue.post(command("set F 0.04", "set F"));
  QStringList taken;
  for (const auto& c : queue.take()) taken << c.what;
  CHECK(taken == QStringList{"step", "set k 0.06", "step", "set F 0.04"});
  CHECK(queue.empty());
}

TEST_CASE("a parameter changed in the viewer is seen by cuview-ctl status", "[gui]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", Backend::host);
  auto w = open_viewer("t");
  REQUIRE(shows_frames(*w));
  w->set_parameter("F", 0.031);
  REQUIRE(wait_for([&] { return stats("t").F == 0.031; }, 10000));
  auto r = ctl("t", {"status", "--json"});
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out).at("params").at("F") == 0.031);
  w->set_parameter("F", 0.5);  // out of range: refused, shown, nothing changes
  REQUIRE(wait_for([&] { return w->last_error().contains("out of range"); }, 10000));
  CHECK(stats("t").F == 0.031);
}

TEST_CASE("a spin box dragged through many values leaves the daemon at the last one", "[gui]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", Backend::host);
  auto w = open_viewer("t");
  REQUIRE(shows_frames(*w));
  for (int i = 0; i < 40; ++i) w->set_parameter("F", 0.020 + i * 0.00025);
  w->set_parameter("F", 0.031);
  REQUIRE(wait_for([&] { return stats("t").F == 0.031; }, 10000));
  CHECK(w->last_error().isEmpty());
}
