#include "render/particles.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include "cuview/schema.hpp"

namespace cuview::gui {

std::vector<float> sample_particles(const Frame& frame, const proto::ParticleSetDesc& set,
                                    const proto::FieldDesc& position, const proto::FieldDesc* colour,
                                    const ViewRegion& region, double& half_extent) {
  const std::size_t n = set.count;
  // The attributes' values as they are (any dtype), read through load_value.
  const DType pt = parse_dtype(position.dtype).value_or(DType::float32);
  const DType ct = colour ? parse_dtype(colour->dtype).value_or(DType::float32) : DType::float32;
  const std::size_t pc = position.components, cc = colour ? colour->components : 1;
  const std::size_t pcell = pc * size_of(pt), ccell = cc * size_of(ct);
  std::vector<std::byte> xyz(n * pcell), c(colour ? n * ccell : 0);
  frame.copy_to_host(position.offset, xyz);
  if (colour) frame.copy_to_host(colour->offset, c);
  const auto coordinate = [&](std::size_t i, std::size_t k) { return load_value(&xyz[i * pcell + k * size_of(pt)], pt); };
  if (half_extent <= 0) {  // fit the bodies of the first frame, with a margin
    double half = 1e-6;
    for (std::size_t i = 0; i < n; ++i) half = std::max({half, std::abs(coordinate(i, 0)), std::abs(coordinate(i, 1))});
    half_extent = half * 1.05;
  }
  const auto& r = region;
  std::vector<float> values(static_cast<std::size_t>(r.view_w) * r.view_h, NAN);
  // Position → grid cell: the set's declared bounds (so points overlay its fields and strokes land
  // where drawn), else the fit above.
  const double m = std::min(r.field_w, r.field_h);
  double x0 = -half_extent * r.field_w / m, x1 = -x0, y0 = -half_extent * r.field_h / m, y1 = -y0;
  if (set.bounds.size() == 4) x0 = set.bounds[0], x1 = set.bounds[1], y0 = set.bounds[2], y1 = set.bounds[3];
  const double sx = r.field_w / (x1 - x0), sy = r.field_h / (y1 - y0);
  for (std::size_t i = 0; i < n; ++i) {
    const double gx = (coordinate(i, 0) - x0) * sx, gy = (coordinate(i, 1) - y0) * sy;
    const int px = static_cast<int>(std::floor((gx - r.center_x) * r.pixels_per_cell + r.view_w * 0.5));
    const int py = static_cast<int>(std::floor((gy - r.center_y) * r.pixels_per_cell + r.view_h * 0.5));
    if (px < 0 || py < 0 || px >= r.view_w || py >= r.view_h) continue;  // only what is visible is drawn
    values[static_cast<std::size_t>(py) * r.view_w + px] =
        colour ? shown_value(c.data() + i * ccell, ct, static_cast<int>(cc)) : 0.0f;
  }
  return values;
}

}  // namespace cuview::gui
