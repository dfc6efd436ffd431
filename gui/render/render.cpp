#include "render/render.hpp"

namespace cuview::gui {

void colour_values(const float* values, std::size_t count, const std::uint32_t* lut, float lo, float hi,
                   std::uint32_t* rgba) {
  for (std::size_t i = 0; i < count; ++i)
    rgba[i] = std::isnan(values[i]) ? kBackground : colour_of(values[i], lut, lo, hi);
}

}  // namespace cuview::gui
