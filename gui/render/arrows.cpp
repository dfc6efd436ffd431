#include "render/arrows.hpp"

#include <QPainter>
#include <algorithm>
#include <cmath>

namespace cuview::gui {

void draw_arrows(QImage& image, const SampledView& sampled, int across, int down) {
  // One arrow per kArrowSpacing pixels, at the vector of the cell under its centre; the longest
  // visible vector spans the spacing (arrows show direction and relative size, whatever the
  // colour range).
  constexpr int kArrowSpacing = 24;
  const auto& r = sampled.region;
  const int components = sampled.components;
  if (components < 2 || sampled.vectors.empty() || across >= components || down >= components) return;
  auto vector_at = [&](int px, int py) {
    return &sampled.vectors[(static_cast<std::size_t>(py) * r.view_w + px) * components];
  };
  double top = 0;
  for (int py = kArrowSpacing / 2; py < r.view_h; py += kArrowSpacing)
    for (int px = kArrowSpacing / 2; px < r.view_w; px += kArrowSpacing) {
      const float* v = vector_at(px, py);
      if (!std::isnan(v[0])) top = std::max(top, std::hypot(double(v[across]), double(v[down])));
    }
  if (top <= 0) return;
  QPainter p(&image);
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(QPen(QColor(255, 255, 255), 1.2));
  for (int py = kArrowSpacing / 2; py < r.view_h; py += kArrowSpacing)
    for (int px = kArrowSpacing / 2; px < r.view_w; px += kArrowSpacing) {
      const float* v = vector_at(px, py);
      if (std::isnan(v[0])) continue;
      const double mag = std::hypot(double(v[across]), double(v[down]));
      if (mag <= 0) continue;
      const double len = 0.9 * kArrowSpacing * mag / top;
      const double ux = v[across] / mag, uy = v[down] / mag;
      const QPointF c(px + 0.5, py + 0.5);  // the pixel's centre
      const QPointF tail = c - QPointF(0.5 * len * ux, 0.5 * len * uy),
                    tip = c + QPointF(0.5 * len * ux, 0.5 * len * uy);
      p.drawLine(tail, tip);
      const double h = std::min(5.0, 0.4 * len);
      p.drawLine(tip, tip - QPointF(h * (ux * 0.87 - uy * 0.5), h * (uy * 0.87 + ux * 0.5)));
      p.drawLine(tip, tip - QPointF(h * (ux * 0.87 + uy * 0.5), h * (uy * 0.87 - ux * 0.5)));
    }
}

}  // namespace cuview::gui
