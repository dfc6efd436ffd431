// cuview-gui as a program: --screenshot, headless mistakes, --help and --version, and headless
// shots that neither read nor change what interactive runs remember.
#include <QImage>
#include <QSet>
#include <QSettings>
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "backend_test.hpp"
#include "viewer_test.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace cuview::gui;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

BACKEND_TEST("cuview-gui --screenshot attaches, waits for frames and saves a PNG", "[gui]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  const char* keep = std::getenv("CUVIEW_SCREENSHOT_DIR");
  const fs::path dir = keep != nullptr ? fs::path(keep) : rt.path();
  const fs::path png = dir / (std::string("screenshot-") + to_string(backend) + ".png");
  ChildProcess gui(
      {bin("cuview-gui"), "--name", "t", "--screenshot", png.string(), "--frames", "20", "--screenshot-window"});
  auto code = gui.wait_for(60s);
  INFO(gui.err());
  REQUIRE(code);
  CHECK(*code == 0);
  QImage img(QString::fromStdString(png.string()));
  REQUIRE_FALSE(img.isNull());
  CHECK(img.width() > 300);
  QSet<QRgb> colours;
  for (int y = 0; y < img.height(); y += 7)
    for (int x = 0; x < img.width(); x += 7) colours.insert(img.pixel(x, y));
  CHECK(colours.size() > 50);  // a field, not a blank window
}

TEST_CASE("headless mistakes end with a message and a non-zero exit", "[gui][bad-input]") {
  RuntimeDir rt;
  ChildProcess nobody(
      {bin("cuview-gui"), "--name", "nobody", "--screenshot", (rt.path() / "x.png").string(), "--timeout", "2"});
  REQUIRE(nobody.wait_for(30s) == 1);
  CHECK_THAT(nobody.err(), Catch::Contains("'nobody'") && Catch::Contains("cuview-compute --name nobody"));

  auto daemon = start_daemon("t", Backend::host);
  ChildProcess unwritable({bin("cuview-gui"), "--name", "t", "--screenshot", "/nonexistent-dir/x.png"});
  REQUIRE(unwritable.wait_for(30s) == 1);
  CHECK_THAT(unwritable.err(), Catch::Contains("/nonexistent-dir") && Catch::Contains("does not exist"));
  ChildProcess frames({bin("cuview-gui"), "--name", "t", "--screenshot", "x.png", "--frames", "zero"});
  REQUIRE(frames.wait_for(30s) == 2);
  CHECK_THAT(frames.err(), Catch::Contains("--frames") && Catch::Contains("zero"));
  ChildProcess unknown({bin("cuview-gui"), "--nmae", "t"});
  REQUIRE(unknown.wait_for(30s) == 2);
  CHECK_THAT(unknown.err(), Catch::Contains("unknown option --nmae") && Catch::Contains("--help"));
}

TEST_CASE("with DISPLAY naming no X server, --screenshot still saves and an interactive start says why in one line",
          "[gui][bad-input]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", Backend::host);
  int n = 500;
  while (fs::exists("/tmp/.X11-unix/X" + std::to_string(n))) ++n;
  const std::string gone = "DISPLAY=:" + std::to_string(n);  // an ssh session whose X forwarding died
  const fs::path png = rt.path() / "shot.png";
  ChildProcess shot({"/usr/bin/env", "-u", "QT_QPA_PLATFORM", "-u", "WAYLAND_DISPLAY", gone, bin("cuview-gui"), "--name",
                     "t", "--screenshot", png.string(), "--frames", "2"});
  CHECK(shot.wait_for(60s) == 0);
  INFO(shot.err());
  CHECK_FALSE(QImage(QString::fromStdString(png.string())).isNull());
  for (const std::string& display : {gone, std::string("DISPLAY=")}) {
    ChildProcess window({"/usr/bin/env", "-u", "QT_QPA_PLATFORM", "-u", "WAYLAND_DISPLAY", display, bin("cuview-gui"),
                         "--name", "t"});
    const auto code = window.wait_for(30s);
    const std::string err = window.err();
    INFO(display << ": " << err);
    CHECK(code == 1);  // not SIGABRT (134)
    CHECK_THAT(err, Catch::Contains("cannot open a window") && Catch::Contains("--screenshot"));
    CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  }
}

TEST_CASE("cuview-gui --help and --version work with no display", "[gui]") {
  const std::vector<std::string> no_display{"/usr/bin/env",    "-u", "DISPLAY",         "-u",
                                            "WAYLAND_DISPLAY", "-u", "QT_QPA_PLATFORM", bin("cuview-gui")};
  auto run = [&](const std::string& option) {
    auto argv = no_display;
    argv.push_back(option);
    ChildProcess p(argv);
    const auto code = p.wait_for(30s);
    INFO(option << ": " << p.err());
    REQUIRE(code == 0);
    return p.out();
  };
  const std::string help = run("--help");
  CHECK_THAT(help, Catch::Contains("--name") && Catch::Contains("--attach") && Catch::Contains("--screenshot"));
  CHECK(run("--version") == "cuview-gui " CUVIEW_VERSION "\n");
}

namespace {
/// cuview-gui --screenshot PATH with its settings (QSettings) under `config` (XDG_CONFIG_HOME): a
/// user's, whose interactive runs keep theirs there. Returns the PNG.
QImage headless_shot(const fs::path& config, const fs::path& png, const std::vector<std::string>& options) {
  std::vector<std::string> argv{"/usr/bin/env", "XDG_CONFIG_HOME=" + config.string(), bin("cuview-gui"), "--screenshot",
                                png.string()};
  argv.insert(argv.end(), options.begin(), options.end());
  ChildProcess gui(argv);
  const auto code = gui.wait_for(60s);
  INFO(png.filename().string() << ": " << gui.err());
  REQUIRE(code == 0);
  QImage img(QString::fromStdString(png.string()));
  REQUIRE_FALSE(img.isNull());
  return img;
}

std::string contents(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Where two pictures differ, in words; empty when they are alike, pixel for pixel.
std::string difference(const QImage& a, const QImage& b) {
  if (a.size() != b.size())
    return QString("%1×%2 against %3×%4").arg(a.width()).arg(a.height()).arg(b.width()).arg(b.height()).toStdString();
  for (int y = 0; y < a.height(); ++y)
    for (int x = 0; x < a.width(); ++x)
      if (a.pixel(x, y) != b.pixel(x, y))
        return QString("pixel (%1, %2): #%3 against #%4")
            .arg(x)
            .arg(y)
            .arg(a.pixel(x, y) & 0xffffff, 6, 16, QChar('0'))
            .arg(b.pixel(x, y) & 0xffffff, 6, 16, QChar('0'))
            .toStdString();
  return {};
}

int distinct_colours(const QImage& img) {
  QSet<QRgb> colours;
  for (int y = 0; y < img.height(); y += 3)
    for (int x = 0; x < img.width(); x += 3) colours.insert(img.pixel(x, y));
  return static_cast<int>(colours.size());
}
}  // namespace

TEST_CASE("a headless --screenshot ignores what interactive runs remembered, and changes none of it",
          "[gui][settings]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", Backend::host, {"--paused"});  // one still frame: every shot of it alike
  const fs::path fresh = rt.path() / "fresh-config", used = rt.path() / "used-config";
  const fs::path conf = used / "cuview" / "cuview-gui.conf";  // where cuview-gui's QSettings live

  // With nothing remembered: the defaults. And the shot leaves nothing behind.
  const QImage plain = headless_shot(fresh, rt.path() / "plain.png", {"--name", "t"});
  CHECK(distinct_colours(plain) > 50);  // a field, not a blank view
  CHECK_FALSE(fs::exists(fresh / "cuview" / "cuview-gui.conf"));

  // What an interactive session leaves behind: another colormap, a fixed range, a smaller window,
  // another daemon.
  {
    QSettings s(QString::fromStdString(conf.string()), QSettings::IniFormat);
    s.setValue("view/colormap", "magma");
    s.setValue("view/range_mode", 1);
    s.setValue("view/range_lo", 0.2);
    s.setValue("view/range_hi", 0.3);
    QWidget small;
    small.resize(420, 300);
    s.setValue("window/geometry", small.saveGeometry());
    s.setValue("daemon/name", "elsewhere");
  }
  const std::string remembered = contents(conf);
  REQUIRE_THAT(remembered, Catch::Contains("magma"));

  const QImage after_a_session = headless_shot(used, rt.path() / "after-a-session.png", {"--name", "t"});
  CHECK(difference(after_a_session, plain) == "");
  CHECK(contents(conf) == remembered);

  // What the options say counts: the colormap is in the picture.
  const QImage magma = headless_shot(used, rt.path() / "magma.png", {"--name", "t", "--colormap", "magma"});
  CHECK(magma.size() == plain.size());
  CHECK(magma != plain);
  CHECK(difference(magma,
                   headless_shot(fresh, rt.path() / "magma-fresh.png", {"--name", "t", "--colormap", "magma"})) == "");
  CHECK(contents(conf) == remembered);
}

TEST_CASE("a headless shot of a signed field is drawn in diverging around 0, unless --colormap says otherwise",
          "[gui]") {
  RuntimeDir rt;
  auto daemon = start_still_flow("flow");
  const fs::path config = rt.path() / "config";
  const std::vector<std::string> vorticity{"--name", "flow", "--field", "vorticity"};
  auto with = [&](std::vector<std::string> options, const std::vector<std::string>& more) {
    options.insert(options.end(), more.begin(), more.end());
    return options;
  };
  const QImage chosen_by_the_viewer = headless_shot(config, rt.path() / "auto.png", vorticity);
  CHECK(distinct_colours(chosen_by_the_viewer) > 50);
  CHECK(difference(chosen_by_the_viewer, headless_shot(config, rt.path() / "diverging.png",
                                                       with(vorticity, {"--colormap", "diverging"}))) == "");
  CHECK(chosen_by_the_viewer !=
        headless_shot(config, rt.path() / "viridis.png", with(vorticity, {"--colormap", "viridis"})));
}
