// The viewer as a person uses it, in real windows on a private X server (window_test.hpp):
// cuview-gui started as a program, attached, closed with the keyboard, its daemon restarted.
#include <signal.h>

#include <catch2/catch.hpp>
#include <memory>

#include "viewer_test.hpp"
#include "window_test.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace cuview::gui;
using namespace std::chrono_literals;

TEST_CASE("cuview-gui --name attaches in a real window; Ctrl+Q closes it; --attach finds the simulation again",
          "[.window][window]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", Backend::host);
  auto gui = start_viewer({"--name", "t"});
  INFO(gui.err());
  REQUIRE(is_reading("t"));  // attached within seconds, as the README promises

  const auto window = x11::window_of(gui.pid());
  REQUIRE(window);
  REQUIRE(
      wait_for([&] { return x11::window_name(*window).find("cuview — t (grayscott 128×128 on host)") == 0; }, 10000));
  // The desktop knows it as the desktop entry's application, with cuview's icon at every size.
  CHECK_THAT(x11::property(*window, "WM_CLASS"), Catch::Contains("\"cuview-gui\""));
  const std::string icon = x11::property(*window, "_NET_WM_ICON");
  for (const std::string size : {"Icon (16 x 16)", "Icon (32 x 32)", "Icon (48 x 48)", "Icon (128 x 128)"}) {
    INFO("_NET_WM_ICON has " << size);  // (not the whole property: xprop draws every icon as text)
    CHECK(icon.find(size) != std::string::npos);
  }
  // What the X server shows in that window: a field with its colour bar, not a blank window.
  REQUIRE(wait_for([&] { return distinct_colours(screen_pixels(*window)) > 50; }, 10000));

  // Closing the window with the keyboard ends the viewer and leaves the simulation running.
  const auto before = stats("t").step;
  x11::focus(*window);
  x11::key("ctrl+q");
  REQUIRE(gui.wait_for(10s) == 0);
  REQUIRE(is_reading("t", 0));
  CHECK(daemon.running());
  const auto after = wait_stats("t", [&](const StatsView& s) { return s.step > before; });
  CHECK(after.held_slots == 0);

  // Started again with --attach, it goes back to the daemon it used last, further on.
  auto again = start_viewer({"--attach"});
  INFO(again.err());
  REQUIRE(is_reading("t"));
  const auto window2 = x11::window_of(again.pid());
  REQUIRE(window2);
  REQUIRE(wait_for([&] { return x11::window_name(*window2).find("cuview — t") == 0; }, 10000));
}

TEST_CASE("in a real window the daemon killed and restarted under the viewer is re-attached by itself",
          "[.window][window]") {
  RuntimeDir rt;
  auto daemon = std::make_unique<ChildProcess>(start_daemon("t", Backend::host));
  auto gui = start_viewer({"--name", "t"});
  INFO(gui.err());
  REQUIRE(is_reading("t"));
  const auto old_session = stats("t").session;
  daemon->signal(SIGKILL);
  REQUIRE(daemon->wait_for(10s));
  daemon = std::make_unique<ChildProcess>(start_daemon("t", Backend::host));
  REQUIRE(is_reading("t"));
  CHECK(stats("t").session != old_session);
  CHECK(gui.running());
}
