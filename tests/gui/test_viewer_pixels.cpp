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
  // Any frame of step 300 holds these values (the run is paused there): ctl's arrival may make the
  // publisher send another one, which the viewer then shows.
  REQUIRE(wait_for([&] {
    const auto r = ctl("z", {"attach", "--frames", "1", "--save", saved});
    static const std::regex kSaved("saved frame (\\d+) \\(step 300");
    return r.code == 0 && std::regex_search(r.out, kSaved);
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
      return f.info.step == 300 && f.field == 0 && (notches == 0 || f.pixels_per_cell != before);
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
  pub.add_field({"colour", rgba.data(), rgba.size() * 4, {H, W}, DType::float32, 4, Memory::host, "RGBA"});
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

namespace {
/// The square blocks of `side` pixels of `image` that hold more than one colour: none in a picture
/// drawn at 1/side resolution and scaled up, many along the edges of a sharp one.
int mixed_blocks(const QImage& image, int side) {
  int mixed = 0;
  for (int y = 0; y + side <= image.height(); y += side)
    for (int x = 0; x + side <= image.width(); x += side) {
      bool one_colour = true;
      for (int dy = 0; dy < side && one_colour; ++dy)
        for (int dx = 0; dx < side && one_colour; ++dx) one_colour = image.pixel(x + dx, y + dy) == image.pixel(x, y);
      mixed += one_colour ? 0 : 1;
    }
  return mixed;
}
}  // namespace

TEST_CASE("new data coming faster than full pictures is drawn at half resolution at most, in full once it stops",
          "[gui][host]") {
  // A ball in a 64³ brick, drawn as emission. What a full picture costs is set rather than
  // measured, so that every branch of the rule is taken whatever this machine's speed.
  auto brick = std::make_shared<HostBrick>();
  BrickSampler::begin(*brick, {64, 64, 64}, 1);
  for (int z = 0; z < 64; ++z)
    for (int y = 0; y < 64; ++y)
      for (int x = 0; x < 64; ++x)
        brick->values[(static_cast<std::size_t>(z) * 64 + y) * 64 + x] =
            std::hypot(x - 31.5, y - 31.5, z - 31.5) < 20 ? 1.0f : 0.0f;
  BrickSampler::finish(*brick);
  ViewRequest v;
  v.width = 320, v.height = 200;
  v.volume = VolumeRequest{};
  v.volume->mode = VolumeMode::emission;
  v.volume->opacity = opacity_preset_curve("ramp");
  const proto::DescribeResult d;

  struct Case {
    double full_ms, frames_per_second;
    int scale;
    const char* why;
  };
  for (const Case c : {Case{10, 1000, 1, "a full picture is faster than a 30 Hz frame: in full"},
                       Case{60, 10, 1, "full pictures keep up with the frames: in full"},
                       Case{60, 30, 2, "frames come faster than full pictures: at half resolution"},
                       Case{500, 30, 1, "half resolution would not keep up (a quarter needed): in full, fewer"}}) {
    INFO(c.why << " (a full picture costs " << c.full_ms << " ms, " << c.frames_per_second << " frames/s)");
    VolumeViewRenderer r;
    r.assume_full_picture_ms(c.full_ms);
    r.set_data_rate(0);  // a paused run: in full
    const auto still = r.render(brick, d, 0, v, FrameInfo{}, {});
    REQUIRE(still.frame);
    REQUIRE(still.frame->volume->scale == 1);
    CHECK(mixed_blocks(still.frame->image, 2) > 0);  // sharp: the ball's edge within 2×2 blocks

    r.set_data_rate(c.frames_per_second);
    const auto streamed = r.render(brick, d, 0, v, FrameInfo{}, {});
    REQUIRE(streamed.frame);
    const auto& picture = streamed.frame->image;
    CHECK(streamed.frame->volume->scale == c.scale);
    CHECK(picture.size() == QSize(v.width, v.height));  // as large as asked, whatever its resolution
    if (c.scale == 2) {
      CHECK(mixed_blocks(picture, 2) == 0);  // each ray fills a 2×2 block
      CHECK(picture != still.frame->image);
    } else {
      CHECK(picture == still.frame->image);
    }
    // The stream stopped: a picture drawn coarser for it is drawn again in full.
    r.set_data_rate(0);
    CHECK(r.wants_still() == (c.scale == 2));
    const auto again = r.render(brick, d, 0, v, FrameInfo{}, {});
    REQUIRE(again.frame);
    CHECK(again.frame->volume->scale == 1);
    CHECK(again.frame->image == still.frame->image);
    CHECK_FALSE(r.wants_still());
  }
}
