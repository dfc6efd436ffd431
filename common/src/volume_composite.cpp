#include "cuview/volume_composite.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "every_core.hpp"

namespace cuview {

std::array<double, 3> view_direction(double azimuth_deg, double elevation_deg) {
  constexpr double kPi = 3.14159265358979323846;
  const double a = azimuth_deg * kPi / 180, e = elevation_deg * kPi / 180;
  return {std::sin(a) * std::cos(e), -std::sin(e), std::cos(a) * std::cos(e)};
}

std::vector<std::size_t> front_to_back(const std::vector<std::array<double, 3>>& centres,
                                       const std::array<double, 3>& direction) {
  std::vector<std::size_t> order(centres.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto along = [&](std::size_t k) {
    return centres[k][0] * direction[0] + centres[k][1] * direction[1] + centres[k][2] * direction[2];
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return along(a) < along(b); });
  return order;
}

namespace {
void composite_range(VolumeMode mode, const std::vector<PartPicture>& parts, std::size_t begin, std::size_t end,
                     std::uint32_t* argb, float* values) {
  const auto channel = [](std::uint32_t c, int shift) { return static_cast<double>((c >> shift) & 0xffu) / 255.0; };
  for (std::size_t i = begin; i < end; ++i) {
    std::uint32_t colour = kVolumeMiss;
    float value = NAN;
    if (mode == VolumeMode::emission) {
      double rgb[3] = {0, 0, 0}, alpha = 0;
      bool seen = false;
      for (const auto& p : parts) {
        const float a = p.values[i];
        if (std::isnan(a)) continue;  // the ray missed this block
        seen = true;
        const double keep = 1 - alpha;
        for (int k = 0; k < 3; ++k) rgb[k] += keep * channel(p.argb[i], 16 - 8 * k);
        alpha += keep * a;
        if (alpha >= 0.995) break;
      }
      if (seen) {
        colour = volume_detail::argb(rgb[0], rgb[1], rgb[2]);
        value = static_cast<float>(alpha);
      }
    } else if (mode == VolumeMode::mip) {
      for (const auto& p : parts) {
        const float v = p.values[i];
        if (!std::isnan(v) && (std::isnan(value) || v > value)) value = v, colour = p.argb[i];
      }
    } else {
      for (const auto& p : parts)
        if (!std::isnan(p.values[i])) {
          value = p.values[i], colour = p.argb[i];
          break;
        }
    }
    argb[i] = colour;
    values[i] = value;
  }
}
}  // namespace

void composite_pictures(VolumeMode mode, const std::vector<PartPicture>& parts, std::size_t pixels,
                        std::uint32_t* argb, float* values) {
  // Pixels are independent: on every core, in runs of 64 Ki pixels (a 1280×720 picture of 4 parts
  // took 23 ms on one thread in emission: a limit near 30 pictures/s).
  constexpr std::size_t kRun = std::size_t{1} << 16;
  const auto runs = static_cast<int>((pixels + kRun - 1) / kRun);
  detail::on_every_core(detail::cores(16), runs, [&](int k) {
    const std::size_t begin = static_cast<std::size_t>(k) * kRun;
    composite_range(mode, parts, begin, std::min(pixels, begin + kRun), argb, values);
  });
}

}  // namespace cuview
