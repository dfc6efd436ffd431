// The viewer as a person uses it: real windows on an X server (Qt's xcb platform), real mouse and
// keyboard input through that server, pixels read back from the server. The cuview-gui program
// itself is started as a child process where the command line matters (--name, --attach, Ctrl+Q),
// and a window in this process is driven where the test must look inside (the Attach button's
// messages, the panel's spin boxes). Tagged [.window]: main() starts Xvfb for them, or reports them
// skipped where it cannot.
#include <signal.h>

#include <QAbstractItemView>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGuiApplication>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QPushButton>
#include <QScreen>
#include <QScrollBar>
#include <QSet>
#include <QSettings>
#include <QStatusBar>
#include <QWindow>
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "cuview/client.hpp"
#include "field_view.hpp"
#include "render/render.hpp"
#include "viewer_test.hpp"
#include "window_system.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace cuview::gui;
using namespace std::chrono_literals;

namespace {
/// cuview-gui started as from a terminal: the platform Qt picks from DISPLAY, nothing forced.
ChildProcess start_viewer(std::vector<std::string> args) {
  std::vector<std::string> argv{"/usr/bin/env", "-u", "QT_QPA_PLATFORM", bin("cuview-gui")};
  argv.insert(argv.end(), args.begin(), args.end());
  return ChildProcess(argv);
}

bool is_reading(const std::string& name, std::uint32_t readers = 1, std::chrono::milliseconds timeout = 10s) {
  try {
    wait_stats(
        name, [&](const StatsView& s) { return s.readers == readers; }, timeout);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

/// The X server's pixels of a window, by id (another process's too).
QImage screen_pixels(unsigned long window) {
  return QGuiApplication::primaryScreen()->grabWindow(static_cast<WId>(window)).toImage();
}

int distinct_colours(const QImage& img) {
  QSet<QRgb> colours;
  for (int y = 0; y < img.height(); y += 5)
    for (int x = 0; x < img.width(); x += 5) colours.insert(img.pixel(x, y));
  return static_cast<int>(colours.size());
}

QPoint centre_of(const QWidget* w) { return w->mapToGlobal(w->rect().center()); }

QPoint centre_of(const QListWidget* list, const QString& daemon) {
  for (int i = 0; i < list->count(); ++i)
    if (list->item(i)->data(Qt::UserRole).toString() == daemon)
      return list->viewport()->mapToGlobal(list->visualItemRect(list->item(i)).center());
  FAIL("daemon " << daemon.toStdString() << " is not in the Daemons list");
  return {};
}

/// A window of this process, shown and mapped by the X server, ready for input.
void show_real(MainWindow& w) {
  REQUIRE(QGuiApplication::platformName() == "xcb");
  w.show();
  REQUIRE(wait_for([&] { return w.windowHandle() != nullptr && w.windowHandle()->isExposed(); }, 10000));
  x11::focus(w.winId());
  REQUIRE(wait_for([&] { return w.isActiveWindow(); }, 5000));
}

void forget_window_geometry() { QSettings().remove("window/geometry"); }
}  // namespace

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

TEST_CASE("the Attach button, a double-click and the Daemon menu attach; Detach detaches", "[.window][window]") {
  RuntimeDir rt;
  auto t = start_daemon("t", Backend::host);
  forget_window_geometry();
  MainWindow w(attach_options());
  show_real(w);
  auto* list = w.findChild<QListWidget*>("daemons");
  auto* attach = w.findChild<QPushButton*>("attach");
  auto* detach = w.findChild<QPushButton*>("detach");
  REQUIRE((list && attach && detach));
  REQUIRE(wait_for([&] { return w.daemon_names() == QStringList{"t"}; }));
  REQUIRE(list->selectedItems().isEmpty());
  CHECK(w.view()->message().contains("Pick a running daemon in the Daemons list"));  // what to do, in the view

  SECTION("Attach with nothing selected and one daemon listed attaches to it; Detach detaches") {
    x11::click(centre_of(attach));
    REQUIRE(shows_frames(w));
    CHECK(is_reading("t"));
    CHECK(w.view()->message().isEmpty());
    x11::click(centre_of(detach));
    REQUIRE(wait_for([&] { return w.connection() == Connection::detached; }));
    CHECK(is_reading("t", 0));
  }

  SECTION("with several daemons and none selected, Attach says which to pick; a double-click attaches") {
    auto u = start_daemon("u", Backend::host);
    REQUIRE(wait_for([&] { return w.daemon_names().size() == 2; }));
    x11::click(centre_of(attach));
    REQUIRE(wait_for([&] { return w.last_error().contains("2 daemons are running (t, u)"); }, 5000));
    CHECK(w.last_error().contains("select one"));
    CHECK(w.connection() == Connection::detached);

    x11::click(centre_of(list, "u"), 2);
    REQUIRE(shows_frames(w));
    CHECK(is_reading("u"));
    CHECK(w.windowTitle().startsWith("cuview — u"));

    // Select t with a click, then Daemon → Attach from the keyboard (Alt+D, A): switches to t.
    x11::click(centre_of(list, "t"));
    REQUIRE(wait_for([&] { return list->selectedItems().size() == 1; }, 5000));
    x11::key("alt+d");
    REQUIRE(wait_for([] { return QApplication::activePopupWidget() != nullptr; }, 5000));
    x11::key("a");
    REQUIRE(
        wait_for([&] { return w.windowTitle().startsWith("cuview — t") && w.connection() == Connection::connected; }));
    CHECK(is_reading("t"));
    CHECK(is_reading("u", 0));

    // The selected daemon with the Attach button, then Daemon → Detach.
    x11::click(centre_of(list, "u"));
    x11::click(centre_of(attach));
    REQUIRE(
        wait_for([&] { return w.windowTitle().startsWith("cuview — u") && w.connection() == Connection::connected; }));
    CHECK(is_reading("u"));
    x11::key("alt+d");
    REQUIRE(wait_for([] { return QApplication::activePopupWidget() != nullptr; }, 5000));
    x11::key("d");
    REQUIRE(wait_for([&] { return w.connection() == Connection::detached; }));
    CHECK(is_reading("u", 0));
    CHECK(is_reading("t", 0));
  }
}

TEST_CASE("a parameter typed into the Simulation panel of a real window is seen by cuview-ctl status",
          "[.window][window]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", Backend::host);
  forget_window_geometry();
  MainWindow w(attach_options("t"));
  show_real(w);
  REQUIRE(shows_frames(w));
  QDoubleSpinBox* f = nullptr;
  REQUIRE(wait_for([&] { return (f = w.findChild<QDoubleSpinBox*>("param:F")) != nullptr && f->isVisible(); }));
  x11::click(centre_of(f));
  REQUIRE(wait_for([&] { return f->hasFocus(); }, 5000));
  x11::key("ctrl+a");
  x11::type("0.031");
  x11::key("Return");
  REQUIRE(wait_for([&] { return stats("t").F == 0.031; }, 10000));
  auto r = ctl("t", {"status", "--json"});
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out).at("params").at("F") == 0.031);
}

TEST_CASE("the X server's pixels of the view show a known field in the chosen colormap", "[.window][window]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", Backend::host, {"--paused"});  // step 0: a known, still field
  forget_window_geometry();
  MainWindow w(attach_options("t"));
  show_real(w);
  REQUIRE(shows_frames(w));
  w.set_field("v");
  w.set_colormap(Colormap::grayscale);
  w.set_fixed_range(0, 1);
  REQUIRE(wait_for([&] {
    const auto& f = w.view()->last_frame();
    return f.field == 1 && f.colormap == Colormap::grayscale && f.lo == 0 && f.hi == 1;
  }));
  auto reader = Client::attach(AttachOptions{.name = "t", .client = "test reader"});
  auto frame = reader.next_frame(5s);
  REQUIRE(frame);
  REQUIRE(w.view()->last_frame().info.seq == frame->info().seq);

  // Read back from the X server (not QWidget::grab): what reached the screen once it is painted.
  GrayscaleCheck gray;
  REQUIRE(wait_for(
      [&] {
        const QImage shown = grab_pixels(w.view());
        if (shown.size() != w.view()->last_frame().image.size()) return false;
        gray = check_grayscale(shown, frame->host_field(1));
        return gray.wrong == 0;
      },
      5000));
  INFO(gray.first_wrong);
  CHECK(gray.wrong == 0);
  CHECK(gray.checked > 1500);
  CHECK(gray.nonzero > 0);
}

TEST_CASE("the real window fits its text at its default size and resized", "[.window][window]") {
  RuntimeDir rt;
  auto daemon = start_daemon("a-daemon-with-a-long-name", Backend::host, {}, "1024x768");
  forget_window_geometry();
  MainWindow w(attach_options("a-daemon-with-a-long-name"));
  show_real(w);
  CHECK(w.size() == kDefaultWindowSize);
  REQUIRE(shows_frames(w));
  auto* list = w.findChild<QListWidget*>("daemons");
  auto* plot = w.findChild<RatePlot*>();
  REQUIRE((list && plot));
  REQUIRE(wait_for([&] { return list->count() == 1 && list->item(0)->text().contains("step"); }));
  REQUIRE(wait_for([&] { return plot->legend().front() != "steps/s ≤ 1"; }));  // rates have arrived

  for (const QSize size : {kDefaultWindowSize, QSize(760, 520), QSize(1500, 950)}) {
    w.resize(size);
    REQUIRE(wait_for(
        [&] {
          return w.windowHandle()->geometry().size() == w.size() &&
                 w.size() == w.size().expandedTo(w.minimumSizeHint());
        },
        5000));
    QApplication::processEvents();
    INFO("window " << w.width() << "×" << w.height() << " (asked " << size.width() << "×" << size.height() << ")");

    // The daemon's entry: as wide as the list's viewport at most, tall enough for its wrapped text.
    const QRect item = list->visualItemRect(list->item(0));
    const QFontMetrics fm(list->font());
    const QRect text = fm.boundingRect(QRect(0, 0, item.width() - 8, 10000), Qt::TextWordWrap, list->item(0)->text());
    INFO("entry '" << list->item(0)->text().toStdString() << "' in " << item.width() << "×" << item.height());
    CHECK(item.right() <= list->viewport()->width());
    CHECK(text.height() <= item.height());
    CHECK_FALSE(list->horizontalScrollBar()->isVisible());

    // The rate plot's legend: each line fits beside its colour swatch.
    const QFontMetrics pm(plot->font());
    for (const QString& line : plot->legend()) {
      INFO("legend '" << line.toStdString() << "' in a plot " << plot->width() << " wide");
      CHECK(pm.horizontalAdvance(line) + pm.height() + 12 <= plot->width());
    }
    CHECK(plot->width() >= plot->minimumSizeHint().width());

    // The status bar: no label narrower than its text.
    for (auto* label : w.statusBar()->findChildren<QLabel*>()) {
      if (!label->isVisible() || label->text().isEmpty()) continue;
      INFO("status '" << label->text().toStdString() << "' " << label->width() << " wide");
      CHECK(label->width() >= QFontMetrics(label->font()).horizontalAdvance(label->text()));
    }
  }
}

namespace {
/// The screen position of grid cell (x, y)'s centre in the view, as the last frame drew it.
QPoint screen_of_cell(const FieldView* v, double x, double y) {
  const auto& f = v->last_frame();
  const double px = (x + 0.5 - f.center_x) * f.pixels_per_cell + f.image.width() * 0.5;
  const double py = (y + 0.5 - f.center_y) * f.pixels_per_cell + f.image.height() * 0.5;
  return v->mapToGlobal(QPoint(static_cast<int>(px), static_cast<int>(py)));
}
}  // namespace

TEST_CASE("a vector field is shown as its magnitude, and an obstacle drawn with the mouse stops the flow there",
          "[.window][window]") {
  RuntimeDir rt;
  auto daemon = start_still_flow("flow");
  forget_window_geometry();
  MainWindow w(attach_options("flow"));
  show_real(w);
  REQUIRE(shows_frames(w));
  w.set_field("velocity");
  REQUIRE(wait_for([&] { return w.view()->last_frame().field == 0 && w.view()->last_frame().info.step == 400; }));
  {  // the picture's values are |velocity| of the very frame a client reads
    auto reader = Client::attach(AttachOptions{.name = "flow", .client = "test reader"});
    auto frame = reader.next_frame(5s);
    REQUIRE(frame);
    const auto& f = w.view()->last_frame();
    const int px = f.image.width() / 2, py = f.image.height() / 2;
    double cx = 0, cy = 0;
    REQUIRE(w.view()->cell_coords(QPoint(px, py), cx, cy));
    const float* uv = frame->host_field(0) + 2 * (static_cast<std::size_t>(cy) * 160 + static_cast<std::size_t>(cx));
    CHECK((*f.values)[static_cast<std::size_t>(py) * f.image.width() + px] ==
          Approx(std::sqrt(uv[0] * uv[0] + uv[1] * uv[1])).epsilon(1e-6));
  }
  auto* draw = w.findChild<QPushButton*>("draw");
  REQUIRE(draw);
  REQUIRE(wait_for([&] { return draw->isEnabled(); }));
  CHECK(draw->text() == "Draw obstacles");
  x11::click(centre_of(draw));
  REQUIRE(wait_for([&] { return draw->isChecked(); }, 5000));
  x11::click(screen_of_cell(w.view(), 110, 32));  // a left click draws a disc of the brush's radius
  auto c = Client::attach(AttachOptions{.name = "flow", .client = "test"});
  // The stroke reaches the daemon, which applies it at its next step.
  double speed = 1;
  REQUIRE(wait_for(
      [&] {
        c.step(1);
        auto f = c.next_frame(5s);
        if (!f) return false;
        speed = f->host_field(1)[32 * 160 + 110];
        return speed == 0.0f;
      },
      10000));
  CHECK(speed == 0.0f);
  x11::click(screen_of_cell(w.view(), 110, 32), 1, x11::Button::right);  // the right button erases
  REQUIRE(wait_for(
      [&] {
        c.step(20);
        auto f = c.next_frame(5s);
        return f && f->host_field(1)[32 * 160 + 110] > 0.0f;
      },
      10000));
}

TEST_CASE("bodies are drawn as points in a real window, and a click with the drawing tool places a body there",
          "[.window][window]") {
  RuntimeDir rt;
  auto daemon =
      start_daemon("nb", Backend::host, {"--sim", "nbody", "--sim-option", "bodies=300", "--paused"}, "200x200");
  forget_window_geometry();
  MainWindow w(attach_options("nb"));
  show_real(w);
  REQUIRE(shows_frames(w));
  w.set_field("bodies (points)");
  REQUIRE(wait_for([&] { return w.view()->last_frame().field == 1; }));
  int points = 0;
  for (float v : *w.view()->last_frame().values) points += std::isnan(v) ? 0 : 1;
  CHECK(points > 200);
  // What reached the X server: coloured points on the background, no more than there are bodies.
  REQUIRE(wait_for([&] {
    const QImage shown = grab_pixels(w.view());
    int lit = 0;
    for (int y = 0; y < shown.height(); ++y)
      for (int x = 0; x < shown.width(); ++x) lit += (shown.pixel(x, y) & 0xffffffu) != (gui::kBackground & 0xffffffu);
    return lit >= points && lit <= 300 + 40;  // the message overlay may add a few
  }));
  auto* draw = w.findChild<QPushButton*>("draw");
  REQUIRE(draw);
  INFO("button says: " << draw->text().toStdString() << ", enabled " << draw->isEnabled());
  REQUIRE(wait_for([&] { return draw->text() == "Draw bodies"; }));
  x11::click(centre_of(draw));
  REQUIRE(wait_for([&] { return draw->isChecked(); }, 5000));
  x11::click(screen_of_cell(w.view(), 50, 150));
  auto c = Client::attach(AttachOptions{.name = "nb", .client = "test"});
  const auto& set = c.description().particles.at(0);
  const auto& b = set.bounds;
  bool found = false;
  REQUIRE(wait_for(
      [&] {
        c.step(1);
        auto f = c.next_frame(5s);
        if (!f) return false;
        std::vector<std::byte> slot(c.description().slot_bytes);
        f->copy_to_host(slot);
        std::vector<float> pos(300 * 3), mass(300);
        std::memcpy(pos.data(), slot.data() + set.attributes[0].offset, pos.size() * 4);
        std::memcpy(mass.data(), slot.data() + set.attributes[2].offset, mass.size() * 4);
        for (int i = 0; i < 300; ++i) {
          if (std::abs(mass[i] - 0.05f) > 1e-7f) continue;
          const double gx = (pos[3 * i] - b[0]) / (b[1] - b[0]) * 200,
                       gy = (pos[3 * i + 1] - b[2]) / (b[3] - b[2]) * 200;
          found = std::abs(gx - 50.5) < 1.5 && std::abs(gy - 150.5) < 1.5;
          return true;
        }
        return false;
      },
      10000));
  CHECK(found);
}

namespace {
/// Picks `text` in a combo box as a person does: a click opens its list, a click on the entry.
void pick(QComboBox* combo, const QString& text) {
  const int row = combo->findText(text);
  REQUIRE(row >= 0);
  x11::click(centre_of(combo));
  REQUIRE(wait_for([&] { return combo->view()->isVisible(); }, 5000));
  QAbstractItemView* list = combo->view();
  x11::click(list->viewport()->mapToGlobal(list->visualRect(list->model()->index(row, 0)).center()));
  REQUIRE(wait_for([&] { return !list->isVisible() && combo->currentText() == text; }, 5000));
}

/// Every label of the colour bar is drawn whole inside it (what the user can read).
void check_labels_fit(const ColorBar* bar) {
  const QFontMetrics fm(bar->font());
  for (const auto& l : bar->labels()) {
    INFO("label '" << l.text.toStdString() << "': " << fm.horizontalAdvance(l.text) << " pixels, in " << l.rect.width()
                   << " from x = " << l.rect.left() << " of a bar " << bar->width() << " wide");
    CHECK(fm.horizontalAdvance(l.text) <= l.rect.width());
    CHECK(l.rect.left() >= 0);
    CHECK(l.rect.right() < bar->width());
  }
}
}  // namespace

TEST_CASE("a signed field opens in diverging centred on 0, the user's pick wins, the colour bar's labels are whole",
          "[.window][window]") {
  RuntimeDir rt;
  auto daemon = start_still_flow("flow");
  forget_window_geometry();
  QSettings().remove("view");  // a first session: nothing chosen before
  MainWindow w(attach_options("flow"));
  show_real(w);
  REQUIRE(shows_frames(w));
  auto* colormap = w.findChild<QComboBox*>("colormap");
  auto* range = w.findChild<QComboBox*>("range_mode");
  auto* bar = w.findChild<ColorBar*>();
  REQUIRE((colormap && range && bar));
  CHECK(range->currentText() == "auto");
  auto frame_of = [&](int field, Colormap map) {
    return wait_for([&] {
      const auto& f = w.view()->last_frame();
      return f.field == field && f.colormap == map && colormap->currentText() == kColormapNames[int(map)].data();
    });
  };
  // velocity (shown as its magnitude) and speed are never negative: viridis.
  REQUIRE(frame_of(0, Colormap::viridis));
  check_labels_fit(bar);

  w.set_field("vorticity");
  REQUIRE(frame_of(2, Colormap::diverging));
  auto reader = Client::attach(AttachOptions{.name = "flow", .client = "test reader"});
  auto frame = reader.next_frame(5s);
  REQUIRE(frame);
  const RenderedFrame shown = w.view()->last_frame();
  REQUIRE(shown.info.seq == frame->info().seq);
  const float* vorticity = frame->host_field(2);
  float lowest = 0, highest = 0;
  for (int i = 0; i < 160 * 64; ++i) lowest = std::min(lowest, vorticity[i]), highest = std::max(highest, vorticity[i]);
  REQUIRE(lowest < 0);
  REQUIRE(highest > 0);
  const float m = std::max(-lowest, highest);
  CHECK(shown.lo == -m);  // the range is symmetric, and spans the strongest vortex
  CHECK(shown.hi == m);

  // What the X server shows: each sampled cell in the diverging colour of its value over −m..+m
  // (0 in the map's light middle, negative blue, positive red).
  const auto lut = make_lut(Colormap::diverging);
  int wrong = 0, checked = 0, negative = 0, positive = 0;
  std::string first_wrong;
  REQUIRE(wait_for(
      [&] {
        const QImage img = grab_pixels(w.view());
        if (img.size() != shown.image.size()) return false;
        wrong = checked = negative = positive = 0;
        for (int cy = 1; cy < 64; cy += 3)
          for (int cx = 1; cx < 160; cx += 3) {
            const float v = vorticity[cy * 160 + cx];
            const int px = static_cast<int>((cx + 0.5 - shown.center_x) * shown.pixels_per_cell + img.width() * 0.5);
            const int py = static_cast<int>((cy + 0.5 - shown.center_y) * shown.pixels_per_cell + img.height() * 0.5);
            const QRgb want = colour_of(v, lut.data(), -m, m), got = img.pixel(px, py);
            ++checked;
            if (v < -0.2f * m) ++negative;
            if (v > 0.2f * m) ++positive;
            if (std::abs(channel(got, 16) - channel(want, 16)) > 1 ||
                std::abs(channel(got, 8) - channel(want, 8)) > 1 || std::abs(channel(got, 0) - channel(want, 0)) > 1) {
              if (wrong++ == 0)
                first_wrong = "cell (" + std::to_string(cx) + ", " + std::to_string(cy) + ") = " + std::to_string(v) +
                              " drawn #" + QString::number(got & 0xffffff, 16).toStdString() + ", expected #" +
                              QString::number(want & 0xffffff, 16).toStdString();
            }
          }
        return wrong == 0;
      },
      5000));
  INFO(first_wrong);
  CHECK(wrong == 0);
  CHECK(checked > 1000);
  CHECK(negative > 0);
  CHECK(positive > 0);

  // The colour bar says so: −m at the bottom, 0 in the middle, +m at the top; every label whole.
  const auto labels = bar->labels();
  REQUIRE(labels.size() == 5);
  CHECK(labels.front().text == ColorBar::label(-m, -m, m));
  CHECK(labels[2].text == "0");
  CHECK(labels.back().text == ColorBar::label(m, -m, m));
  check_labels_fit(bar);

  // The user picks viridis for it, with the mouse: that wins, now and when the field comes back.
  pick(colormap, "viridis");
  REQUIRE(frame_of(2, Colormap::viridis));
  REQUIRE(wait_for([&] { return w.view()->last_frame().lo == lowest && w.view()->last_frame().hi == highest; }));
  w.set_field("speed");
  REQUIRE(frame_of(1, Colormap::viridis));
  check_labels_fit(bar);
  w.set_field("density");
  REQUIRE(frame_of(3, Colormap::viridis));
  check_labels_fit(bar);
  w.set_field("vorticity");
  REQUIRE(frame_of(2, Colormap::viridis));
  // Picking diverging again centres it on 0 again.
  pick(colormap, "diverging");
  REQUIRE(frame_of(2, Colormap::diverging));
  REQUIRE(wait_for([&] { return w.view()->last_frame().lo == -m && w.view()->last_frame().hi == m; }));
}
