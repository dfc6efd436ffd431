// The Rates dock: steps per second and frame latency over the last minute, as a plot.
#pragma once

#include <QDockWidget>
#include <QStringList>
#include <QWidget>
#include <utility>
#include <vector>

#include "cuview/protocol.hpp"

namespace cuview::gui {

/// Steps per second and frame latency over the last minute.
class RatePlot : public QWidget {
  Q_OBJECT
 public:
  explicit RatePlot(QWidget* parent = nullptr);
  void add(double steps_per_s, double latency_ms);
  /// The legend's two lines as drawn now ("steps/s ≤ …", "latency ≤ … ms").
  [[nodiscard]] QStringList legend() const;
  [[nodiscard]] QSize sizeHint() const override;
  /// Wide and tall enough for the legend at its longest, so it is never cut off.
  [[nodiscard]] QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent*) override;

 private:
  struct Sample {
    qint64 t_ms;
    double steps, latency;
  };
  /// The largest steps/s and latency in the window (at least 1 each): the plot's scales.
  [[nodiscard]] std::pair<double, double> maxima() const;
  std::vector<Sample> samples_;
};

class RatesPanel : public QDockWidget {
  Q_OBJECT
 public:
  /// A dock of `window`, which places it.
  explicit RatesPanel(QWidget* window);
  /// Adds the daemon's rate from `stats` and the latency of the frame painted last.
  void show_stats(const proto::Stats& stats, double latency_ms);

 private:
  RatePlot* plot_ = nullptr;
};

}  // namespace cuview::gui
