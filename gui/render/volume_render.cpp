#include "render/volume_render.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <thread>

namespace cuview::gui {
namespace {

struct Vec {
  double x = 0, y = 0, z = 0;
};
Vec operator+(Vec a, Vec b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
Vec operator*(Vec a, double s) { return {a.x * s, a.y * s, a.z * s}; }
double dot(Vec a, Vec b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

constexpr double kPi = 3.14159265358979323846;

/// The camera's axes: right and down in the picture, and the view direction.
struct Axes {
  Vec right, down, dir;
};

Axes axes_of(const VolumeCamera& c) {
  const double a = c.azimuth_deg * kPi / 180, e = c.elevation_deg * kPi / 180;
  const Vec dir0{std::sin(a), 0, std::cos(a)}, right{std::cos(a), 0, -std::sin(a)}, down0{0, 1, 0};
  // Elevation turns dir and down about `right`: positive looks from above (from -y), down.
  return {right, down0 * std::cos(e) + dir0 * std::sin(e), dir0 * std::cos(e) + down0 * (-std::sin(e))};
}

class Sampler {
 public:
  explicit Sampler(const VolumeBrick& b)
      : d_(b.data), w_(b.width), h_(b.height), z_(b.depth), sy_(b.width),
        sz_(static_cast<std::ptrdiff_t>(b.width) * b.height), mx_(b.width - 1.0f), my_(b.height - 1.0f),
        mz_(b.depth - 1.0f) {}
  /// Trilinear at (x, y, z), cell centres at integers; clamped at the faces.
  [[nodiscard]] float at(float x, float y, float z) const {
    x = std::clamp(x, 0.0f, mx_);
    y = std::clamp(y, 0.0f, my_);
    z = std::clamp(z, 0.0f, mz_);
    const int x0 = std::min(static_cast<int>(x), std::max(w_ - 2, 0));
    const int y0 = std::min(static_cast<int>(y), std::max(h_ - 2, 0));
    const int z0 = std::min(static_cast<int>(z), std::max(z_ - 2, 0));
    const std::ptrdiff_t dx = w_ > 1 ? 1 : 0, dy = h_ > 1 ? sy_ : 0, dz = z_ > 1 ? sz_ : 0;
    const float fx = x - x0, fy = y - y0, fz = z - z0;
    const float* p = d_ + z0 * sz_ + y0 * sy_ + x0;
    const float c00 = p[0] + (p[dx] - p[0]) * fx;
    const float c10 = p[dy] + (p[dy + dx] - p[dy]) * fx;
    const float c01 = p[dz] + (p[dz + dx] - p[dz]) * fx;
    const float c11 = p[dz + dy] + (p[dz + dy + dx] - p[dz + dy]) * fx;
    const float c0 = c00 + (c10 - c00) * fy, c1 = c01 + (c11 - c01) * fy;
    return c0 + (c1 - c0) * fz;
  }
  [[nodiscard]] Vec gradient(Vec p) const {
    const auto x = static_cast<float>(p.x), y = static_cast<float>(p.y), z = static_cast<float>(p.z);
    return {at(x + 1, y, z) - at(x - 1, y, z), at(x, y + 1, z) - at(x, y - 1, z), at(x, y, z + 1) - at(x, y, z - 1)};
  }

 private:
  const float* d_;
  int w_, h_, z_;
  std::ptrdiff_t sy_, sz_;
  float mx_, my_, mz_;
};

std::uint32_t argb(double r, double g, double b) {
  auto c = [](double v) { return static_cast<std::uint32_t>(std::clamp(v, 0.0, 1.0) * 255.0 + 0.5); };
  return 0xff000000u | (c(r) << 16) | (c(g) << 8) | c(b);
}
double red(std::uint32_t c) { return ((c >> 16) & 0xff) / 255.0; }
double green(std::uint32_t c) { return ((c >> 8) & 0xff) / 255.0; }
double blue(std::uint32_t c) { return (c & 0xff) / 255.0; }

int index_of(float v, const VolumeStyle& s) {
  const float t = s.hi > s.lo ? (v - s.lo) / (s.hi - s.lo) : 0.f;
  return std::clamp(static_cast<int>(t * 255.f + 0.5f), 0, 255);  // NaN: 0
}

constexpr std::uint32_t kMiss = 0xff000000u;  // black where a ray shows nothing

/// A cell's sides in world units: the brick's `cell`, scaled so that the shortest is 1 (a side
/// that is not positive and finite counts as 1).
Vec cell_of(const VolumeBrick& brick) {
  std::array<double, 3> c = brick.cell;
  for (auto& side : c)
    if (!(side > 0) || !std::isfinite(side)) side = 1;
  const double shortest = std::min({c[0], c[1], c[2]});
  return {c[0] / shortest, c[1] / shortest, c[2] / shortest};
}
/// The brick's diagonal in world units: what zoom 1 fits into the view's shorter side.
double diagonal(const VolumeBrick& brick) {
  const Vec c = cell_of(brick);
  const double w = brick.width * c.x, h = brick.height * c.y, d = brick.depth * c.z;
  return std::sqrt(w * w + h * h + d * d);
}

}  // namespace

VolumeImage render_volume(const VolumeBrick& brick, const VolumeCamera& camera, VolumeMode mode,
                          const VolumeStyle& style, int width, int height) {
  VolumeImage out;
  out.width = std::max(width, 0);
  out.height = std::max(height, 0);
  const std::size_t pixels = static_cast<std::size_t>(out.width) * out.height;
  out.argb.assign(pixels, kMiss);
  out.values.assign(pixels, std::numeric_limits<float>::quiet_NaN());
  if (brick.data == nullptr || brick.width < 1 || brick.height < 1 || brick.depth < 1 || pixels == 0) return out;

  // Rays are cast in world space, where a cell is `c` (its shortest side 1), and sampled in the
  // brick's index space (world / c).
  const Vec c = cell_of(brick);
  const Axes ax = axes_of(camera);
  const Vec centre{(brick.width - 1) / 2.0 * c.x, (brick.height - 1) / 2.0 * c.y, (brick.depth - 1) / 2.0 * c.z};
  const double scale = std::max(camera.zoom, 1e-6) * std::min(out.width, out.height) / diagonal(brick);  // pixels per unit
  const double step = std::clamp(style.step, 0.05, 4.0);
  const Vec lo{-0.5 * c.x, -0.5 * c.y, -0.5 * c.z};
  const Vec hi{(brick.width - 0.5) * c.x, (brick.height - 0.5) * c.y, (brick.depth - 0.5) * c.z};
  auto index = [&](const Vec& w) { return Vec{w.x / c.x, w.y / c.y, w.z / c.z}; };
  const Sampler sample(brick);
  // Per colormap entry: the opacity of one step and the colour as floats, computed once.
  std::array<float, 256> step_alpha{};
  std::array<std::array<float, 3>, 256> lut_rgb{};
  for (std::size_t i = 0; i < 256; ++i) {
    step_alpha[i] = static_cast<float>(1 - std::exp(-static_cast<double>(style.opacity[i]) * step));
    lut_rgb[i] = {static_cast<float>(red(style.lut[i])), static_cast<float>(green(style.lut[i])),
                  static_cast<float>(blue(style.lut[i]))};
  }

  auto row = [&](int py) {
    for (int px = 0; px < out.width; ++px) {
      const double u = (px + 0.5 - out.width / 2.0) / scale + camera.pan_x;
      const double v = (py + 0.5 - out.height / 2.0) / scale + camera.pan_y;
      const Vec origin = centre + ax.right * u + ax.down * v;
      // Where the line origin + t·dir is inside the brick: [t0, t1] (the slab method).
      double t0 = -std::numeric_limits<double>::infinity(), t1 = std::numeric_limits<double>::infinity();
      const double o[3] = {origin.x, origin.y, origin.z}, d[3] = {ax.dir.x, ax.dir.y, ax.dir.z};
      const double l[3] = {lo.x, lo.y, lo.z}, h[3] = {hi.x, hi.y, hi.z};
      bool miss = false;
      for (int k = 0; k < 3 && !miss; ++k) {
        if (std::abs(d[k]) < 1e-12) {
          miss = o[k] < l[k] || o[k] > h[k];
          continue;
        }
        double a = (l[k] - o[k]) / d[k], b = (h[k] - o[k]) / d[k];
        if (a > b) std::swap(a, b);
        t0 = std::max(t0, a);
        t1 = std::min(t1, b);
      }
      if (miss || t0 > t1) continue;
      const std::size_t at = static_cast<std::size_t>(py) * out.width + px;
      auto point = [&](double t) { return origin + ax.dir * t; };
      // Marching in float through index space: the position advances by a fixed step vector.
      const float sx = static_cast<float>(ax.dir.x * step / c.x), sy = static_cast<float>(ax.dir.y * step / c.y),
                  sz = static_cast<float>(ax.dir.z * step / c.z);
      const Vec start = index(point(t0));
      const int samples = static_cast<int>((t1 - t0) / step) + 1;
      if (mode == VolumeMode::mip) {
        float best = -std::numeric_limits<float>::infinity();
        float x = static_cast<float>(start.x), y = static_cast<float>(start.y), z = static_cast<float>(start.z);
        for (int i = 0; i < samples; ++i, x += sx, y += sy, z += sz) best = std::max(best, sample.at(x, y, z));
        out.values[at] = best;
        out.argb[at] = style.lut[static_cast<std::size_t>(index_of(best, style))];
      } else if (mode == VolumeMode::emission) {
        float r = 0, g = 0, b = 0, alpha = 0;
        float x = static_cast<float>(start.x), y = static_cast<float>(start.y), z = static_cast<float>(start.z);
        for (int k = 0; k < samples && alpha < 0.995f; ++k, x += sx, y += sy, z += sz) {
          const auto i = static_cast<std::size_t>(index_of(sample.at(x, y, z), style));
          const float a = step_alpha[i];
          if (a <= 0) continue;
          const float w = (1 - alpha) * a;
          r += w * lut_rgb[i][0], g += w * lut_rgb[i][1], b += w * lut_rgb[i][2];
          alpha += w;
        }
        out.values[at] = static_cast<float>(alpha);
        out.argb[at] = argb(r, g, b);  // over black
      } else {
        const Vec p0 = index(point(t0));
        float before = sample.at(static_cast<float>(p0.x), static_cast<float>(p0.y), static_cast<float>(p0.z));
        if (before >= style.level) {  // the ray enters inside the surface: its face shows
          out.values[at] = 0;
          out.argb[at] = style.lut[static_cast<std::size_t>(index_of(style.level, style))];
          continue;
        }
        for (double t = t0 + step; t <= t1 + 1e-9; t += step) {
          const Vec p = index(point(std::min(t, t1)));
          const float now = sample.at(static_cast<float>(p.x), static_cast<float>(p.y), static_cast<float>(p.z));
          if (now < style.level) {
            before = now;
            continue;
          }
          // Crossed between t - step and t: bisect to the level.
          double a = t - step, b = std::min(t, t1);
          for (int k = 0; k < 12; ++k) {
            const double m = (a + b) / 2;
            const Vec q = index(point(m));
            (sample.at(static_cast<float>(q.x), static_cast<float>(q.y), static_cast<float>(q.z)) >= style.level ? b : a) = m;
          }
          const Vec hit = index(point(b));
          Vec n = sample.gradient(hit);
          n = Vec{n.x / c.x, n.y / c.y, n.z / c.z};  // the gradient in world space
          const double len = std::sqrt(dot(n, n));
          const double lambert = len > 0 ? std::abs(dot(n, ax.dir)) / len : 1.0;  // a headlight
          const double shade = 0.25 + 0.75 * lambert;
          const std::uint32_t c = style.lut[static_cast<std::size_t>(index_of(style.level, style))];
          out.values[at] = static_cast<float>(b - t0);
          out.argb[at] = argb(red(c) * shade, green(c) * shade, blue(c) * shade);
          break;
        }
        (void)before;
      }
    }
  };

  const int threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 64u));
  std::vector<std::thread> pool;
  for (int k = 0; k < threads; ++k)
    pool.emplace_back([&, k] {
      for (int py = k; py < out.height; py += threads) row(py);
    });
  for (auto& t : pool) t.join();
  return out;
}

std::array<double, 2> volume_pixel(const VolumeBrick& brick, const VolumeCamera& camera, int width, int height,
                                   double x, double y, double z) {
  const Axes ax = axes_of(camera);
  const Vec c = cell_of(brick);
  const Vec rel{(x - (brick.width - 1) / 2.0) * c.x, (y - (brick.height - 1) / 2.0) * c.y,
                (z - (brick.depth - 1) / 2.0) * c.z};
  const double scale = std::max(camera.zoom, 1e-6) * std::min(width, height) / diagonal(brick);
  return {(dot(rel, ax.right) - camera.pan_x) * scale + width / 2.0, (dot(rel, ax.down) - camera.pan_y) * scale + height / 2.0};
}

int interactive_scale(double full_ms) {
  if (!(full_ms > 33.0)) return 1;
  return std::clamp(static_cast<int>(std::ceil(std::sqrt(full_ms / 30.0))), 2, 4);
}

std::array<float, 256> opacity_preset(const char* name, int depth) {
  std::array<float, 256> o{};
  const float top = 4.0f / static_cast<float>(std::max(depth, 1));  // e^-4: a path of `depth` cells ~ opaque
  const std::string n = name != nullptr ? name : "ramp";
  for (int i = 0; i < 256; ++i) {
    const float t = i / 255.0f;
    if (n == "flat")
      o[static_cast<std::size_t>(i)] = top;
    else if (n == "peak")
      o[static_cast<std::size_t>(i)] = top * std::exp(-((t - 0.5f) * (t - 0.5f)) / (2 * 0.08f * 0.08f));
    else
      o[static_cast<std::size_t>(i)] = top * t * t;
  }
  return o;
}

}  // namespace cuview::gui
