// The viewer's connection, offscreen: detaching and re-attaching, a daemon killed, stopped with a
// checkpoint or restarted under it, the viewer itself restarted.
#include <signal.h>

#include <QAction>
#include <QLabel>
#include <catch2/catch.hpp>
#include <memory>

#include "main_window.hpp"
#include "viewer_test.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace cuview::gui;
using namespace std::chrono_literals;

TEST_CASE("the viewer detaches and re-attaches 20 times, leaving nothing behind", "[gui]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", Backend::host);
  auto w = open_viewer("t");
  for (int i = 0; i < 20; ++i) {
    REQUIRE(shows_frames(*w, w->frames_displayed()));
    w->detach();
    REQUIRE(wait_for([&] { return w->connection() == Connection::detached; }));
    w->attach_to("t");
  }
  REQUIRE(shows_frames(*w, w->frames_displayed()));
  w->detach();
  REQUIRE(wait_for([&] { return w->connection() == Connection::detached; }));
  // The daemon forgets the viewer as its detach arrives (on a loaded machine after the viewer
  // says it is detached): only this query stays.
  auto s = wait_stats("t", [](const StatsView& v) { return v.readers == 0 && v.clients == 1; });
  CHECK(s.clients == 1);
  CHECK(s.held_slots == 0);
}

TEST_CASE("a killed daemon shows as disconnected and a restarted one is re-attached by itself", "[gui]") {
  RuntimeDir rt;
  auto daemon = std::make_unique<ChildProcess>(start_daemon("t", Backend::host));
  auto w = open_viewer("t");
  REQUIRE(shows_frames(*w));
  const QString old_session = w->session();
  daemon->signal(SIGKILL);
  REQUIRE(daemon->wait_for(10s));
  REQUIRE(wait_for([&] { return w->connection() == Connection::waiting; }, 5000));
  CHECK(w->connection_text() == "disconnected — waiting for t");
  CHECK(w->view()->has_frame());  // the window stays up with the last picture

  daemon = std::make_unique<ChildProcess>(start_daemon("t", Backend::host));
  const quint64 before = w->frames_displayed();
  REQUIRE(shows_frames(*w, before));
  CHECK(w->session() != old_session);
  CHECK(w->session().toStdString() == stats("t").session);
}

TEST_CASE("a SIGTERM under the viewer writes a checkpoint; the daemon restored from it is re-attached at that step",
          "[gui][checkpoint]") {
  RuntimeDir rt;
  const auto dir = (rt.path() / "ckpt").string();
  auto daemon = std::make_unique<ChildProcess>(
      start_daemon("t", Backend::host, {"--sim", "lbm", "--paused", "--checkpoint-dir", dir}, "96x40"));
  REQUIRE(ctl("t", {"step", "37"}).code == 0);
  auto w = open_viewer("t");
  REQUIRE(shows_frames(*w));
  REQUIRE(wait_for([&] { return w->view()->last_frame().info.step == 37; }, 5000));
  // "Checkpoint now" from the Daemon menu: the daemon writes one and the status bar says when.
  auto* now = w->findChild<QAction*>("checkpoint_now");
  REQUIRE(now);
  REQUIRE(wait_for([&] { return now->isEnabled(); }, 5000));
  auto* label = w->findChild<QLabel*>("checkpoint");
  REQUIRE(label);
  CHECK(label->text() == "no checkpoint yet");
  now->trigger();
  REQUIRE(wait_for([&] { return label->text().endsWith("· step 37"); }, 10000));
  CHECK(label->toolTip().toStdString() == dir + "/step-000000000037.h5");
  REQUIRE(ctl("t", {"step", "5"}).code == 0);
  REQUIRE(wait_for([&] { return w->view()->last_frame().info.step == 42; }, 5000));

  const QString old_session = w->session();
  daemon->signal(SIGTERM);
  REQUIRE(daemon->wait_for(30s) == 0);
  CHECK_THAT(daemon->err(), Catch::Contains("final checkpoint: " + dir + "/step-000000000042.h5"));
  REQUIRE(wait_for([&] { return w->connection() == Connection::waiting; }, 5000));

  daemon = std::make_unique<ChildProcess>(start_daemon(
      "t", Backend::host, {"--sim", "lbm", "--paused", "--checkpoint-dir", dir, "--restore", "latest"}, "96x40"));
  REQUIRE(wait_for([&] { return w->session() != old_session && w->connection() == Connection::connected; }, 10000));
  REQUIRE(wait_for([&] { return w->view()->last_frame().info.step == 42; }, 5000));
  CHECK(stats("t").step == 42);
}

TEST_CASE("a restarted viewer finds the simulation further on, nothing lost", "[gui]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", Backend::host);
  std::uint64_t first_step = 0;
  {
    auto w = open_viewer("t");
    REQUIRE(shows_frames(*w));
    first_step = w->view()->last_frame().info.step;
  }
  const auto between = stats("t").step;
  CHECK(between >= first_step);
  auto w = open_viewer("t");
  REQUIRE(shows_frames(*w));
  // Its first frame may be the one the first viewer saw last (nothing published in between).
  CHECK(wait_for([&] { return w->view()->last_frame().info.step > first_step; }, 2000));
  // The newest frame at attach time may be up to one frame interval older than `between`; the
  // viewer is at the simulation's step from the next frame on.
  CHECK(wait_for([&] { return w->view()->last_frame().info.step >= between; }, 2000));
}
