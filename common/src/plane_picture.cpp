#include "cuview/plane_picture.hpp"

#include <cstddef>

#include "cuview/schema.hpp"

namespace cuview {

// plane_detail::component reads DType by its integer.
static_assert(static_cast<int>(DType::float32) == 0 && static_cast<int>(DType::float16) == 1 &&
              static_cast<int>(DType::int32) == 2 && static_cast<int>(DType::uint8) == 3 &&
              static_cast<int>(DType::float64) == 4 && static_cast<int>(DType::int64) == 5 &&
              static_cast<int>(DType::bfloat16) == 6);

void cast_plane(const PlaneCells& cells, const std::uint32_t* lut, float lo, float hi, int width, int height,
                std::uint32_t* argb, float* values) {
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const std::size_t at = static_cast<std::size_t>(y) * width + x;
      values[at] = plane_value(cells, x, y);
      argb[at] = plane_colour(values[at], lut, lo, hi);
    }
}

}  // namespace cuview
