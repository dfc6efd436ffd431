// The Simulation dock: pause, step, reset, presets, drawing into the simulation's input, and one
// spin box per parameter, all generated from the daemon's description. What it asks of the daemon
// goes out as commands (worker/command_queue.hpp); a parameter's are merged by its name.
#pragma once

#include <QDockWidget>
#include <QMap>
#include <QString>

#include "cuview/protocol.hpp"
#include "worker/command_queue.hpp"

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QPushButton;

namespace cuview::gui {

class SimulationPanel : public QDockWidget {
  Q_OBJECT
 public:
  /// A dock of `window`, which places it.
  explicit SimulationPanel(QWidget* window);
  /// Parameters, presets and the drawing input of a newly described simulation.
  void describe(const proto::DescribeResult& description);
  /// Paused or running, and parameters changed by other viewers (never one the user is editing).
  void show_stats(const proto::Stats& stats);
  /// Sets a parameter, as its spin box does: a queued `set` of the same name is replaced.
  void set_parameter(const QString& name, double value);
  /// A drawing stroke at grid coordinates (x, y): value 1 draws, 0 erases.
  void stroke(double x, double y, int value);
  void stroke_ball(double x, double y, double z, int value);

 Q_SIGNALS:
  void command_posted(const cuview::gui::Command& command);
  /// The drawing tool was switched on or off.
  void drawing_toggled(bool on);

 private:
  QPushButton* pause_ = nullptr;
  QComboBox* presets_ = nullptr;
  QPushButton* draw_ = nullptr;  // drawing mode, enabled when the simulation has an input
  QDoubleSpinBox* brush_ = nullptr;
  QFormLayout* params_form_ = nullptr;
  QMap<QString, QDoubleSpinBox*> params_;
  QString draw_input_;
  bool paused_ = false;
};

}  // namespace cuview::gui
