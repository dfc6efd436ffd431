// A volume in a real window (window_test.hpp): it opens at its middle z-plane; the keyboard, the
// plane list and Shift + wheel move the plane; the picture is the plane's cells and the readout
// names the cell (x, y, z) and its exact value. Three planes side by side read the same way.
#include <QAbstractItemView>
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QSlider>
#include <catch2/catch.hpp>
#include <algorithm>
#include <array>
#include <cmath>

#include "cuview/client.hpp"
#include "field_view.hpp"
#include "main_window.hpp"
#include "viewer_test.hpp"
#include "window_test.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace cuview::gui;
using namespace std::chrono_literals;

namespace {
constexpr std::uint32_t W = 24, H = 16, D = 12;

/// The value of cell (x, y, z) of field u in `frame`.
float at(const Frame& frame, std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  return frame.host_field(0)[(std::size_t{z} * H + y) * W + x];
}

/// Every pixel's readout in a grid of probes names a cell of the plane shown and that cell's value.
std::size_t wrong_readouts(const FieldView* view, const Frame& frame, const Slice& slice, std::size_t& checked) {
  std::size_t wrong = 0;
  const auto& f = view->last_frame();
  for (int py = 3; py < f.image.height(); py += 37)
    for (int px = 3; px < f.image.width(); px += 41) {
      const QString text = view->readout({px, py});
      if (text.isEmpty()) continue;  // outside the plane
      unsigned x = 0, y = 0, z = 0;
      float v = 0;
      if (std::sscanf(text.toUtf8().constData(), "(%u, %u, %u) = %g", &x, &y, &z, &v) != 4) {
        ++wrong;
        continue;
      }
      ++checked;
      const bool on_plane = slice.axis == SliceAxis::z ? z == slice.index
                            : slice.axis == SliceAxis::y ? y == slice.index
                                                         : x == slice.index;
      const float want = at(frame, x, y, z);
      wrong += !on_plane || text != QString("(%1, %2, %3) = %4").arg(x).arg(y).arg(z).arg(double(want), 0, 'g', 6);
    }
  return wrong;
}
}  // namespace

TEST_CASE("a volume opens at its middle z-plane; Page Up, the plane list and Shift + wheel move the plane",
          "[.window][window]") {
  RuntimeDir rt;
  auto daemon = start_daemon("vol", Backend::host, {"--sim", "grayscott3d", "--paused"},
                             "24x16x12");
  forget_window_geometry();
  MainWindow w(attach_options("vol"));
  show_real(w);
  REQUIRE(shows_frames(w));
  auto* slider = w.findChild<QSlider*>("slice");
  auto* axis = w.findChild<QComboBox*>("slice_axis");
  auto* label = w.findChild<QLabel*>("slice_label");
  REQUIRE(slider != nullptr);
  REQUIRE(axis != nullptr);
  REQUIRE(slider->isVisible());
  CHECK(slider->value() == static_cast<int>(D / 2));
  CHECK(label->text() == "z = 6");
  REQUIRE(wait_for([&] { return w.view()->last_frame().slice == Slice{SliceAxis::z, 6}; }));
  CHECK(w.view()->last_frame().field_w == static_cast<int>(W));
  CHECK(w.view()->last_frame().field_h == static_cast<int>(H));

  auto reader = Client::attach(AttachOptions{.name = "vol", .client = "test reader"});
  auto frame = reader.next_frame(5s);
  REQUIRE(frame);
  std::size_t checked = 0;
  CHECK(wrong_readouts(w.view(), *frame, Slice{SliceAxis::z, 6}, checked) == 0);
  CHECK(checked > 20);

  // Page Up: the next plane, drawn as its cells say.
  x11::key("Page_Up");
  REQUIRE(wait_for([&] { return w.view()->last_frame().slice == Slice{SliceAxis::z, 7}; }));
  CHECK(label->text() == "z = 7");
  checked = 0;
  CHECK(wrong_readouts(w.view(), *frame, Slice{SliceAxis::z, 7}, checked) == 0);

  // The plane list: an x-plane is depth × height cells, and Shift + wheel moves it.
  x11::click(centre_of(axis));
  REQUIRE(wait_for([&] { return axis->view()->isVisible(); }, 5000));
  QAbstractItemView* list = axis->view();
  x11::click(list->viewport()->mapToGlobal(list->visualRect(list->model()->index(axis->findText("x"), 0)).center()));
  REQUIRE(wait_for([&] { return axis->currentText() == "x"; }, 5000));
  REQUIRE(wait_for([&] { return w.view()->last_frame().slice && w.view()->last_frame().slice->axis == SliceAxis::x; }));
  const std::uint32_t x0 = w.view()->last_frame().slice->index;
  CHECK(w.view()->last_frame().field_w == static_cast<int>(H));
  CHECK(w.view()->last_frame().field_h == static_cast<int>(D));
  x11::click_with("shift", centre_of(w.view()), x11::Button::wheel_up);
  REQUIRE(wait_for([&] { return w.view()->last_frame().slice == Slice{SliceAxis::x, x0 + 1}; }));
  checked = 0;
  CHECK(wrong_readouts(w.view(), *frame, Slice{SliceAxis::x, x0 + 1}, checked) == 0);
  CHECK(checked > 20);
}

TEST_CASE("three planes side by side show their cells through one point; Shift + wheel over one moves it",
          "[.window][window]") {
  RuntimeDir rt;
  auto daemon = start_daemon("vol", Backend::host, {"--sim", "grayscott3d", "--paused"}, "24x16x12");
  forget_window_geometry();
  MainWindow w(attach_options("vol"));
  show_real(w);
  REQUIRE(shows_frames(w));
  auto* three = w.findChild<QCheckBox*>("three_planes");
  REQUIRE(three != nullptr);
  REQUIRE(three->isVisible());
  x11::click(centre_of(three));
  // Through the middle of every axis: x 12, y 8, z 6.
  const std::array<std::uint32_t, 3> middle{W / 2, H / 2, D / 2};
  REQUIRE(wait_for([&] {
    const auto& f = w.view()->last_frame();
    return f.layout.through == middle && f.image.size() == w.view()->size();
  }));
  // No arrows over three planes: the box says so.
  auto* arrows = w.findChild<QCheckBox*>("arrows");
  REQUIRE(arrows != nullptr);
  CHECK_FALSE(arrows->isEnabled());
  CHECK(arrows->toolTip().contains("one plane at a time"));
  auto reader = Client::attach(AttachOptions{.name = "vol", .client = "test reader"});
  auto frame = reader.next_frame(5s);
  REQUIRE(frame);
  // Every pixel of a grid of probes reads a cell on one of the three planes and its exact value;
  // each plane is seen.
  const auto probe = [&](const std::array<std::uint32_t, 3>& through, std::array<int, 3>& seen) {
    std::size_t wrong = 0;
    const auto& f = w.view()->last_frame();
    for (int py = 2; py < f.image.height(); py += 23)
      for (int px = 2; px < f.image.width(); px += 29) {
        const QString text = w.view()->readout({px, py});
        if (text.isEmpty()) continue;  // between the planes, or outside
        unsigned x = 0, y = 0, z = 0;
        float v = 0;
        if (std::sscanf(text.toUtf8().constData(), "(%u, %u, %u) = %g", &x, &y, &z, &v) != 4) {
          ++wrong;
          continue;
        }
        double cx = 0, cy = 0;
        REQUIRE(w.view()->cell_coords({px, py}, cx, cy));
        const Panel* panel = f.layout.panel_at(static_cast<int>(cx), static_cast<int>(cy));
        REQUIRE(panel != nullptr);
        const auto axis = static_cast<std::size_t>(panel->slice.axis);  // z 0, y 1, x 2
        ++seen[axis];
        const std::array<unsigned, 3> along{z, y, x};
        const float want = at(*frame, x, y, z);
        wrong += along[axis] != through[2 - axis] ||
                 text != QString("(%1, %2, %3) = %4").arg(x).arg(y).arg(z).arg(double(want), 0, 'g', 6);
      }
    return wrong;
  };
  std::array<int, 3> seen{};
  CHECK(probe(middle, seen) == 0);
  CHECK(seen[0] > 10);  // the z-plane, top left
  CHECK(seen[1] > 5);   // the y-plane, below it
  CHECK(seen[2] > 5);   // the x-plane, beside it

  // Shift + wheel over the x-plane moves the x-plane alone.
  const auto& f = w.view()->last_frame();
  const auto x_panel = std::find_if(f.layout.panels.begin(), f.layout.panels.end(),
                                    [](const Panel& p) { return p.slice.axis == SliceAxis::x; });
  REQUIRE(x_panel != f.layout.panels.end());
  const double cell_x = x_panel->x + x_panel->cols / 2.0, cell_y = x_panel->y + x_panel->rows / 2.0;
  const QPoint over((cell_x - f.center_x) * f.pixels_per_cell + f.image.width() / 2.0,
                    (cell_y - f.center_y) * f.pixels_per_cell + f.image.height() / 2.0);
  x11::click_with("shift", w.view()->mapToGlobal(over), x11::Button::wheel_up);
  const std::array<std::uint32_t, 3> moved{W / 2 + 1, H / 2, D / 2};
  REQUIRE(wait_for([&] { return w.view()->last_frame().layout.through == moved; }));
  seen = {};
  CHECK(probe(moved, seen) == 0);
  CHECK(seen[2] > 5);
}
