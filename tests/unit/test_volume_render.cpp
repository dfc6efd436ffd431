// The volume renderer (gui/render/volume_render.hpp) on known fields: a ball of value 1 in a box of
// zeros. Its maximum-intensity projection is a disc of the ball's radius where geometry puts it,
// the isosurface at 0.5 its silhouette, shaded brightest facing the camera; orbiting moves it as
// the camera's axes say; the transfer function changes the pixels it should and no others.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend_test.hpp"
#include "cuview/volume_composite.hpp"
#include "render/volume_caster.hpp"
#include "render/volume_render.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "cuview/cuda/device_buffer.hpp"
#include "cuview/cuda/stream.hpp"
#endif

using namespace cuview::gui;

namespace {

constexpr int kN = 48, kView = 240;
constexpr double kRadius = 9;

struct Ball {
  std::vector<float> cells = std::vector<float>(static_cast<std::size_t>(kN) * kN * kN, 0.f);
  double cx, cy, cz;
  Ball(double dx, double dy, double dz) : cx((kN - 1) / 2.0 + dx), cy((kN - 1) / 2.0 + dy), cz((kN - 1) / 2.0 + dz) {
    for (int z = 0; z < kN; ++z)
      for (int y = 0; y < kN; ++y)
        for (int x = 0; x < kN; ++x)
          if ((x - cx) * (x - cx) + (y - cy) * (y - cy) + (z - cz) * (z - cz) <= kRadius * kRadius)
            cells[(static_cast<std::size_t>(z) * kN + y) * kN + x] = 1.f;
  }
  [[nodiscard]] VolumeBrick brick() const { return {cells.data(), kN, kN, kN}; }
};

double pixels_per_cell(double zoom = 1) { return zoom * kView / (kN * std::sqrt(3.0)); }

VolumeStyle style() {
  VolumeStyle s;
  s.lut = make_lut(Colormap::grayscale);
  s.opacity = opacity_preset("ramp", kN);
  return s;
}

/// Where the picture shows something (value > 0.5, or a surface hit): centroid and count.
struct Blob {
  double x = 0, y = 0;
  int count = 0;
};
Blob blob(const VolumeImage& img, bool surface) {
  Blob b;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) {
      const float v = img.values[static_cast<std::size_t>(y) * img.width + x];
      if (surface ? !std::isnan(v) : v > 0.5f) b.x += x + 0.5, b.y += y + 0.5, ++b.count;
    }
  if (b.count > 0) b.x /= b.count, b.y /= b.count;
  return b;
}

/// Checks that, for every pixel clearly inside the disc of radius kRadius around (px, py) in
/// picture coordinates, `inside` holds, and for every pixel clearly outside, `outside` holds.
template <class In, class Out>
void disc(const VolumeImage& img, double px, double py, In inside, Out outside) {
  const double s = pixels_per_cell();
  int in = 0, out = 0, wrong_in = 0, wrong_out = 0;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) {
      const double r = std::hypot(x + 0.5 - px, y + 0.5 - py) / s;  // in cells
      const std::size_t at = static_cast<std::size_t>(y) * img.width + x;
      if (r < kRadius - 1.5) {
        ++in;
        wrong_in += inside(img.values[at], img.argb[at]) ? 0 : 1;
      } else if (r > kRadius + 1.5) {
        ++out;
        wrong_out += outside(img.values[at], img.argb[at]) ? 0 : 1;
      }
    }
  CHECK(in > 100);
  CHECK(out > 100);
  CHECK(wrong_in == 0);
  CHECK(wrong_out == 0);
}

}  // namespace

TEST_CASE("the maximum-intensity projection of a ball is a disc of its radius at its place", "[volume]") {
  const Ball ball(0, 0, 0);
  const auto img = render_volume(ball.brick(), {}, VolumeMode::mip, style(), kView, kView);
  disc(img, kView / 2.0, kView / 2.0, [](float v, std::uint32_t) { return v == 1.f; },
       [](float v, std::uint32_t) { return std::isnan(v) || v == 0.f; });
  const auto b = blob(img, false);
  CHECK(std::abs(b.x - kView / 2.0) < 1);
  CHECK(std::abs(b.y - kView / 2.0) < 1);
}

TEST_CASE("the isosurface at 0.5 is the ball's silhouette, brightest where it faces the camera", "[volume]") {
  const Ball ball(0, 0, 0);
  auto s = style();
  s.level = 0.5f;
  const auto img = render_volume(ball.brick(), {}, VolumeMode::isosurface, s, kView, kView);
  disc(img, kView / 2.0, kView / 2.0, [](float v, std::uint32_t) { return !std::isnan(v); },
       [](float v, std::uint32_t) { return std::isnan(v); });
  // Shaded by the surface's normal: the centre (facing the camera) is brighter than the rim.
  const std::size_t centre = static_cast<std::size_t>(kView / 2) * kView + kView / 2;
  const int rim_x = kView / 2 + static_cast<int>((kRadius - 2) * pixels_per_cell());
  const std::size_t rim = static_cast<std::size_t>(kView / 2) * kView + static_cast<std::size_t>(rim_x);
  CHECK((img.argb[centre] & 0xff) > (img.argb[rim] & 0xff) + 20);
  // The surface's distance along the ray is least at the centre: the front of the ball.
  CHECK(img.values[centre] < img.values[rim]);
}

TEST_CASE("orbiting moves the picture as the camera's axes say", "[volume]") {
  const Ball ball(12, 0, 0);  // right of the centre, in x
  const double s = pixels_per_cell();
  const auto at = [&](double azimuth, double elevation) {
    VolumeCamera c;
    c.azimuth_deg = azimuth;
    c.elevation_deg = elevation;
    return blob(render_volume(ball.brick(), c, VolumeMode::mip, style(), kView, kView), false);
  };
  const auto front = at(0, 0), side = at(90, 0), back = at(180, 0);
  CHECK(std::abs(front.x - (kView / 2.0 + 12 * s)) < 1.5);  // x to the right
  CHECK(std::abs(side.x - kView / 2.0) < 1.5);              // 90°: looking along x, the offset is depth
  CHECK(std::abs(back.x - (kView / 2.0 - 12 * s)) < 1.5);   // 180°: mirrored
  CHECK(std::abs(front.y - kView / 2.0) < 1.5);
  // The same ball seen from another side is as big: a disc of the same area.
  CHECK(std::abs(side.count - front.count) < front.count / 20);
  // A ball below the centre (y) moves up the picture, onto its centre, as the camera rises to 90°.
  const Ball low(0, 12, 0);
  VolumeCamera above;
  above.elevation_deg = 90;
  const auto b0 = blob(render_volume(low.brick(), {}, VolumeMode::mip, style(), kView, kView), false);
  const auto b90 = blob(render_volume(low.brick(), above, VolumeMode::mip, style(), kView, kView), false);
  CHECK(std::abs(b0.y - (kView / 2.0 + 12 * s)) < 1.5);
  CHECK(std::abs(b90.y - kView / 2.0) < 1.5);
  // Zoom and pan: twice the pixels per cell, and the picture's centre moved onto the ball.
  VolumeCamera closer;
  closer.zoom = 2;
  closer.pan_x = 12;
  const auto z = blob(render_volume(ball.brick(), closer, VolumeMode::mip, style(), kView, kView), false);
  CHECK(std::abs(z.x - kView / 2.0) < 1.5);
  CHECK(std::abs(z.count - 4.0 * front.count) < front.count / 5.0);
}

TEST_CASE("the transfer function changes the ball's pixels and no others", "[volume]") {
  const Ball ball(0, 0, 0);
  auto s = style();
  s.opacity.fill(0.f);  // transparent everywhere: nothing shows
  const auto none = render_volume(ball.brick(), {}, VolumeMode::emission, s, kView, kView);
  CHECK(std::all_of(none.argb.begin(), none.argb.end(), [](std::uint32_t c) { return c == 0xff000000u; }));
  s.opacity[255] = 3.f;  // the ball (value 1) opaque within a cell or two, the zeros transparent
  const auto gray = render_volume(ball.brick(), {}, VolumeMode::emission, s, kView, kView);
  s.lut = make_lut(Colormap::magma);
  const auto magma = render_volume(ball.brick(), {}, VolumeMode::emission, s, kView, kView);
  disc(gray, kView / 2.0, kView / 2.0, [](float alpha, std::uint32_t c) { return alpha > 0.9f && (c & 0xff) > 200; },
       [](float alpha, std::uint32_t c) { return (std::isnan(alpha) || alpha == 0.f) && c == 0xff000000u; });
  int changed_seen = 0, changed_unseen = 0;  // where the ball shows (some opacity), and elsewhere
  for (std::size_t i = 0; i < gray.argb.size(); ++i) {
    if (gray.argb[i] == magma.argb[i]) continue;
    (gray.values[i] > 0.f ? changed_seen : changed_unseen) += 1;
  }
  CHECK(changed_seen > 100);
  CHECK(changed_unseen == 0);
}

TEST_CASE("a brick of cells four times as deep as wide is drawn with its aspect ratio: a physically round ball is a "
          "disc from the side, the box's picture as tall as it is deep",
          "[volume][render]") {
  // A ball of radius 12 units on a grid 48 × 48 × 12 of cells 1 × 1 × 4: 6 cells deep, 24 across.
  constexpr int n = 48, d = 12;
  std::vector<float> cells(static_cast<std::size_t>(n) * n * d, 0.f);
  for (int z = 0; z < d; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x)
        if (std::hypot(x - (n - 1) / 2.0, y - (n - 1) / 2.0, (z - (d - 1) / 2.0) * 4) <= 12)
          cells[(static_cast<std::size_t>(z) * n + y) * n + x] = 1.f;
  VolumeBrick brick{cells.data(), n, n, d};
  brick.cell = {1, 1, 4};
  VolumeCamera side;
  side.azimuth_deg = 90;  // looking along x: z across the picture, y down it
  const auto img = render_volume(brick, side, VolumeMode::mip, style(), kView, kView);
  int left = kView, right = -1, top = kView, bottom = -1;
  for (int y = 0; y < kView; ++y)
    for (int x = 0; x < kView; ++x)
      if (img.values[static_cast<std::size_t>(y) * kView + x] > 0.5f)
        left = std::min(left, x), right = std::max(right, x), top = std::min(top, y), bottom = std::max(bottom, y);
  REQUIRE(right > left);
  const double ratio = double(right - left + 1) / double(bottom - top + 1);
  INFO("across / down = " << ratio);
  CHECK(ratio > 0.85);
  CHECK(ratio < 1.18);
  // The same brick drawn as cubes: the disc is a quarter as wide as it is tall.
  brick.cell = {1, 1, 1};
  const auto flat = render_volume(brick, side, VolumeMode::mip, style(), kView, kView);
  int l2 = kView, r2 = -1, t2 = kView, b2 = -1;
  for (int y = 0; y < kView; ++y)
    for (int x = 0; x < kView; ++x)
      if (flat.values[static_cast<std::size_t>(y) * kView + x] > 0.5f)
        l2 = std::min(l2, x), r2 = std::max(r2, x), t2 = std::min(t2, y), b2 = std::max(b2, y);
  CHECK(double(r2 - l2 + 1) < 0.4 * double(b2 - t2 + 1));
}

TEST_CASE("the automatic transfer function makes the value most cells hold clear and the rare ones opaque, over the "
          "range most values lie in",
          "[volume][render]") {
  // The ball (value 1, ~3 % of the cells) in a box of zeros, and a few extreme cells in it (one in
  // a hundred of its cells, 0.03 % of all) that would otherwise squeeze the colours into the
  // bottom of the range.
  Ball ball(0, 0, 0);
  for (std::size_t i = 0; i < ball.cells.size(); i += 100)
    if (ball.cells[i] == 1.f) ball.cells[i] = 100.f;
  const auto& cells = ball.cells;
  const auto range = robust_range(cells.data(), cells.size(), 0.f, 100.f);
  CHECK(range[0] == 0.f);
  CHECK(range[1] < 1.1f);
  CHECK(range[1] >= 1.f);
  const auto curve = opacity_by_rarity(cells.data(), cells.size(), range[0], range[1]);
  CHECK(curve[0] < 0.01f);   // the zeros: clear
  CHECK(curve[255] > 0.8f);  // the ball: opaque
  // Drawn with it, the ball glows and nothing else does; with a flat curve the box of zeros
  // shows as much as the ball.
  VolumeStyle s = style();
  s.lo = range[0], s.hi = range[1];
  for (std::size_t i = 0; i < 256; ++i) s.opacity[i] = curve[i] * full_opacity(kN);  // as the viewer draws it
  const auto shown = render_volume(ball.brick(), VolumeCamera{}, VolumeMode::emission, s, kView, kView);
  const double px = kView / 2.0, py = kView / 2.0;
  disc(shown, px, py, [](float v, std::uint32_t) { return v > 0.5f; },
       [](float v, std::uint32_t) { return std::isnan(v) || v < 0.01f; });
  s.opacity.fill(full_opacity(kN));
  const auto flat = render_volume(ball.brick(), VolumeCamera{}, VolumeMode::emission, s, kView, kView);
  disc(flat, px, py, [](float v, std::uint32_t) { return v > 0.5f; },
       [](float v, std::uint32_t) { return std::isnan(v) || v > 0.5f; });
}

TEST_CASE("the presets glow through the whole brick; the curve's 1 makes a quarter of it nearly opaque", "[volume][render]") {
  // A uniform brick, seen along z through its kN cells: the flat preset lets e^-4 through (the
  // presets' look, a translucent glow); the editor's 1 over the whole curve, e^-16.
  const std::vector<float> cells(static_cast<std::size_t>(kN) * kN * kN, 0.5f);
  const auto opacity_at_centre = [&](const std::array<float, 256>& opacity) {
    VolumeStyle s = style();
    s.opacity = opacity;
    const auto shown = render_volume({cells.data(), kN, kN, kN}, VolumeCamera{}, VolumeMode::emission, s, kView, kView);
    return shown.values[static_cast<std::size_t>(kView / 2) * kView + kView / 2];
  };
  CHECK(opacity_preset_curve("flat")[128] == Approx(kPresetTop));
  CHECK(opacity_at_centre(opacity_preset("flat", kN)) == Approx(1 - std::exp(-4.0)).margin(0.01));
  std::array<float, 256> one{};
  one.fill(full_opacity(kN));
  CHECK(opacity_at_centre(one) > 0.995f);  // rays stop once 99.5 % opaque
}

TEST_CASE("a field whose values spread over the range is drawn by default as nested shells, not a fog", "[volume][render]") {
  // Values rising smoothly with the distance from the box's centre (a wake, a duct's profile: no
  // single value most cells hold). Seen from the front, the automatic curve shows shells — rings
  // around the centre, bright where a ray grazes a shell, darker between — where a curve without
  // them draws a smooth glow that rises to the edge.
  std::vector<float> cells(static_cast<std::size_t>(kN) * kN * kN);
  const double c = (kN - 1) / 2.0;
  for (int z = 0; z < kN; ++z)
    for (int y = 0; y < kN; ++y)
      for (int x = 0; x < kN; ++x)
        cells[(static_cast<std::size_t>(z) * kN + y) * kN + x] =
            static_cast<float>(std::min(1.0, std::sqrt((x - c) * (x - c) + (y - c) * (y - c) + (z - c) * (z - c)) / c));
  const auto curve = opacity_by_rarity(cells.data(), cells.size(), 0.f, 1.f);
  VolumeStyle s = style();
  s.lo = 0, s.hi = 1;
  for (std::size_t i = 0; i < 256; ++i) s.opacity[i] = curve[i] * full_opacity(kN);
  const auto shown = render_volume({cells.data(), kN, kN, kN}, VolumeCamera{}, VolumeMode::emission, s, kView, kView);
  // The brightness along the row through the centre, outwards: a fog rises smoothly to the edge
  // (where the rays are longest in bright values); shells step down past each rim.
  std::vector<int> row;
  for (int x = kView / 2; x < kView; ++x) {
    const auto at = static_cast<std::size_t>(kView / 2) * kView + x;
    if (!std::isnan(shown.values[at])) row.push_back(static_cast<int>(shown.argb[at] & 0xff));
  }
  int rims = 0;
  for (std::size_t i = 0; i + 3 < row.size(); ++i)
    if (row[i] - row[i + 3] >= 8) rims += 1, i += 6;  // one rim, not each of its pixels
  CHECK(rims >= 2);
  CHECK(*std::max_element(row.begin(), row.end()) > 200);  // the rims in their full colour, not a faint haze
}

TEST_CASE("the GPU caster's full-resolution pictures equal the CPU caster's in every mode", "[volume][render][gpu]") {
  cuview::test::require_backend(cuview::test::Backend::cuda);
#ifdef CUVIEW_HAVE_CUDA
  // A smooth field on cells twice as deep as wide: a Gaussian blob and a ball, seen from an orbit.
  constexpr int n = 64, d = 32;
  std::vector<float> cells(static_cast<std::size_t>(n) * n * d);
  for (int z = 0; z < d; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const double r2 = std::pow(x - 24.0, 2) + std::pow(y - 30.0, 2) + std::pow(2 * (z - 14.0), 2);
        const double ball = std::hypot(x - 44.0, y - 40.0, 2 * (z - 18.0)) <= 10 ? 0.8 : 0.0;
        cells[(static_cast<std::size_t>(z) * n + y) * n + x] = static_cast<float>(std::exp(-r2 / 200.0) + ball);
      }
  cuview::cuda::DeviceBuffer device(cells.size() * sizeof(float));
  REQUIRE(cudaMemcpy(device.get(), cells.data(), cells.size() * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
  VolumeBrick host_brick{cells.data(), n, n, d}, gpu_brick{static_cast<const float*>(device.get()), n, n, d};
  host_brick.cell = gpu_brick.cell = {1, 1, 2};
  VolumeCamera camera;
  camera.azimuth_deg = 30, camera.elevation_deg = 20, camera.zoom = 1.3;
  VolumeStyle s = style();
  s.lut = make_lut(Colormap::viridis);
  s.opacity = opacity_preset("ramp", n);
  s.lo = 0, s.hi = 1, s.level = 0.5f;
  auto stream = cuview::cuda::Stream::create();
  cuview::VolumeCaster caster;
  for (const auto mode : {VolumeMode::mip, VolumeMode::emission, VolumeMode::isosurface}) {
    const auto cpu = render_volume(host_brick, camera, mode, s, 320, 200);
    cuview::VolumePicture gpu;
    caster.cast(gpu_brick, camera, mode, s, 320, 200, stream.ref(), gpu);
    REQUIRE(gpu.argb.size() == cpu.argb.size());
    // The same code on both: pixels differ only where fused multiply-adds move a sample across a
    // cell or the level (a ray grazing the surface). Tolerance: 2 of 255 per channel and 1e-3 of
    // a value, except at most 0.2 % of the pixels.
    std::size_t differing = 0, shown = 0;
    for (std::size_t i = 0; i < cpu.argb.size(); ++i) {
      const float a = cpu.values[i], b = gpu.values[i];
      shown += std::isnan(a) ? 0 : 1;
      bool same = std::isnan(a) == std::isnan(b) && (std::isnan(a) || std::abs(a - b) <= 1e-3f);
      for (int shift = 0; shift < 24 && same; shift += 8)
        same = std::abs(int((cpu.argb[i] >> shift) & 0xff) - int((gpu.argb[i] >> shift) & 0xff)) <= 2;
      differing += same ? 0 : 1;
    }
    INFO("mode " << int(mode) << ": " << differing << " of " << cpu.argb.size() << " pixels differ; " << shown
                 << " show the field");
    CHECK(shown > 2000);  // the isosurface's fewest: the blob's core and the ball
    CHECK(differing * 500 <= cpu.argb.size());
  }
#endif
}

TEST_CASE("the parts' pictures of a view composite front to back: over for emission, the largest for MIP, the "
          "nearest surface",
          "[unit][volume]") {
  using cuview::composite_pictures;
  using cuview::front_to_back;
  using cuview::PartPicture;
  using cuview::view_direction;
  // Two slabs along z: looking along +z (azimuth 0) the one at z = 0 is nearer; from behind the other.
  const std::vector<std::array<double, 3>> centres{{5, 5, 2}, {5, 5, 8}};
  CHECK(front_to_back(centres, view_direction(0, 0)) == std::vector<std::size_t>{0, 1});
  CHECK(front_to_back(centres, view_direction(180, 0)) == std::vector<std::size_t>{1, 0});
  CHECK(front_to_back(centres, view_direction(90, 0)) == std::vector<std::size_t>{0, 1});  // side on: either; stable
  // From above (elevation 90: looking along -y) slabs along y: the one at larger y is nearer.
  CHECK(front_to_back({{5, 2, 5}, {5, 8, 5}}, view_direction(0, 90)) == std::vector<std::size_t>{1, 0});

  // Pixel 0: both parts show something; pixel 1: only the back one; pixel 2: neither.
  const std::uint32_t front_argb[3] = {0xff800000u, cuview::kVolumeMiss, cuview::kVolumeMiss};  // red 0.5, premultiplied
  const float front_alpha[3] = {0.5f, NAN, NAN};
  const std::uint32_t back_argb[3] = {0xff0000ffu, 0xff0000ffu, cuview::kVolumeMiss};  // blue, opaque
  const float back_alpha[3] = {1.0f, 1.0f, NAN};
  std::uint32_t argb[3];
  float values[3];
  composite_pictures(VolumeMode::emission, {{front_argb, front_alpha}, {back_argb, back_alpha}}, 3, argb, values);
  CHECK(argb[0] == 0xff800080u);  // red half, then blue through the half left
  CHECK(values[0] == Approx(1.0f));
  CHECK(argb[1] == 0xff0000ffu);
  CHECK(values[1] == 1.0f);
  CHECK(argb[2] == cuview::kVolumeMiss);
  CHECK(std::isnan(values[2]));

  const float front_max[3] = {0.7f, NAN, NAN}, back_max[3] = {0.9f, 0.2f, NAN};
  composite_pictures(VolumeMode::mip, {{front_argb, front_max}, {back_argb, back_max}}, 3, argb, values);
  CHECK(values[0] == 0.9f);
  CHECK(argb[0] == back_argb[0]);
  CHECK(values[1] == 0.2f);
  CHECK(std::isnan(values[2]));

  const float front_hit[3] = {12.0f, NAN, NAN}, back_hit[3] = {30.0f, 31.0f, NAN};
  composite_pictures(VolumeMode::isosurface, {{front_argb, front_hit}, {back_argb, back_hit}}, 3, argb, values);
  CHECK(values[0] == 12.0f);  // the nearer surface hides the farther one
  CHECK(argb[0] == front_argb[0]);
  CHECK(values[1] == 31.0f);
  CHECK(argb[2] == cuview::kVolumeMiss);
}

TEST_CASE("a block of a larger grid, cast alone, frames the whole grid and shows only its own cells",
          "[unit][volume]") {
  // A 16³ grid whose cells are all 1, cut into two z-slabs: from the front (looking along +z) each
  // slab's MIP covers the whole grid's square; from the side, each covers its own half.
  std::vector<float> ones(16 * 16 * 8, 1.0f);
  VolumeStyle style;
  for (std::size_t i = 0; i < 256; ++i) style.lut[i] = 0xff000000u | static_cast<std::uint32_t>(i);
  const auto covered = [&](int z0, double azimuth) {
    VolumeBrick b{ones.data(), 16, 16, 8, {1, 1, 1}, {16, 16, 16}, {0, 0, z0}};
    const auto img = cuview::gui::render_volume(b, {azimuth, 0, 1, 0, 0}, VolumeMode::mip, style, 64, 64);
    double n = 0, x = 0;
    for (int y = 0; y < 64; ++y)
      for (int px = 0; px < 64; ++px)
        if (!std::isnan(img.values[static_cast<std::size_t>(y) * 64 + px])) n += 1, x += px + 0.5;
    return std::pair{n, n > 0 ? x / n : 0.0};
  };
  const auto [front_a, front_a_x] = covered(0, 0);
  const auto [front_b, front_b_x] = covered(8, 0);
  CHECK(front_a == front_b);  // both see the whole square face-on
  CHECK(std::abs(front_a_x - 32) < 0.5);
  const auto [side_a, side_a_x] = covered(0, 90);
  const auto [side_b, side_b_x] = covered(8, 90);
  CHECK(std::abs(side_a - front_a / 2) < 0.05 * front_a);  // half the square each
  CHECK(std::abs(side_b - front_a / 2) < 0.05 * front_a);
  // Looking along +x, -z lies to the right: slab z < 8 on the right half, z >= 8 on the left.
  CHECK(side_a_x > 32);
  CHECK(side_b_x < 32);
}

TEST_CASE("empty-space skipping changes no pixel: blocks that cannot change a ray are stepped over, the rest sampled",
          "[unit][volume]") {
  // Mostly a quiet field with a few bright blobs (what skipping gains on), every mode, several views.
  constexpr int w = 70, h = 45, d = 37;
  std::vector<float> v(std::size_t{w} * h * d);
  for (int z = 0; z < d; ++z)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const auto blob = [&](double cx, double cy, double cz, double r) {
          return std::exp(-((x - cx) * (x - cx) + (y - cy) * (y - cy) + (z - cz) * (z - cz)) / (2 * r * r));
        };
        v[(std::size_t{z} * h + y) * w + x] =
            static_cast<float>(0.05 + 0.9 * blob(20, 12, 10, 4) + 0.7 * blob(50, 30, 25, 6) + 0.5 * blob(60, 8, 30, 2));
      }
  VolumeBrick brick{v.data(), w, h, d, {1, 1.5, 2}};
  VolumeStyle style;
  for (std::size_t i = 0; i < 256; ++i) {
    style.lut[i] = 0xff000000u | static_cast<std::uint32_t>(i) << 8 | static_cast<std::uint32_t>(255 - i);
    style.opacity[i] = i < 40 ? 0.0f : 0.08f * static_cast<float>(i) / 255;  // the quiet values clear
  }
  style.lo = 0, style.hi = 1, style.level = 0.4f;
  for (const auto mode : {VolumeMode::mip, VolumeMode::emission, VolumeMode::isosurface})
    for (const VolumeCamera camera : {VolumeCamera{0, 0, 1, 0, 0}, VolumeCamera{35, 25, 1.3, 2, -1},
                                      VolumeCamera{120, -70, 0.8, 0, 0}}) {
      const auto skipped = render_volume(brick, camera, mode, style, 96, 64);  // with skipping
      cuview::VolumeTables tables;
      const auto rays = cuview::volume_rays(brick, camera, mode, style, 96, 64, tables);  // without: every sample
      std::size_t differing = 0;
      for (int y = 0; y < 64; ++y)
        for (int x = 0; x < 96; ++x) {
          std::uint32_t c = 0;
          float value = 0;
          cuview::cast_ray(rays, x, y, c, value);
          const std::size_t i = static_cast<std::size_t>(y) * 96 + x;
          // The same samples, reached by one long stride instead of many short ones: positions may
          // round differently in the last bit, a colour by a level.
          bool same = std::isnan(value) ? std::isnan(skipped.values[i]) : std::abs(value - skipped.values[i]) <= 1e-3f;
          for (int shift = 0; shift < 32 && same; shift += 8)
            same = std::abs(int((c >> shift) & 0xff) - int((skipped.argb[i] >> shift) & 0xff)) <= 1;
          differing += same ? 0 : 1;
        }
      INFO("mode " << static_cast<int>(mode) << ", camera " << camera.azimuth_deg << "°");
      CHECK(differing == 0);
    }
}
