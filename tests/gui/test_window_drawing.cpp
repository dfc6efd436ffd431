// The viewer as a person uses it, in real windows on a private X server (window_test.hpp):
// drawing obstacles into a flow and placing bodies with the mouse.
#include <QElapsedTimer>
#include <QImage>
#include <QPushButton>
#include <catch2/catch.hpp>
#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "cuview/client.hpp"
#include "field_view.hpp"
#include "main_window.hpp"
#include "render/render.hpp"
#include "viewer_test.hpp"
#include "window_test.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace cuview::gui;
using namespace std::chrono_literals;

namespace {
/// The screen position of grid cell (x, y)'s centre in the view, as the last frame drew it.
QPoint screen_of_cell(const FieldView* v, double x, double y) {
  const auto& f = v->last_frame();
  const double px = (x + 0.5 - f.center_x) * f.pixels_per_cell + f.image.width() * 0.5;
  const double py = (y + 0.5 - f.center_y) * f.pixels_per_cell + f.image.height() * 0.5;
  return v->mapToGlobal(QPoint(static_cast<int>(px), static_cast<int>(py)));
}

/// The same once the view has stopped moving: the same place in looks over 300 ms (rows arriving
/// in the docks, or their scroll bar appearing, can still resize the view after the first frame).
QPoint settled_screen_of_cell(const FieldView* v, double x, double y) {
  QPoint last = screen_of_cell(v, x, y);
  QElapsedTimer still;
  still.start();
  wait_for(
      [&] {
        if (const QPoint now = screen_of_cell(v, x, y); now != last) last = now, still.restart();
        return still.elapsed() >= 300;
      },
      5000);
  return last;
}

/// Where the view's strokes were drawn (grid coordinates) and their value, as it emitted them.
struct Strokes {
  std::vector<std::array<double, 3>> seen;  // x, y, value
  explicit Strokes(FieldView* v) {
    QObject::connect(v, &FieldView::stroke, v, [this](double x, double y, int value) {
      seen.push_back({x, y, static_cast<double>(value)});
    });
  }
  [[nodiscard]] std::string last() const {
    if (seen.empty()) return "none";
    const auto& s = seen.back();
    return "(" + std::to_string(s[0]) + ", " + std::to_string(s[1]) + ") value " + std::to_string(int(s[2]));
  }
};
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
  Strokes strokes(w.view());
  x11::click(settled_screen_of_cell(w.view(), 110, 32));  // a left click draws a disc of the brush's radius
  // The view drew where it was clicked: a stroke at cell (110, 32).
  REQUIRE(wait_for([&] { return !strokes.seen.empty(); }, 5000));
  INFO("the click drew at " << strokes.last());
  CHECK(std::abs(strokes.seen.back()[0] - 110.5) < 1.0);
  CHECK(std::abs(strokes.seen.back()[1] - 32.5) < 1.0);
  CHECK(strokes.seen.back()[2] == 1.0);
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
  const std::size_t drawn = strokes.seen.size();
  x11::click(settled_screen_of_cell(w.view(), 110, 32), 1, x11::Button::right);  // the right button erases
  REQUIRE(wait_for([&] { return strokes.seen.size() > drawn; }, 5000));
  CHECK(strokes.seen.back()[2] == 0.0);
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
  x11::click(settled_screen_of_cell(w.view(), 50, 150));
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
