// What the viewer draws besides a field's colours, offscreen: particles as points, arrows over a
// vector field.
#include <QCheckBox>
#include <QComboBox>
#include <QImage>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "backend_test.hpp"
#include "cuview/client.hpp"
#include "field_view.hpp"
#include "main_window.hpp"
#include "render/arrows.hpp"
#include "viewer_test.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace cuview::gui;
using namespace std::chrono_literals;

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

namespace {
/// An arrow's pixel: no colormap is white.
bool white(QRgb c) { return qRed(c) > 200 && qGreen(c) > 200 && qBlue(c) > 200; }
int count_white(const QImage& img) {
  int n = 0;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) n += white(img.pixel(x, y));
  return n;
}
/// The arrow nearest the inlet (arrows are drawn 24 pixels apart, so which cell that is depends on
/// the view's size): its pixel and cell, among those whose cell row lies within `band` of
/// `middle` and whose column is at least `from`; cell column 1e9 when there is none.
struct Arrow {
  QPoint at{-1, -1};
  double x = 1e9, y = 0;
};
Arrow inlet_arrow(const FieldView& view, const QImage& image, double middle, double band, double from) {
  Arrow a;
  for (int py = 12; py < image.height(); py += 24)
    for (int px = 12; px < image.width(); px += 24) {
      double cx = 0, cy = 0;
      if (view.cell_coords(QPoint(px, py), cx, cy) && std::abs(cy - middle) <= band && cx >= from && cx < a.x)
        a = Arrow{QPoint(px, py), cx, cy};
    }
  return a;
}
/// Whether the arrow through `p` has white pixels to its right (on its row or the ones beside it).
bool white_to_the_right(const QImage& image, QPoint p) {
  return white(image.pixel(p.x() + 3, p.y())) || white(image.pixel(p.x() + 3, p.y() - 1)) ||
         white(image.pixel(p.x() + 3, p.y() + 1));
}
}  // namespace

BACKEND_TEST("arrows over a vector field point along the flow", "[gui]") {
  RuntimeDir rt;
  auto daemon = start_daemon("a", backend, {"--sim", "lbm", "--paused"}, "160x64");
  REQUIRE(ctl("a", {"step", "400"}).code == 0);
  auto w = open_viewer("a");
  REQUIRE(shows_frames(*w));
  w->set_field("velocity");
  auto* arrows = w->findChild<QCheckBox*>("arrows");
  REQUIRE(arrows);
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
  const auto arrow = inlet_arrow(*w->view(), f.image, 32, 10, -1e9);
  INFO("arrow at pixel (" << arrow.at.x() << ", " << arrow.at.y() << "), cell (" << arrow.x << ", " << arrow.y << ")");
  REQUIRE(arrow.x <= 12);
  CHECK(white_to_the_right(f.image, arrow.at));
  CHECK_FALSE(white(f.image.pixel(arrow.at.x(), arrow.at.y() + 6)));
}

BACKEND_TEST("arrows over a plane of a volume draw the two components that lie in the plane", "[gui]") {
  RuntimeDir rt;
  auto daemon = start_daemon("a3", backend, {"--sim", "lbm3d", "--paused"}, "96x32x32");
  REQUIRE(ctl("a3", {"step", "200"}).code == 0);
  auto w = open_viewer("a3");
  REQUIRE(shows_frames(*w));
  w->set_field("velocity");
  auto* arrows = w->findChild<QCheckBox*>("arrows");
  auto* axis = w->findChild<QComboBox*>("slice_axis");
  REQUIRE(arrows);
  REQUIRE(axis);
  axis->setCurrentText("y");  // the plane y = 16: columns x, rows z; upstream the flow runs along +x
  REQUIRE(wait_for([&] {
    const auto& f = w->view()->last_frame();
    return f.field == 0 && f.slice && f.slice->axis == SliceAxis::y;
  }));
  CHECK(count_white(w->view()->last_frame().image) == 0);
  arrows->setChecked(true);
  REQUIRE(wait_for([&] { return count_white(w->view()->last_frame().image) > 100; }));
  const auto& f = w->view()->last_frame();
  REQUIRE(f.slice);
  CHECK(f.slice->axis == SliceAxis::y);
  // The arrow nearest the inlet on the duct's middle layers, before the sphere (centred at x 19):
  // horizontal, as u_x is, not along z (white to its right, not below it).
  const auto arrow = inlet_arrow(*w->view(), f.image, 16, 6, 2);  // rows are z here
  INFO("arrow at pixel (" << arrow.at.x() << ", " << arrow.at.y() << "), cell x " << arrow.x);
  REQUIRE(arrow.x <= 12);
  CHECK(white_to_the_right(f.image, arrow.at));
  CHECK_FALSE(white(f.image.pixel(arrow.at.x(), arrow.at.y() + 6)));
}

TEST_CASE("an arrow follows the two components it is given: a plane's own, not always x and y", "[gui]") {
  // One sample of (1, 0, 5): along x and mostly along z. Drawn with the columns' component 0 and
  // the rows' 2 (a y-plane) it points down; with 0 and 1 (a z-plane) it lies flat.
  SampledView s;
  s.region.view_w = 24, s.region.view_h = 24;
  s.components = 3;
  s.values.assign(24 * 24, 1.0f);
  for (int k = 0; k < 24 * 24; ++k) s.vectors.insert(s.vectors.end(), {1.0f, 0.0f, 5.0f});
  auto white_below = [&](int across, int down) {
    QImage img(24, 24, QImage::Format_ARGB32);
    img.fill(Qt::black);
    draw_arrows(img, s, across, down);
    int below = 0;  // white pixels near the centre column, away from the centre row
    for (int y = 0; y < 24; ++y)
      for (int x = 0; x < 24; ++x) below += qRed(img.pixel(x, y)) > 200 && std::abs(x - 12) <= 2 && std::abs(y - 12) > 4;
    return below;
  };
  CHECK(white_below(0, 2) > 4);   // the y-plane's arrow runs along its rows (z)
  CHECK(white_below(0, 1) == 0);  // the z-plane's lies along x
}
