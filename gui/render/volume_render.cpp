#include "render/volume_render.hpp"

#include "cuview/volume_cast.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <thread>

namespace cuview::gui {

VolumeImage render_volume(const VolumeBrick& brick, const VolumeCamera& camera, VolumeMode mode,
                          const VolumeStyle& style, int width, int height) {
  VolumeImage out;
  out.width = std::max(width, 0);
  out.height = std::max(height, 0);
  const std::size_t pixels = static_cast<std::size_t>(out.width) * out.height;
  out.argb.assign(pixels, kVolumeMiss);
  out.values.assign(pixels, std::numeric_limits<float>::quiet_NaN());
  cast_volume(brick, camera, mode, style, out.width, out.height, out.argb.data(), out.values.data());
  return out;
}

std::array<double, 2> volume_pixel(const VolumeBrick& brick, const VolumeCamera& camera, int width, int height,
                                   double x, double y, double z) {
  VolumeTables tables;
  const VolumeRays r = volume_rays(brick, camera, VolumeMode::mip, VolumeStyle{}, width, height, tables);
  const double p[3] = {x, y, z};
  double right = 0, down = 0;
  for (int k = 0; k < 3; ++k) {
    const double rel = p[k] * r.cell[k] - r.centre[k];
    right += rel * r.right[k], down += rel * r.down[k];
  }
  return {(right - camera.pan_x) * r.scale + width / 2.0, (down - camera.pan_y) * r.scale + height / 2.0};
}

std::array<float, 256> opacity_by_rarity(const float* values, std::size_t n, float lo, float hi) {
  std::array<double, 256> share{};
  const double span = hi > lo ? hi - lo : 1.0;
  for (std::size_t i = 0; i < n; ++i) {
    const float v = values[i];
    if (std::isnan(v)) continue;
    const double t = (v - lo) / span * 255.0 + 0.5;
    share[static_cast<std::size_t>(std::clamp(t, 0.0, 255.0))] += 1;
  }
  std::array<double, 256> smooth{};
  for (int i = 0; i < 256; ++i)
    smooth[static_cast<std::size_t>(i)] = (share[static_cast<std::size_t>(std::max(i - 1, 0))] +
                                           2 * share[static_cast<std::size_t>(i)] +
                                           share[static_cast<std::size_t>(std::min(i + 1, 255))]) / 4;
  const double most = *std::max_element(smooth.begin(), smooth.end());
  std::array<float, 256> curve{};
  for (std::size_t i = 0; i < 256; ++i) {
    const double clear = most > 0 ? 1 - smooth[i] / most : 1;
    // Shells: the opacity only near kShells evenly spaced values (the range's ends among them), so
    // that a field whose values spread over the range (a duct's profile, a wake) shows nested
    // surfaces, each seen through the ones before it, not a fog that hides them.
    double shell = 0;
    const double t = static_cast<double>(i) / 255.0;
    for (int k = 0; k < kShells; ++k) {
      const double d = (t - static_cast<double>(k) / (kShells - 1)) / kShellWidth;
      shell = std::max(shell, std::exp(-0.5 * d * d));
    }
    curve[i] = static_cast<float>(clear * clear * shell);
  }
  return curve;
}

std::array<float, 2> robust_range(const float* values, std::size_t n, float lo, float hi, double tail) {
  constexpr std::size_t kBins = 4096;
  if (!(hi > lo)) return {lo, hi};
  std::vector<std::size_t> count(kBins, 0);
  std::size_t total = 0;
  const double scale = kBins / (static_cast<double>(hi) - lo);
  for (std::size_t i = 0; i < n; ++i) {
    const float v = values[i];
    if (std::isnan(v)) continue;
    ++count[std::min(kBins - 1, static_cast<std::size_t>(std::max(0.0, (v - lo) * scale)))];
    ++total;
  }
  const auto skip = static_cast<std::size_t>(tail * static_cast<double>(total));
  std::size_t first = 0, last = kBins - 1;
  for (std::size_t seen = 0; first < kBins && seen + count[first] <= skip; ++first) seen += count[first];
  for (std::size_t seen = 0; last > first && seen + count[last] <= skip; --last) seen += count[last];
  if (first >= last) return {lo, hi};
  return {static_cast<float>(lo + first / scale), static_cast<float>(lo + (last + 1) / scale)};
}

int interactive_scale(double full_ms) {
  if (!(full_ms > 33.0)) return 1;
  return std::clamp(static_cast<int>(std::ceil(std::sqrt(full_ms / 30.0))), 2, 4);
}

std::array<float, 256> opacity_preset(const char* name, int depth) {
  auto o = opacity_preset_curve(name);
  for (auto& v : o) v *= full_opacity(depth);
  return o;
}

std::array<float, 256> opacity_preset_curve(const char* name) {
  std::array<float, 256> o{};
  const float top = kPresetTop;
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
