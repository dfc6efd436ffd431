// The viewer as a person uses it, in real windows on a private X server (window_test.hpp):
// the X server's pixels of a known field, and a signed field in diverging around 0.
#include <QAbstractItemView>
#include <QComboBox>
#include <QFontMetrics>
#include <QImage>
#include <QSet>
#include <QSettings>
#include <catch2/catch.hpp>
#include <cmath>

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
  // A reader of every field makes the paused daemon publish a frame holding them all: the viewer shows it too.
  REQUIRE(wait_for([&] { return w.view()->last_frame().info.seq == frame->info().seq; }));

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
  REQUIRE(wait_for([&] { return w.view()->last_frame().info.seq == frame->info().seq; }));
  const RenderedFrame shown = w.view()->last_frame();
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
