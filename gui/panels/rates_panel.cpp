#include "panels/rates_panel.hpp"

#include <QDateTime>
#include <QFontMetrics>
#include <QPainter>
#include <algorithm>

namespace cuview::gui {

RatesPanel::RatesPanel(QWidget* window) : QDockWidget("Rates", window), plot_(new RatePlot) {
  setObjectName("rates");
  setWidget(plot_);
}

void RatesPanel::show_stats(const proto::Stats& stats, double latency_ms) {
  plot_->add(stats.steps_per_second, latency_ms);
}

RatePlot::RatePlot(QWidget* parent) : QWidget(parent) {}

namespace {
// The two series, their colours and the legend's worst case (for the minimum size).
const QColor kStepsColour(0x2a, 0x9d, 0x8f), kLatencyColour(0xe7, 0x6f, 0x51);
constexpr int kLegendMargin = 4;
QString steps_legend(double max) { return QString("steps/s ≤ %1").arg(max, 0, 'g', 3); }
QString latency_legend(double max) { return QString("latency ≤ %1 ms").arg(max, 0, 'g', 3); }
}  // namespace

std::pair<double, double> RatePlot::maxima() const {
  double max_steps = 1, max_lat = 1;
  for (const auto& s : samples_) max_steps = std::max(max_steps, s.steps), max_lat = std::max(max_lat, s.latency);
  return {max_steps, max_lat};
}

QStringList RatePlot::legend() const {
  const auto [max_steps, max_lat] = maxima();
  return {steps_legend(max_steps), latency_legend(max_lat)};
}

QSize RatePlot::minimumSizeHint() const {
  // Widest values the legend can show: 3 significant digits with an exponent.
  const QFontMetrics fm(font());
  const int swatch = fm.height();
  const int text =
      std::max(fm.horizontalAdvance(steps_legend(-1.23e+100)), fm.horizontalAdvance(latency_legend(-1.23e+100)));
  return {text + swatch + 3 * kLegendMargin, 2 * fm.lineSpacing() + 40};
}

QSize RatePlot::sizeHint() const { return minimumSizeHint().expandedTo({260, 110}); }

void RatePlot::add(double steps_per_s, double latency_ms) {
  const qint64 now = QDateTime::currentMSecsSinceEpoch();
  samples_.push_back({now, steps_per_s, latency_ms});
  while (!samples_.empty() && samples_.front().t_ms < now - 60'000) samples_.erase(samples_.begin());
  update();
}

void RatePlot::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Base));
  if (samples_.empty()) return;
  const qint64 now = samples_.back().t_ms;
  // Until a minute is filled, the plot spans the samples there are (at least 5 s).
  const double span = std::clamp(static_cast<double>(now - samples_.front().t_ms), 5'000.0, 60'000.0);
  const auto [max_steps, max_lat] = maxima();
  const QFontMetrics fm(font());
  const int top = 2 * fm.lineSpacing() + 2 * kLegendMargin;  // the curves stay below the legend
  auto draw = [&](QColor c, auto value, double max) {
    p.setPen(QPen(c, 1.5));
    QPointF prev;
    bool first = true;
    for (const auto& s : samples_) {
      const QPointF pt(width() * (1.0 - double(now - s.t_ms) / span),
                       height() - 4 - (height() - top - 4) * value(s) / max);
      if (!first) p.drawLine(prev, pt);
      prev = pt;
      first = false;
    }
  };
  draw(
      kStepsColour, [](const Sample& s) { return s.steps; }, max_steps);
  draw(
      kLatencyColour, [](const Sample& s) { return s.latency; }, max_lat);
  // One line per series, each after a swatch of its colour.
  const QStringList lines = legend();
  const QColor colours[] = {kStepsColour, kLatencyColour};
  for (int i = 0; i < 2; ++i) {
    const int y = kLegendMargin + i * fm.lineSpacing();
    const int swatch = fm.height() - 4;
    p.fillRect(kLegendMargin, y + 2, swatch, swatch, colours[i]);
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(2 * kLegendMargin + fm.height(), y, width(), fm.lineSpacing()), Qt::AlignLeft | Qt::AlignVCenter,
               lines[i]);
  }
}

}  // namespace cuview::gui
