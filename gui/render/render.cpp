#include "render/render.hpp"

namespace cuview::gui {

ViewSampling ViewSampling::of(const ViewTransform& t) {
  ViewSampling s;
  s.rows.resize(static_cast<std::size_t>(t.view_h));
  s.cols.resize(static_cast<std::size_t>(t.view_w));
  for (int py = 0; py < t.view_h; ++py) {
    const int r = s.rows[static_cast<std::size_t>(py)] = t.row_at(py);
    if (r >= 0 && (s.distinct_rows.empty() || s.distinct_rows.back() != r)) s.distinct_rows.push_back(r);
  }
  int lo = t.field_w, hi = -1;
  for (int px = 0; px < t.view_w; ++px) {
    const int c = s.cols[static_cast<std::size_t>(px)] = t.col_at(px);
    if (c >= 0) lo = c < lo ? c : lo, hi = c > hi ? c : hi;
  }
  if (hi >= lo) s.col_lo = lo, s.col_count = hi - lo + 1;
  return s;
}

void render_rows(const std::vector<const float*>& row_data, const ViewSampling& s, const ViewTransform& t,
                 const std::uint32_t* lut, std::uint32_t* rgba, float* values, float* vectors) {
  for (int py = 0; py < t.view_h; ++py) {
    const float* row = row_data[static_cast<std::size_t>(py)];
    std::uint32_t* out = rgba + static_cast<std::size_t>(py) * t.view_w;
    float* val = values + static_cast<std::size_t>(py) * t.view_w;
    for (int px = 0; px < t.view_w; ++px) {
      const int c = s.cols[static_cast<std::size_t>(px)];
      float* vec = vectors ? vectors + 2 * (static_cast<std::size_t>(py) * t.view_w + px) : nullptr;
      if (row == nullptr || c < 0) {
        out[px] = kBackground;
        val[px] = NAN;
        if (vec) vec[0] = vec[1] = NAN;
        continue;
      }
      const float* cell = row + static_cast<std::size_t>(c - s.col_lo) * t.components;
      const float v = shown_value(cell, t.components);
      if (vec) vec[0] = cell[0], vec[1] = t.components > 1 ? cell[1] : 0.0f;
      val[px] = v;
      out[px] = colour_of(v, lut, t.lo, t.hi);
    }
  }
}

void render_cpu(const float* field, const std::uint32_t* lut, const ViewTransform& t, std::uint32_t* rgba,
                float* values, float* vectors) {
  const auto s = ViewSampling::of(t);
  std::vector<const float*> rows(s.rows.size());
  for (std::size_t py = 0; py < rows.size(); ++py)
    rows[py] =
        s.rows[py] < 0 ? nullptr : field + (static_cast<std::size_t>(s.rows[py]) * t.field_w + s.col_lo) * t.components;
  render_rows(rows, s, t, lut, rgba, values, vectors);
}

}  // namespace cuview::gui
