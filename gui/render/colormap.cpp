#include "render/colormap.hpp"

#include <algorithm>
#include <cmath>

namespace cuview::gui {
namespace {
struct Rgb {
  double r, g, b;
};

Rgb poly(double t, const double (&c)[7][3]) {
  Rgb out{0, 0, 0};
  double* o[3] = {&out.r, &out.g, &out.b};
  for (int ch = 0; ch < 3; ++ch) {
    double v = c[6][ch];
    for (int i = 5; i >= 0; --i) v = c[i][ch] + t * v;
    *o[ch] = v;
  }
  return out;
}

constexpr double kViridis[7][3] = {{0.2777273272234177, 0.005407344544966578, 0.3340998053353061},
                                   {0.1050930431085774, 1.404613529898575, 1.384590162594685},
                                   {-0.3308618287255563, 0.214847559468213, 0.09509516302823659},
                                   {-4.634230498983486, -5.799100973351585, -19.33244095627987},
                                   {6.228269936347081, 14.17993336680509, 56.69055260068105},
                                   {4.776384997670288, -13.74514537774601, -65.35303263337234},
                                   {-5.435455855934631, 4.645852612178535, 26.3124352495832}};
constexpr double kMagma[7][3] = {{-0.002136485053939582, -0.000749655052795221, -0.005386127855323933},
                                 {0.2516605407371642, 0.6775232436837668, 2.494026599312351},
                                 {8.353717279216625, -3.577719514958484, 0.3144679030132573},
                                 {-27.66873308576866, 14.26473078096533, -13.64921318813922},
                                 {52.17613981234068, -27.94360607168351, 12.94416944238394},
                                 {-50.76852536473588, 29.04658282127291, 4.23415299384598},
                                 {18.65570506591883, -11.48977351997711, -5.601961508734096}};

Rgb diverging(double t) {
  const Rgb cold{0.230, 0.299, 0.754}, mid{0.865, 0.865, 0.865}, warm{0.706, 0.016, 0.150};
  const Rgb& a = t < 0.5 ? cold : mid;
  const Rgb& b = t < 0.5 ? mid : warm;
  const double s = t < 0.5 ? t * 2 : (t - 0.5) * 2;
  return {a.r + (b.r - a.r) * s, a.g + (b.g - a.g) * s, a.b + (b.b - a.b) * s};
}

std::uint32_t pack(Rgb c) {
  auto byte = [](double v) { return static_cast<std::uint32_t>(std::lround(std::clamp(v, 0.0, 1.0) * 255.0)); };
  return 0xff000000u | byte(c.r) << 16 | byte(c.g) << 8 | byte(c.b);
}
}  // namespace

Lut make_lut(Colormap map) {
  Lut lut{};
  for (int i = 0; i < 256; ++i) {
    const double t = i / 255.0;
    switch (map) {
      case Colormap::viridis:
        lut[i] = pack(poly(t, kViridis));
        break;
      case Colormap::magma:
        lut[i] = pack(poly(t, kMagma));
        break;
      case Colormap::grayscale:
        lut[i] = pack({t, t, t});
        break;
      case Colormap::diverging:
        lut[i] = pack(diverging(t));
        break;
    }
  }
  return lut;
}

std::optional<Colormap> parse_colormap(std::string_view name) {
  for (std::size_t i = 0; i < kColormapNames.size(); ++i)
    if (name == kColormapNames[i]) return static_cast<Colormap>(i);
  return std::nullopt;
}

}  // namespace cuview::gui
