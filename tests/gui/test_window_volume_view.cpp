// A volume seen whole in a real window (issue 40), with a field whose picture geometry predicts: a
// ball of value 1 in a box of 0, off the box's centre. The maximum-intensity projection is a disc of
// the ball's radius where the ball is; the isosurface at 0.5 is its silhouette, and hovering over
// it reads the level; dragging with the left button orbits the camera as far as the drag says, and
// the disc moves where geometry puts it; the transfer function drawn in its editor lights the
// ball's pixels and no others.
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QScreen>
#include <QScrollArea>
#include <catch2/catch.hpp>
#include <atomic>
#include <cmath>
#include <optional>
#include <thread>

#include "cuview/publisher.hpp"
#include "field_view.hpp"
#include "main_window.hpp"
#include "panels/volume_panel.hpp"
#include "viewer_test.hpp"
#include "window_test.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace cuview::gui;
using namespace std::chrono_literals;

namespace {
constexpr std::uint32_t W = 48, H = 40, D = 40;
constexpr double R = 10;
// The ball's centre, from the box's centre ((W-1)/2, (H-1)/2, (D-1)/2): 8 cells along +x, 6 along -z.
constexpr double kDx = 8, kDz = -6;

/// Publishes the ball every second until destroyed, as a simulation would — slower than a picture
/// takes here, so that each new frame is drawn at full resolution (frames that come faster than
/// full pictures are drawn coarser, VolumeViewRenderer::set_data_rate).
class BallPublisher {
 public:
  BallPublisher() : u_(std::size_t{W} * H * D) {
    const double cx = (W - 1) / 2.0 + kDx, cy = (H - 1) / 2.0, cz = (D - 1) / 2.0 + kDz;
    for (std::uint32_t z = 0; z < D; ++z)
      for (std::uint32_t y = 0; y < H; ++y)
        for (std::uint32_t x = 0; x < W; ++x)
          u_[(std::size_t{z} * H + y) * W + x] =
              std::hypot(x - cx, y - cy, z - cz) <= R ? 1.0f : 0.0f;
    pub_.add_field({"u", u_.data(), u_.size() * 4, {D, H, W}, DType::float32, 1, Memory::host, "a ball"});
    pub_.start();
    thread_ = std::thread([this] {
      for (std::uint64_t step = 1; !stop_; ++step) {
        (void)pub_.publish(step, 0.0);
        for (int i = 0; i < 20 && !stop_; ++i) std::this_thread::sleep_for(50ms);
      }
    });
  }
  ~BallPublisher() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::vector<float> u_;
  Publisher pub_{{.name = "ball", .backend = "host", .title = "ball", .max_fps = 0, .max_cost = 1}};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

/// The pixels of the last picture whose value passes `inside`: their count and centroid.
struct Blob {
  double count = 0, x = 0, y = 0;
};
Blob blob(const RenderedFrame& f, const std::function<bool(float)>& inside) {
  Blob b;
  const int w = f.image.width(), h = f.image.height();
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      if (inside((*f.values)[static_cast<std::size_t>(y) * w + x])) b.count += 1, b.x += x + 0.5, b.y += y + 0.5;
  if (b.count > 0) b.x /= b.count, b.y /= b.count;
  return b;
}

/// Pixels per cell at zoom 1: the box's diagonal spans the picture's shorter side.
double scale_of(const RenderedFrame& f) {
  return std::min(f.image.width(), f.image.height()) / std::sqrt(double(W) * W + double(H) * H + double(D) * D);
}

/// Picks `text` in combo box `box` with the mouse.
void pick(QComboBox* box, const QString& text) {
  x11::click(centre_of(box));
  REQUIRE(wait_for([&] { return box->view()->isVisible(); }, 5000));
  auto* list = box->view();
  x11::click(list->viewport()->mapToGlobal(list->visualRect(list->model()->index(box->findText(text), 0)).center()));
  REQUIRE(wait_for([&] { return box->currentText() == text; }, 5000));
}

bool drawn_as(const MainWindow& w, VolumeMode mode) {
  const auto& f = w.view()->last_frame();
  return f.volume && f.volume->mode == mode && f.volume->scale == 1 && f.image.size() == w.view()->size() &&
         !w.view()->interacting();
}
}  // namespace

TEST_CASE("a ball seen whole: MIP disc, isosurface silhouette and level on hover, a 90° orbit by the mouse, the "
          "transfer function's editor",
          "[.window][window]") {
  RuntimeDir rt;
  BallPublisher ball;
  forget_window_geometry();
  auto o = attach_options("ball");
  o.volume = "mip";
  MainWindow w(o);
  show_real(w);
  REQUIRE(shows_frames(w));
  REQUIRE(wait_for([&] { return drawn_as(w, VolumeMode::mip); }));
  auto* status = w.findChild<QLabel*>("volume");
  REQUIRE(status != nullptr);
  CHECK(status->isVisible());
  // The brick's picture, or (once the camera has rested and a frame came) the run's own: at this
  // size the brick holds every cell, and the two pictures are the same.
  CHECK((status->text().startsWith("MIP · brick 48×40×40") || status->text().startsWith("MIP · every cell of 48×40×40")));

  // The MIP: a disc of radius R, its centre kDx cells right of the picture's centre.
  const auto mip = w.view()->last_frame();
  const double s = scale_of(mip);
  const Blob disc = blob(mip, [](float v) { return v > 0.5f; });
  const double cx = mip.image.width() / 2.0, cy = mip.image.height() / 2.0;
  CHECK(std::abs(disc.x - (cx + kDx * s)) < 1.0);
  CHECK(std::abs(disc.y - cy) < 1.0);
  const double r = std::sqrt(disc.count / M_PI) / s;  // the disc's radius, in cells
  CHECK(std::abs(r - R) < 0.5);
  // A ray passing more than a cell outside the ball sees nothing but 0 (the ball's edge is one cell
  // wide: trilinear between 1 and 0), and its pixel has the colormap's lowest colour.
  std::size_t outside = 0, wrong = 0;
  for (int y = 0; y < mip.image.height(); ++y)
    for (int x = 0; x < mip.image.width(); ++x) {
      if (std::hypot(x + 0.5 - (cx + kDx * s), y + 0.5 - cy) < (R + 1.5) * s) continue;
      const float v = (*mip.values)[static_cast<std::size_t>(y) * mip.image.width() + x];
      if (std::isnan(v)) continue;  // the ray misses the box
      ++outside;
      wrong += v != 0.0f || mip.image.pixel(x, y) != mip.image.pixel(static_cast<int>(cx - 20 * s), static_cast<int>(cy));
    }
  CHECK(outside > 1000);
  CHECK(wrong == 0);

  // The isosurface at 0.5 (picked with the mouse): the same silhouette; hovering reads the level.
  pick(w.findChild<QComboBox*>("volume_mode"), "isosurface");
  REQUIRE(wait_for([&] { return drawn_as(w, VolumeMode::isosurface); }));
  const auto iso = w.view()->last_frame();
  const Blob sil = blob(iso, [](float v) { return !std::isnan(v); });
  CHECK(std::abs(sil.count - disc.count) < 0.03 * disc.count);
  CHECK(std::abs(sil.x - disc.x) < 0.5);
  CHECK(std::abs(sil.y - disc.y) < 0.5);
  x11::move(w.view()->mapToGlobal(QPoint(static_cast<int>(disc.x), static_cast<int>(disc.y))));
  QLabel* readout = nullptr;
  REQUIRE(wait_for([&] {
    auto* l = w.findChild<QLabel*>("readout");  // under the picture
    if (l != nullptr && l->text().startsWith("isosurface at 0.5,")) readout = l;
    return readout != nullptr;
  }));
  // The surface faces the camera at the disc's centre: R cells before the ball's centre, which lies
  // at the box's depth middle + kDz (the ray enters the box at its near face, z = -0.5).
  double depth = 0;
  REQUIRE(std::sscanf(readout->text().toUtf8().constData(), "isosurface at 0.5, %lf cells in", &depth) == 1);
  CHECK(std::abs(depth - ((D - 1) / 2.0 + kDz - R + 0.5)) < 1.0);

  // Orbit: a drag of 225 pixels to the right turns the camera 90° about the vertical axis (0.4° a
  // pixel). Looking along +x, the ball's -z offset lies to the right: the disc is 6 cells right.
  const QPoint from = w.view()->mapToGlobal(QPoint(40, w.view()->height() / 2));
  x11::drag(from, from + QPoint(225, 0));
  REQUIRE(wait_for([&] {
    const auto& f = w.view()->last_frame();
    return drawn_as(w, VolumeMode::isosurface) && std::abs(f.volume->camera.azimuth_deg - 90) < 1e-6;
  }));
  const auto turned = w.view()->last_frame();
  const Blob side = blob(turned, [](float v) { return !std::isnan(v); });
  CHECK(std::abs(side.x - (turned.image.width() / 2.0 - kDz * s)) < 1.0);
  CHECK(std::abs(side.y - turned.image.height() / 2.0) < 1.0);
  CHECK(std::abs(side.count - sil.count) < 0.03 * sil.count);

  // The Display dock's plane outlined inside the volume: the picture gains its edges, nothing else.
  x11::click(centre_of(w.findChild<QCheckBox*>("show_plane")));
  REQUIRE(wait_for([&] {
    const auto& f = w.view()->last_frame();
    return drawn_as(w, VolumeMode::isosurface) && f.image != turned.image;
  }));
  {
    const auto outlined = w.view()->last_frame();
    std::size_t changed = 0, dark = 0;
    for (int y = 0; y < outlined.image.height(); ++y)
      for (int x = 0; x < outlined.image.width(); ++x)
        if (outlined.image.pixel(x, y) != turned.image.pixel(x, y)) {
          ++changed;
          dark += qGray(outlined.image.pixel(x, y)) < qGray(turned.image.pixel(x, y));  // the outline is light
        }
    CHECK(changed > 100);
    CHECK(changed < 0.05 * outlined.image.width() * outlined.image.height());
    CHECK(dark < changed / 10);
  }
  x11::click(centre_of(w.findChild<QCheckBox*>("show_plane")));

  // Emission–absorption: draw the curve to 0 along the editor's bottom: nothing shows. Then raise
  // its upper half: the ball's pixels light up in the colormap's top colours, and no others.
  pick(w.findChild<QComboBox*>("volume_mode"), "emission–absorption");
  auto* editor = w.volume_panel()->editor();
  REQUIRE(wait_for([&] { return editor->isVisible() && drawn_as(w, VolumeMode::emission); }));
  // By default ("auto") the value most cells hold (the zeros around the ball) is clear and the
  // ball's rarer values opaque: the ball glows over black, and the editor shows that curve.
  CHECK(w.findChild<QComboBox*>("opacity_preset")->currentText() == "auto");
  REQUIRE(wait_for([&] { return editor->curve()[0] < 0.01f && editor->curve()[255] > 0.5f; }));
  {
    const auto glowing = w.view()->last_frame();
    CHECK(blob(glowing, [](float v) { return v > 0.01f; }).count > 0.8 * side.count);
    CHECK(glowing.image.pixel(3, 3) == qRgb(0, 0, 0));
  }
  const QRect e = editor->rect();
  x11::drag(editor->mapToGlobal(QPoint(e.left() + 1, e.bottom() - 14)), editor->mapToGlobal(QPoint(e.right() - 1, e.bottom() - 14)),
            x11::Button::left, 20);
  REQUIRE(wait_for([&] {
    return std::all_of(editor->curve().begin(), editor->curve().end(), [](float c) { return c == 0; });
  }));
  REQUIRE(wait_for([&] {
    const auto& f = w.view()->last_frame();
    return drawn_as(w, VolumeMode::emission) && blob(f, [](float v) { return v > 0.01f; }).count == 0;
  }));
  const QPoint top_l = editor->mapToGlobal(QPoint(e.left() + e.width() * 3 / 4, e.top() + 3));
  x11::drag(top_l, editor->mapToGlobal(QPoint(e.right() - 1, e.top() + 3)), x11::Button::left, 10);
  REQUIRE(wait_for([&] { return editor->curve()[255] > 0.95f && editor->curve()[0] == 0; }));
  REQUIRE(wait_for([&] {
    const auto& f = w.view()->last_frame();
    return drawn_as(w, VolumeMode::emission) && blob(f, [](float v) { return v > 0.5f; }).count > 0;
  }));
  const auto lit = w.view()->last_frame();
  const Blob glow = blob(lit, [](float v) { return v > 0.01f; });
  CHECK(glow.count > 0.8 * side.count);  // the ball's pixels, seen from +x (its edge below 0.75 stays dark)
  CHECK(std::abs(glow.x - side.x) < 1.0);
  std::size_t stray = 0;  // lit pixels off the ball's silhouette
  for (std::size_t i = 0; i < lit.values->size(); ++i) stray += (*lit.values)[i] > 0.01f && std::isnan((*turned.values)[i]);
  CHECK(stray == 0);
  // Its colour is the colormap's near the top (the values of 1), over black elsewhere.
  const QRgb at_centre = lit.image.pixel(static_cast<int>(glow.x), static_cast<int>(glow.y));
  CHECK(qGreen(at_centre) > 100);
  CHECK(lit.image.pixel(3, 3) == qRgb(0, 0, 0));
}

namespace {
/// A ball of radius `r` cells at the centre of a grid of w × h × d, published every half second
/// (the host backend, as a simulation would).
class CentredBall {
 public:
  CentredBall(std::uint32_t w, std::uint32_t h, std::uint32_t d, double r) : u_(std::size_t{w} * h * d) {
    for (std::uint32_t z = 0; z < d; ++z)
      for (std::uint32_t y = 0; y < h; ++y)
        for (std::uint32_t x = 0; x < w; ++x)
          u_[(std::size_t{z} * h + y) * w + x] =
              std::hypot(x - (w - 1) / 2.0, y - (h - 1) / 2.0, z - (d - 1) / 2.0) <= r ? 1.0f : 0.0f;
    pub_.add_field({"u", u_.data(), u_.size() * 4, {d, h, w}, DType::float32, 1, Memory::host, "a ball"});
    pub_.start();
    thread_ = std::thread([this] {
      for (std::uint64_t step = 1; !stop_; ++step) {
        (void)pub_.publish(step, 0.0);
        for (int i = 0; i < 10 && !stop_; ++i) std::this_thread::sleep_for(50ms);
      }
    });
  }
  ~CentredBall() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::vector<float> u_;
  Publisher pub_{{.name = "big-ball", .backend = "host", .title = "big ball", .max_fps = 0, .max_cost = 1}};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};
}  // namespace

namespace {
/// A 96×72×72 ball watched in a real window, on this host or through a gateway (`remote`): the
/// brick of every 2nd cell while the camera moves, the run's own picture of every cell at rest.
void watch_big_ball(bool remote) {
  RuntimeDir rt;
  constexpr std::uint32_t w = 96, h = 72, d = 72;
  constexpr double radius = 20;
  CentredBall ball(w, h, d, radius);
  std::optional<ChildProcess> gateway;
  forget_window_geometry();
  auto o = attach_options("big-ball");
  if (remote) {
    gateway.emplace(start_gateway());
    o.remote = QString::fromStdString(gateway_url());
  }
  o.volume = "mip";
  MainWindow win(o);
  show_real(win);
  REQUIRE(shows_frames(win));
  pick(win.findChild<QComboBox*>("brick"), "64 cells");  // 96 cells: every 2nd
  auto* status = win.findChild<QLabel*>("volume");
  REQUIRE(status != nullptr);
  const auto disc_radius = [&](const RenderedFrame& f) {  // in cells of the whole grid
    const double s = std::min(f.image.width(), f.image.height()) / std::sqrt(double(w) * w + double(h) * h + double(d) * d);
    return std::sqrt(blob(f, [](float v) { return v > 0.5f; }).count / M_PI) / s;
  };
  // At rest: the run casts the picture from every cell of its frame, and says so.
  REQUIRE(wait_for([&] {
    const auto& f = win.view()->last_frame();
    return f.volume && f.volume->by_run && f.image.size() == win.view()->size();
  }, 20000));
  CHECK(status->text().startsWith("MIP · every cell of 96×72×72 · cast by the run in"));
  if (remote) {  // the values' encoding and bound, as for the gateway's views
    auto* link = win.findChild<QLabel*>("remote");
    REQUIRE(link != nullptr);
    CHECK(link->isVisible());
    CHECK(link->text().contains("u16 values, colours lossless · ±"));
  }
  const auto full = win.view()->last_frame();
  CHECK(full.volume->stride == 1);
  CHECK(std::abs(disc_radius(full) - radius) < 0.5);
  const Blob centred = blob(full, [](float v) { return v > 0.5f; });
  CHECK(std::abs(centred.x - full.image.width() / 2.0) < 1.0);
  CHECK(std::abs(centred.y - full.image.height() / 2.0) < 1.0);

  // Orbiting by the mouse: the brick's picture (every 2nd cell) while the camera moves, then the
  // run's again for the new camera once it rests.
  const QPoint from = win.view()->mapToGlobal(QPoint(40, win.view()->height() / 2));
  bool brick_seen = false;
  x11::drag(from, from + QPoint(225, 0));
  REQUIRE(wait_for([&] {
    const auto& f = win.view()->last_frame();
    brick_seen = brick_seen || (f.volume && !f.volume->by_run && f.volume->stride == 2);
    return f.volume && f.volume->by_run && std::abs(f.volume->camera.azimuth_deg - 90) < 1e-6;
  }, 20000));
  CHECK(brick_seen);
  CHECK(status->text().startsWith("MIP · every cell of 96×72×72"));
  CHECK(std::abs(disc_radius(win.view()->last_frame()) - radius) < 0.5);
}
}  // namespace

TEST_CASE("a volume larger than the brick: while the camera moves the brick's every-2nd-cell picture, at rest the "
          "run's own picture of every cell, a disc of the ball's radius",
          "[.window][window]") {
  watch_big_ball(false);
}

TEST_CASE("through a gateway the same: the brick while the camera moves, at rest the run's picture of every cell, "
          "compressed on the link",
          "[.window][window][remote]") {
  watch_big_ball(true);
}

TEST_CASE("a 3-D flow seen whole keeps the window its size; the docks' rows scroll and the opacity editor is drawn on",
          "[.window][window]") {
  // The flow's Simulation rows, the Display rows and the Volume dock's opacity editor are taller
  // together than the default window: the docks scroll, and the window stays the size it was given
  // (it used to grow past the bottom of an 800-pixel screen, and with the rows the docks showed).
  RuntimeDir rt;
  auto daemon = start_daemon("flow", Backend::host, {"--sim", "lbm3d", "--paused"}, "24x16x16");
  forget_window_geometry();
  MainWindow w(attach_options("flow"));
  show_real(w);
  REQUIRE(shows_frames(w));
  pick(w.findChild<QComboBox*>("volume_mode"), "emission–absorption");
  auto* editor = w.volume_panel()->editor();
  REQUIRE(wait_for([&] { return editor->isVisible() && drawn_as(w, VolumeMode::emission); }));
  CHECK(w.size() == kDefaultWindowSize);
  CHECK(w.frameGeometry().bottom() < w.screen()->geometry().bottom());

  // The editor's whole rectangle can be brought into view, and drawn on with the mouse.
  QScrollArea* area = nullptr;
  for (QWidget* p = editor->parentWidget(); p && !area; p = p->parentWidget()) area = qobject_cast<QScrollArea*>(p);
  REQUIRE(area != nullptr);
  area->ensureWidgetVisible(editor, 0, 0);
  REQUIRE(wait_for([&] { return editor->visibleRegion().boundingRect() == editor->rect(); }, 5000));
  const QRect e = editor->rect();
  x11::drag(editor->mapToGlobal(QPoint(e.left() + 1, e.bottom() - 14)), editor->mapToGlobal(QPoint(e.right() - 1, e.bottom() - 14)),
            x11::Button::left, 20);
  REQUIRE(wait_for([&] {
    return std::all_of(editor->curve().begin(), editor->curve().end(), [](float c) { return c == 0; });
  }));
  CHECK(w.size() == kDefaultWindowSize);
}
