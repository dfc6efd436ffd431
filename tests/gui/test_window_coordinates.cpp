// A program's own grid in a real window (window_test.hpp): a float64 volume whose cells are not
// cubes (4 mm deep, 1 mm across) on a grid that starts away from 0. Hovering reads the cell, where
// it is in millimetres and its exact float64 value; the volume seen whole is drawn with its aspect
// ratio, so a physically round ball is a round disc from the side, not a flattened one.
#include <catch2/catch.hpp>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <thread>

#include <QAbstractItemView>
#include <QComboBox>
#include <QStandardItemModel>

#include "cuview/publisher.hpp"
#include "field_view.hpp"
#include "main_window.hpp"
#include "viewer_test.hpp"
#include "window_test.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace cuview::gui;
using namespace std::chrono_literals;

namespace {
constexpr std::uint32_t W = 32, H = 32, D = 8;
constexpr double kDepth = 4;                                  // mm per cell along z; 1 along x and y
constexpr double kOriginX = -15.5, kOriginY = 2, kOriginZ = 100;  // mm: cell (0, 0, 0)'s centre

/// A float64 value float32 cannot hold, different in every cell.
double value_at(std::uint32_t x, std::uint32_t y, std::uint32_t z) { return 1e8 + z * 1e4 + y * 100 + x + 0.0625; }

constexpr std::uint32_t SW = 24, SH = 16;  // a surface beside the volume: cells of 0.5 mm from (5, 0) mm

/// A float64 value of the surface's cell (x, y), unlike any of the volume's.
double surface_at(std::uint32_t x, std::uint32_t y) { return -2e6 - y * 1000 - x - 0.5; }

constexpr std::uint32_t PW = 40;  // a probe line beside them: cells 2 mm apart from 10 mm
/// A float64 value of the probe's cell x.
double probe_at(std::uint32_t x) { return 3e7 + x + 0.25; }

/// Publishes `values` on the anisotropic grid (and, given, `surface` on a 2-D grid of its own and
/// `probe` on a line) every half second until destroyed.
class GridPublisher {
 public:
  GridPublisher(const std::string& name, std::vector<double> values, std::vector<double> surface = {},
                std::vector<double> probe = {})
      : u_(std::move(values)), h_(std::move(surface)), p_(std::move(probe)), pub_(options(name)) {
    pub_.add_grid({.name = "tank", .dims = {D, H, W}, .origin = {kOriginZ, kOriginY, kOriginX},
                   .spacing = {kDepth, 1, 1}, .units = "mm"});
    FieldDecl f{.name = "u", .data = u_.data(), .bytes = u_.size() * sizeof(double)};
    f.dtype = DType::float64;
    f.memory = Memory::host;
    f.grid = "tank";
    pub_.add_field(f);
    if (!h_.empty()) {
      pub_.add_grid({.name = "surface", .dims = {SH, SW}, .origin = {0, 5}, .spacing = {0.5, 0.5}, .units = "mm"});
      FieldDecl s{.name = "h", .data = h_.data(), .bytes = h_.size() * sizeof(double)};
      s.dtype = DType::float64;
      s.memory = Memory::host;
      s.grid = "surface";
      pub_.add_field(s);
    }
    if (!p_.empty()) {
      pub_.add_grid({.name = "probe", .dims = {PW}, .origin = {10}, .spacing = {2}, .units = "mm"});
      FieldDecl p{.name = "p", .data = p_.data(), .bytes = p_.size() * sizeof(double)};
      p.dtype = DType::float64;
      p.memory = Memory::host;
      p.grid = "probe";
      pub_.add_field(p);
    }
    pub_.start();
    thread_ = std::thread([this] {
      for (std::uint64_t step = 1; !stop_; ++step) {
        (void)pub_.publish(step, 0.0);
        for (int i = 0; i < 10 && !stop_; ++i) std::this_thread::sleep_for(50ms);
      }
    });
  }
  ~GridPublisher() {
    stop_ = true;
    thread_.join();
  }
  GridPublisher(const GridPublisher&) = delete;
  GridPublisher& operator=(const GridPublisher&) = delete;

 private:
  static PublisherOptions options(const std::string& name) {
    return {.name = name, .backend = "host", .title = "tank", .max_fps = 0, .max_cost = 1};
  }
  std::vector<double> u_, h_, p_;
  Publisher pub_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};
/// Hovers points across the picture shown (every 29th row, 31st column); `right(text)` says whether
/// a readout (one that is not empty: over the grid) is what its cell holds. Returns the readouts
/// read and those that were wrong (each said).
template <class Right>
std::pair<std::size_t, std::size_t> hover_across(const MainWindow& w, Right right) {
  std::size_t checked = 0, wrong = 0;
  const auto& f = w.view()->last_frame();
  for (int py = 5; py < f.image.height(); py += 29)
    for (int px = 5; px < f.image.width(); px += 31) {
      const QString text = w.view()->readout({px, py});
      if (text.isEmpty()) continue;  // outside the grid
      ++checked;
      if (right(text.toUtf8().constData())) continue;
      UNSCOPED_INFO("readout " << text.toStdString());
      ++wrong;
    }
  return {checked, wrong};
}
}  // namespace

TEST_CASE("hovering a float64 volume on a grid of its own reads the cell, its place in millimetres and its exact "
          "value",
          "[.window][window]") {
  RuntimeDir rt;
  std::vector<double> u(std::size_t{W} * H * D);
  for (std::uint32_t z = 0; z < D; ++z)
    for (std::uint32_t y = 0; y < H; ++y)
      for (std::uint32_t x = 0; x < W; ++x) u[(std::size_t{z} * H + y) * W + x] = value_at(x, y, z);
  GridPublisher tank("tank", u);
  forget_window_geometry();
  MainWindow w(attach_options("tank"));
  show_real(w);
  REQUIRE(shows_frames(w));
  REQUIRE(wait_for([&] { return w.view()->last_frame().slice.has_value(); }));

  const auto [checked, wrong] = hover_across(w, [](const char* text) {
    unsigned x = 0, y = 0, z = 0;
    double mx = 0, my = 0, mz = 0, v = 0;
    return std::sscanf(text, "(%u, %u, %u) at (%lf, %lf, %lf) mm = %lf", &x, &y, &z, &mx, &my, &mz, &v) == 7 &&
           x < W && y < H && z < D && mx == kOriginX + x && my == kOriginY + y && mz == kOriginZ + kDepth * z &&
           v == value_at(x, y, z);
  });
  CHECK(checked > 20);
  CHECK(wrong == 0);
}

TEST_CASE("a volume of cells four times as deep as wide is drawn with its aspect ratio: a round ball is a round disc "
          "from the side",
          "[.window][window]") {
  RuntimeDir rt;
  // A ball of radius 10 mm at the grid's centre: 5 cells deep along z, 20 across x and y.
  std::vector<double> u(std::size_t{W} * H * D);
  for (std::uint32_t z = 0; z < D; ++z)
    for (std::uint32_t y = 0; y < H; ++y)
      for (std::uint32_t x = 0; x < W; ++x)
        u[(std::size_t{z} * H + y) * W + x] =
            std::hypot(x - (W - 1) / 2.0, y - (H - 1) / 2.0, (z - (D - 1) / 2.0) * kDepth) <= 10 ? 1.0 : 0.0;
  GridPublisher tank("ball-mm", u);
  forget_window_geometry();
  auto o = attach_options("ball-mm");
  o.volume = "mip";
  o.camera = VolumeCamera{.azimuth_deg = 90};  // from the side (looking along x): z across the picture, y down it
  MainWindow w(o);
  show_real(w);
  REQUIRE(shows_frames(w));
  auto side_on = [&] {
    const auto& f = w.view()->last_frame();
    return f.volume && f.volume->scale == 1 && std::abs(f.volume->camera.azimuth_deg - 90) < 1e-9 &&
           !w.view()->interacting();
  };
  REQUIRE(wait_for(side_on));
  const auto& f = w.view()->last_frame();
  int left = f.image.width(), right = -1, top = f.image.height(), bottom = -1;
  for (int y = 0; y < f.image.height(); ++y)
    for (int x = 0; x < f.image.width(); ++x)
      if ((*f.values)[static_cast<std::size_t>(y) * f.image.width() + x] > 0.5f)
        left = std::min(left, x), right = std::max(right, x), top = std::min(top, y), bottom = std::max(bottom, y);
  REQUIRE(right > left);
  const double across = right - left + 1, down = bottom - top + 1;
  // What the cells say, seen along x: the layers (4 mm each) and rows (1 mm) holding some of the
  // ball — the disc's width and height in millimetres, as the aspect ratio draws it.
  std::uint32_t layers = 0, rows = 0;
  for (std::uint32_t z = 0; z < D; ++z) {
    bool any = false;
    for (std::size_t i = 0; i < std::size_t{H} * W; ++i) any = any || u[z * H * W + i] > 0.5;
    layers += any;
  }
  for (std::uint32_t y = 0; y < H; ++y) {
    bool any = false;
    for (std::uint32_t z = 0; z < D; ++z)
      for (std::uint32_t x = 0; x < W; ++x) any = any || u[(std::size_t{z} * H + y) * W + x] > 0.5;
    rows += any;
  }
  const double want = layers * kDepth / rows;
  INFO("the disc is " << across << " pixels across and " << down << " down; its cells are " << layers * kDepth
                      << " mm across and " << rows << " mm down");
  CHECK(across / down > 0.9 * want);
  CHECK(across / down < 1.1 * want);
  // Drawn as cubes, it would be a quarter of that.
  CHECK(want > 0.6);
}

TEST_CASE("a run of three grids lists its fields under each grid; a field of the 2-D grid and one of the line are "
          "drawn and read on their own grids",
          "[.window][window]") {
  RuntimeDir rt;
  std::vector<double> u(std::size_t{W} * H * D, 1.0), h(std::size_t{SW} * SH), p(PW);
  for (std::uint32_t y = 0; y < SH; ++y)
    for (std::uint32_t x = 0; x < SW; ++x) h[std::size_t{y} * SW + x] = surface_at(x, y);
  for (std::uint32_t x = 0; x < PW; ++x) p[x] = probe_at(x);
  GridPublisher both("two-grids", u, h, p);
  forget_window_geometry();
  MainWindow w(attach_options("two-grids"));
  show_real(w);
  REQUIRE(shows_frames(w));
  REQUIRE(wait_for([&] { return w.view()->last_frame().slice.has_value(); }));  // the volume's plane first

  // The list: a heading per grid (not a choice), each grid's fields below it.
  auto* fields = w.findChild<QComboBox*>("field");
  REQUIRE(fields != nullptr);
  QStringList texts;
  for (int i = 0; i < fields->count(); ++i) texts << fields->itemText(i);
  CHECK(texts == QStringList({QString("tank · 32×32×8 (mm)"), "u", QString("surface · 24×16 (mm)"), "h",
                              QString("probe · 40 (mm)"), "p"}));
  auto* model = qobject_cast<QStandardItemModel*>(fields->model());
  REQUIRE(model != nullptr);
  CHECK_FALSE(model->item(0)->isEnabled());
  CHECK_FALSE(model->item(2)->isEnabled());

  // Picked as a person does: the list opens, a click on "h".
  x11::click(centre_of(fields));
  REQUIRE(wait_for([&] { return fields->view()->isVisible(); }, 5000));
  QAbstractItemView* list = fields->view();
  x11::click(list->viewport()->mapToGlobal(list->visualRect(list->model()->index(3, 0)).center()));
  REQUIRE(wait_for([&] { return !list->isVisible() && fields->currentText() == "h"; }, 5000));
  REQUIRE(wait_for([&] {
    const auto& f = w.view()->last_frame();
    return f.field == 1 && !f.slice.has_value() && f.field_w == int(SW) && f.field_h == int(SH);
  }));
  auto* axis = w.findChild<QComboBox*>("slice_axis");
  REQUIRE(axis != nullptr);
  CHECK_FALSE(axis->isVisible());  // a plane has no planes to choose

  const auto [checked, wrong] = hover_across(w, [](const char* text) {
    unsigned x = 0, y = 0;
    double mx = 0, my = 0, v = 0;
    return std::sscanf(text, "(%u, %u) at (%lf, %lf) mm = %lf", &x, &y, &mx, &my, &v) == 5 && x < SW && y < SH &&
           mx == 5 + 0.5 * x && my == 0.5 * y && v == surface_at(x, y);
  });
  CHECK(checked > 20);
  CHECK(wrong == 0);

  // The line: a picture one cell high, each cell read at its place along the probe.
  x11::click(centre_of(fields));
  REQUIRE(wait_for([&] { return fields->view()->isVisible(); }, 5000));
  x11::click(list->viewport()->mapToGlobal(list->visualRect(list->model()->index(5, 0)).center()));
  REQUIRE(wait_for([&] { return !list->isVisible() && fields->currentText() == "p"; }, 5000));
  REQUIRE(wait_for([&] {
    const auto& f = w.view()->last_frame();
    return f.field == 2 && f.field_w == int(PW) && f.field_h == 1;
  }));
  std::size_t read = 0, misread = 0;
  std::string first_misread;
  const auto& f = w.view()->last_frame();
  for (int px = 2; px < f.image.width(); px += 7)
    for (int py = 0; py < f.image.height(); py += 3) {
      const QString text = w.view()->readout({px, py});
      if (text.isEmpty()) continue;
      ++read;
      unsigned x = 0;
      double mx = 0, v = 0;
      const bool right = std::sscanf(text.toUtf8().constData(), "(%u) at (%lf) mm = %lf", &x, &mx, &v) == 3 &&
                         x < PW && mx == 10 + 2.0 * x && v == probe_at(x);
      if (!right && misread++ == 0) first_misread = text.toStdString();
    }
  INFO("the first readout misread: " << first_misread);
  CHECK(read > 10);
  CHECK(misread == 0);
}
