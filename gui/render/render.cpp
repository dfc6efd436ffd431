#include "render/render.hpp"

namespace cuview::gui {

void render_cpu(const float* field, const std::uint32_t* lut, const ViewTransform& t, std::uint32_t* rgba,
                float* values) {
  for (int y = 0; y < t.view_h; ++y) {
    for (int x = 0; x < t.view_w; ++x) {
      const std::size_t i = static_cast<std::size_t>(y) * t.view_w + x;
      render_pixel(field, lut, t, x, y, rgba[i], values[i]);
    }
  }
}

}  // namespace cuview::gui
