// The viewer, driven through its real widgets against real daemons.
#include <signal.h>

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFontMetrics>
#include <QImage>
#include <QLabel>
#include <QSet>
#include <QSettings>
#include <QWheelEvent>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>

#include "backend_test.hpp"
#include "cuview/client.hpp"
#include "main_window.hpp"
#include "render/render.hpp"
#include "viewer_test.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace cuview::gui;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

TEST_CASE("the viewer draws a known field with the colormap's colours", "[gui]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", Backend::host, {"--paused"});  // step 0: a known, still field
  auto w = open_viewer("t");
  REQUIRE(shows_frames(*w));
  w->set_field("v");
  w->set_colormap(Colormap::grayscale);
  w->set_fixed_range(0, 1);
  REQUIRE(wait_for([&] {
    const auto& f = w->view()->last_frame();
    return f.field == 1 && f.colormap == Colormap::grayscale && f.lo == 0 && f.hi == 1;
  }));

  auto reader = Client::attach(AttachOptions{.name = "t", .client = "test reader"});
  auto frame = reader.next_frame(5s);
  REQUIRE(frame);
  const auto& shown = w->view()->last_frame();
  REQUIRE(shown.info.seq == frame->info().seq);
  const float* v = frame->host_field(1);
  const QImage& img = shown.image;
  const auto gray = check_grayscale(img, v);
  INFO(gray.first_wrong);
  CHECK(gray.wrong == 0);
  CHECK(gray.checked > 1500);
  CHECK(gray.nonzero > 0);  // the seeds of v are in the sample, not only its zero background

  // viridis: u = 1 (background) is matplotlib's #fde725; the seeds (u ≈ 0.5) are #21918c. The
  // map is a polynomial fit of matplotlib's table, within 6/255 per channel.
  w->set_field("u");
  w->set_colormap(Colormap::viridis);
  REQUIRE(wait_for(
      [&] { return w->view()->last_frame().field == 0 && w->view()->last_frame().colormap == Colormap::viridis; }));
  const QImage& vi = w->view()->last_frame().image;
  const double ppc = std::min(vi.width(), vi.height()) / 128.0;
  const double x0 = vi.width() / 2.0 - 64 * ppc, y0 = vi.height() / 2.0 - 64 * ppc;
  const float* u = frame->host_field(0);
  auto near = [](QRgb c, QRgb want) {
    return std::abs(channel(c, 16) - channel(want, 16)) <= 6 && std::abs(channel(c, 8) - channel(want, 8)) <= 6 &&
           std::abs(channel(c, 0) - channel(want, 0)) <= 6;
  };
  int ones = 0, halves = 0, wrong = 0;
  QString first_wrong;
  for (int cy = 0; cy < 128; ++cy) {
    for (int cx = 0; cx < 128; ++cx) {
      const float value = u[cy * 128 + cx];
      const QRgb c = vi.pixel(static_cast<int>(x0 + (cx + 0.5) * ppc), static_cast<int>(y0 + (cy + 0.5) * ppc));
      QRgb want = 0;
      if (value == 1.0f) {
        want = 0xfde725, ++ones;
      } else if (std::abs(value - 0.5f) < 0.002f) {
        want = 0x21918c, ++halves;
      } else {
        continue;
      }
      if (!near(c, want) && wrong++ == 0)
        first_wrong = QString("cell (%1, %2) = %3 drawn #%4, expected #%5")
                          .arg(cx)
                          .arg(cy)
                          .arg(value)
                          .arg(c & 0xffffff, 6, 16, QChar('0'))
                          .arg(want, 6, 16, QChar('0'));
    }
  }
  INFO(first_wrong.toStdString());
  CHECK(wrong == 0);
  CHECK(ones > 1000);
  CHECK(halves > 0);
}

BACKEND_TEST("the viewer's picture and readout show the field's exact values at every zoom level", "[gui]") {
  RuntimeDir rt;
  auto daemon = start_daemon("z", backend, {"--paused"}, "300x200");
  REQUIRE(ctl("z", {"step", "300"}).code == 0);  // structure worth looking at, then still
  auto w = open_viewer("z");
  REQUIRE(shows_frames(*w));
  // The field as another process reads it (on CUDA the copy engine brings the whole slot).
  const auto saved = (rt.path() / "frame.bin").string();
  std::uint64_t seq = 0;
  REQUIRE(wait_for([&] {
    const auto r = ctl("z", {"attach", "--frames", "1", "--save", saved});
    std::smatch m;
    static const std::regex kSaved("saved frame (\\d+) \\(step 300");
    if (r.code != 0 || !std::regex_search(r.out, m, kSaved)) return false;
    seq = std::stoull(m[1]);
    return true;
  }));
  auto control = Client::attach(AttachOptions{.name = "z", .client = "test", .import = Import::control_only});
  const auto& d = control.description();
  std::vector<char> slot(d.slot_bytes);
  std::ifstream(saved, std::ios::binary).read(slot.data(), static_cast<std::streamsize>(slot.size()));
  std::vector<float> u(300 * 200);
  std::memcpy(u.data(), slot.data() + d.fields[0].offset, u.size() * sizeof(float));

  FieldView* view = w->view();
  auto wheel = [&](QPoint at, int notches) {
    QWheelEvent e(at, view->mapToGlobal(at), QPoint(), QPoint(0, 120 * notches), Qt::NoButton, Qt::NoModifier,
                  Qt::NoScrollPhase, false);
    QApplication::sendEvent(view, &e);
  };
  // Whole field, zoomed in around two points (rows and columns copied exactly), zoomed far out.
  const std::vector<std::pair<QPoint, int>> steps{{{0, 0}, 0}, {{200, 150}, 3}, {{90, 400}, 9}, {{450, 300}, -17}};
  for (const auto& [at, notches] : steps) {
    const double before = view->last_frame().pixels_per_cell;
    if (notches != 0) wheel(at, notches);
    REQUIRE(wait_for([&] {
      const auto& f = view->last_frame();
      return f.info.seq == seq && f.field == 0 && (notches == 0 || f.pixels_per_cell != before);
    }));
    const auto& f = view->last_frame();
    ViewTransform t;
    t.field_w = f.field_w, t.field_h = f.field_h, t.view_w = f.image.width(), t.view_h = f.image.height();
    t.center_x = f.center_x, t.center_y = f.center_y, t.pixels_per_cell = f.pixels_per_cell;
    t.lo = f.lo, t.hi = f.hi;
    const auto lut = make_lut(f.colormap);
    int wrong = 0, inside = 0;
    QString first_wrong;
    for (int py = 0; py < t.view_h; ++py) {
      for (int px = 0; px < t.view_w; ++px) {
        std::uint32_t rgba = 0;
        float value = 0;
        render_pixel(u.data(), lut.data(), t, px, py, rgba, value);
        const float shown = (*f.values)[static_cast<std::size_t>(py) * t.view_w + px];
        const bool same_value = std::isnan(value) ? std::isnan(shown) : shown == value;
        inside += std::isnan(value) ? 0 : 1;
        if ((!same_value || f.image.pixel(px, py) != rgba) && wrong++ == 0)
          first_wrong = QString("pixel (%1, %2): shows %3 #%4, the field has %5 #%6")
                            .arg(px)
                            .arg(py)
                            .arg(shown)
                            .arg(f.image.pixel(px, py), 8, 16, QChar('0'))
                            .arg(value)
                            .arg(rgba, 8, 16, QChar('0'));
      }
    }
    INFO("zoom " << view->zoom() << ", " << t.pixels_per_cell << " pixels per cell: " << first_wrong.toStdString());
    CHECK(wrong == 0);
    CHECK(inside > 1000);
    // The readout under a pixel names its cell and the cell's exact value.
    const QPoint probe(t.view_w / 3, t.view_h / 2);
    int cx = 0, cy = 0;
    if (t.cell_at(probe.x(), probe.y(), cx, cy)) {
      const double value = u[static_cast<std::size_t>(cy) * 300 + cx];
      CHECK(view->readout(probe) == QString("(%1, %2) = %3").arg(cx).arg(cy).arg(value, 0, 'g', 6));
    }
  }
}

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
  auto s = wait_stats("t", [](const StatsView& v) { return v.readers == 0; });
  CHECK(s.clients == 1);  // only this query
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

BACKEND_TEST("particles are drawn as points coloured by their speed, only where they are", "[gui]") {
  RuntimeDir rt;
  auto daemon = start_daemon("p", backend, {"--sim", "nbody", "--sim-option", "bodies=300", "--paused"}, "200x200");
  auto w = open_viewer("p");
  REQUIRE(shows_frames(*w));
  w->set_field("bodies (points)");
  REQUIRE(wait_for([&] { return w->view()->last_frame().field == 1; }));
  // The speeds of the frame the viewer shows, as another process reads them.
  auto reader = Client::attach(AttachOptions{.name = "p", .client = "test reader"});
  auto frame = reader.next_frame(5s);
  REQUIRE(frame);
  const auto& set = reader.description().particles.at(0);
  std::vector<std::byte> slot(reader.description().slot_bytes);
  frame->copy_to_host(slot);
  const auto& vel = set.attributes.at(1);
  REQUIRE(vel.name == "velocity");
  std::vector<float> v(300 * 3);
  std::memcpy(v.data(), slot.data() + vel.offset, v.size() * sizeof(float));
  float lo = INFINITY, hi = 0;
  for (int i = 0; i < 300; ++i) {
    const float s = std::sqrt(v[3 * i] * v[3 * i] + v[3 * i + 1] * v[3 * i + 1] + v[3 * i + 2] * v[3 * i + 2]);
    lo = std::min(lo, s), hi = std::max(hi, s);
  }
  REQUIRE(wait_for([&] { return w->view()->last_frame().info.seq == frame->info().seq; }));
  const auto& shown = *w->view()->last_frame().values;
  int points = 0, outside = 0;
  for (float x : shown) {
    if (std::isnan(x)) continue;
    ++points;
    if (x < lo - 1e-6f || x > hi + 1e-6f) ++outside;
  }
  CHECK(points > 200);   // most of the 300 bodies have a pixel of their own
  CHECK(points <= 300);  // and nothing else is drawn
  CHECK(outside == 0);   // each shows a speed of some body

  // Coloured by another attribute: the list offers one view per attribute; by mass, every point
  // shows the central body's 0.5 or a disc body's 0.5 / 299.
  auto* fields = w->findChild<QComboBox*>("field");
  REQUIRE(fields);
  CHECK(fields->findText("bodies (points by velocity)") == 1);
  CHECK(fields->findText("bodies (points by mass)") == 2);
  w->set_field("bodies (points by mass)");
  REQUIRE(wait_for([&] { return w->view()->last_frame().field == 2; }));
  int light = 0, heavy = 0, other = 0;
  for (float x : *w->view()->last_frame().values) {
    if (std::isnan(x)) continue;
    if (std::abs(x - 0.5f / 299) < 1e-7f)
      ++light;
    else if (std::abs(x - 0.5f) < 1e-6f)
      ++heavy;
    else
      ++other;
  }
  CHECK(light > 200);
  CHECK(heavy <= 1);
  CHECK(other == 0);
}

BACKEND_TEST("arrows over a vector field point along the flow", "[gui]") {
  RuntimeDir rt;
  auto daemon = start_daemon("a", backend, {"--sim", "lbm", "--paused"}, "160x64");
  REQUIRE(ctl("a", {"step", "400"}).code == 0);
  auto w = open_viewer("a");
  REQUIRE(shows_frames(*w));
  w->set_field("velocity");
  auto* arrows = w->findChild<QCheckBox*>("arrows");
  REQUIRE(arrows);
  auto white = [](QRgb c) { return qRed(c) > 200 && qGreen(c) > 200 && qBlue(c) > 200; };  // no colormap is white
  auto count_white = [&](const QImage& img) {
    int n = 0;
    for (int y = 0; y < img.height(); ++y)
      for (int x = 0; x < img.width(); ++x) n += white(img.pixel(x, y));
    return n;
  };
  REQUIRE(wait_for([&] { return w->view()->last_frame().field == 0; }));
  CHECK(count_white(w->view()->last_frame().image) == 0);
  arrows->setChecked(true);
  REQUIRE(wait_for([&] { return count_white(w->view()->last_frame().image) > 100; }));
  // Upstream of the cylinder the flow runs along +x: the arrow through a sample point there is
  // horizontal (white to its right, not below it).
  const auto& f = w->view()->last_frame();
  // The arrow nearest the inlet on the channel's middle rows (arrows are 24 pixels apart, so
  // which cell that is depends on the view's size), well before the flow turns around the
  // cylinder (radius 6.4, centred at x = 32).
  QPoint arrow(-1, -1);
  double arrow_x = 1e9, arrow_y = 0;
  for (int py = 12; py < f.image.height(); py += 24)
    for (int px = 12; px < f.image.width(); px += 24) {
      double cx = 0, cy = 0;
      if (w->view()->cell_coords(QPoint(px, py), cx, cy) && std::abs(cy - 32) <= 10 && cx < arrow_x)
        arrow = QPoint(px, py), arrow_x = cx, arrow_y = cy;
    }
  INFO("arrow at pixel (" << arrow.x() << ", " << arrow.y() << "), cell (" << arrow_x << ", " << arrow_y << ")");
  REQUIRE(arrow_x <= 12);
  const int px = arrow.x(), py = arrow.y();
  CHECK((white(f.image.pixel(px + 3, py)) || white(f.image.pixel(px + 3, py - 1)) ||
         white(f.image.pixel(px + 3, py + 1))));
  CHECK_FALSE(white(f.image.pixel(px, py + 6)));
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

TEST_CASE("the colour bar's labels fit it, whatever the range", "[gui]") {
  ColorBar bar;
  bar.resize(bar.sizeHint());
  bar.show();
  REQUIRE(wait_for([&] { return bar.isVisible(); }, 5000));
  const QFontMetrics fm(bar.font());
  for (const auto& [lo, hi] : std::vector<std::pair<float, float>>{{-0.0599f, 0.0599f},
                                                                   {0.0f, 1.0f},
                                                                   {0.9983f, 1.0021f},
                                                                   {-1.234e-5f, 3.4e-6f},
                                                                   {-3.3e38f, 3.3e38f},
                                                                   {-0.000123f, -0.000101f},
                                                                   {12345.0f, 99999.0f}}) {
    bar.set(Colormap::diverging, lo, hi);
    const auto labels = bar.labels();
    REQUIRE(labels.size() == 5);
    for (const auto& l : labels) {
      INFO("range " << lo << ".." << hi << ": label '" << l.text.toStdString() << "' in " << l.rect.width()
                    << " pixels from x = " << l.rect.left() << " of a bar " << bar.width() << " wide");
      CHECK(fm.horizontalAdvance(l.text) <= l.rect.width());
      CHECK(l.rect.left() >= 0);
      CHECK(l.rect.right() < bar.width());
      CHECK(l.text.size() <= 9);
    }
  }
  bar.set(Colormap::diverging, -0.0599f, 0.0599f);
  const auto labels = bar.labels();
  CHECK(labels.front().text == "-0.0599");
  CHECK(labels[2].text == "0");  // the middle of a symmetric range, not a rounding error
  CHECK(labels.back().text == "0.0599");
}
