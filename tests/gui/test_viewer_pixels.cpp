// The viewer's picture, offscreen: a known field in the colormap's colours, and every pixel and
// readout the field's exact value at any zoom.
#include <QApplication>
#include <QImage>
#include <QWheelEvent>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <regex>

#include "backend_test.hpp"
#include "cuview/brick_sampler.hpp"
#include "cuview/client.hpp"
#include "cuview/publisher.hpp"
#include "field_view.hpp"
#include "main_window.hpp"
#include "render/render.hpp"
#include "render/volume_view.hpp"
#include "viewer_test.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace cuview::gui;
using namespace std::chrono_literals;

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

  // A reader of every field: the paused daemon publishes a frame holding them all (the viewer's
  // held only v), which the viewer shows too.
  auto reader = Client::attach(AttachOptions{.name = "t", .client = "test reader"});
  auto frame = reader.next_frame(5s);
  REQUIRE(frame);
  REQUIRE(wait_for([&] { return w->view()->last_frame().info.seq == frame->info().seq; }));
  const auto& shown = w->view()->last_frame();
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

TEST_CASE("a field of four components (an RGBA colour) is drawn as its magnitude", "[gui]") {
  RuntimeDir rt;
  constexpr std::uint32_t W = 16, H = 12;
  std::vector<float> rgba(std::size_t{W} * H * 4);
  for (std::uint32_t y = 0; y < H; ++y)
    for (std::uint32_t x = 0; x < W; ++x) {
      float* cell = &rgba[(std::size_t{y} * W + x) * 4];
      cell[0] = float(x), cell[1] = float(y), cell[2] = 1, cell[3] = 2;
    }
  Publisher pub({.name = "rgba", .backend = "host", .max_fps = 0, .max_cost = 1});
  pub.add_field({"colour", rgba.data(), rgba.size() * 4, W, H, DType::float32, 4, Memory::host, "RGBA"});
  pub.start();
  auto w = open_viewer("rgba");
  std::uint64_t step = 0;
  REQUIRE(wait_for([&] {
    (void)pub.publish(++step, 0.0);  // a viewer that attaches gets the next publish's frame
    return w->frames_displayed() > 0;
  }));
  // The whole 16×12 grid fits: the smallest magnitude is cell (0, 0)'s, the largest (15, 11)'s.
  const auto& f = w->view()->last_frame();
  CHECK(f.data_lo == Approx(std::sqrt(5.0)));
  CHECK(f.data_hi == Approx(std::sqrt(15.0 * 15 + 11 * 11 + 5)));
  w->close();
}

TEST_CASE("new data coming faster than full pictures is drawn at half resolution at most, in full once it stops",
          "[gui][host]") {
  // A ball in a 96³ brick, drawn as emission in a large picture (slow on a small machine).
  auto brick = std::make_shared<HostBrick>();
  BrickSampler::begin(*brick, {96, 96, 96}, 1);
  for (int z = 0; z < 96; ++z)
    for (int y = 0; y < 96; ++y)
      for (int x = 0; x < 96; ++x)
        brick->values[(static_cast<std::size_t>(z) * 96 + y) * 96 + x] =
            std::hypot(x - 47.5, y - 47.5, z - 47.5) < 30 ? 1.0f : 0.0f;
  BrickSampler::finish(*brick);
  ViewRequest v;
  v.width = 1600, v.height = 1000;
  v.volume = VolumeRequest{};
  v.volume->mode = VolumeMode::emission;
  v.volume->opacity = opacity_preset("ramp", 1);
  VolumeViewRenderer r;
  const proto::DescribeResult d;
  r.set_data_rate(0);  // a paused run: in full
  const auto still = r.render(brick, d, 0, v, FrameInfo{}, {});
  REQUIRE(still.frame);
  REQUIRE(still.frame->volume->scale == 1);
  const double full_ms = still.frame->volume->render_ms;
  // Frames streaming in: half resolution where that keeps up, never coarser (in full instead).
  r.set_data_rate(1e6);
  const auto streamed = r.render(brick, d, 0, v, FrameInfo{}, {});
  REQUIRE(streamed.frame);
  INFO("a full picture took " << full_ms << " ms");
  const int want = interactive_scale(full_ms) == 2 ? 2 : 1;
  CHECK(streamed.frame->volume->scale == want);
  CHECK(streamed.frame->image.size() == QSize(v.width, v.height));
  // The stream stopped: a picture drawn coarser for it is drawn again in full.
  r.set_data_rate(0);
  CHECK(r.wants_still() == (want == 2));
}
