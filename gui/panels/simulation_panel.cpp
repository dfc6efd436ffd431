#include "panels/simulation_panel.hpp"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QPushButton>
#include <QVBoxLayout>

#include "panels/dock_scroll.hpp"

namespace cuview::gui {

SimulationPanel::SimulationPanel(QWidget* window) : QDockWidget("Simulation", window) {
  setObjectName("simulation");
  auto* box = new QWidget;
  auto* column = new QVBoxLayout(box);
  auto* buttons = new QHBoxLayout;
  pause_ = new QPushButton("Pause");
  auto* step = new QPushButton("Step");
  auto* reset = new QPushButton("Reset");
  buttons->addWidget(pause_);
  buttons->addWidget(step);
  buttons->addWidget(reset);
  column->addLayout(buttons);
  connect(pause_, &QPushButton::clicked, this, [this] {
    const bool pause = !paused_;
    Q_EMIT command_posted({pause ? "pause" : "resume", {}, [pause](cuview::Attachment& c) { pause ? c.pause() : c.resume(); }});
  });
  connect(step, &QPushButton::clicked, this, [this] {
    Q_EMIT command_posted({"step", {}, [](cuview::Attachment& c) { c.step(1); }});
  });
  connect(reset, &QPushButton::clicked, this, [this] {
    Q_EMIT command_posted({"reset", {}, [](cuview::Attachment& c) { c.reset(); }});
  });
  auto* preset_row = new QHBoxLayout;
  presets_ = new QComboBox;
  auto* apply = new QPushButton("Apply preset");
  preset_row->addWidget(presets_, 1);
  preset_row->addWidget(apply);
  column->addLayout(preset_row);
  connect(apply, &QPushButton::clicked, this, [this] {
    const std::string preset = presets_->currentText().toStdString();
    if (!preset.empty())
      Q_EMIT command_posted({"preset " + presets_->currentText(), {}, [preset](cuview::Attachment& c) { c.set({}, preset); }});
  });
  auto* draw_row = new QHBoxLayout;
  draw_ = new QPushButton("Draw obstacles");
  draw_->setObjectName("draw");
  draw_->setCheckable(true);
  draw_->setEnabled(false);
  draw_->setToolTip("left button draws, right button erases, middle button pans");
  brush_ = new QDoubleSpinBox;
  brush_->setObjectName("brush");
  brush_->setRange(0.5, 64);
  brush_->setValue(4);
  brush_->setPrefix("brush ");
  draw_row->addWidget(draw_, 1);
  draw_row->addWidget(brush_);
  column->addLayout(draw_row);
  connect(draw_, &QPushButton::toggled, this, &SimulationPanel::drawing_toggled);
  params_form_ = new QFormLayout;
  column->addLayout(params_form_);
  column->addStretch(1);
  set_scrolling_widget(this, box);
}

void SimulationPanel::stroke(double x, double y, int value) {
  if (draw_input_.isEmpty()) return;
  const Stroke s{draw_input_.toStdString(), x, y, brush_->value(), value};
  Q_EMIT command_posted({value ? "draw" : "erase", {}, [s](cuview::Attachment& c) { c.draw(s); }});
}

void SimulationPanel::stroke_ball(double x, double y, double z, int value) {
  if (draw_input_.isEmpty()) return;
  const Stroke s{draw_input_.toStdString(), x, y, brush_->value(), value, z};
  Q_EMIT command_posted({value ? "draw" : "erase", {}, [s](cuview::Attachment& c) { c.draw(s); }});
}

void SimulationPanel::set_parameter(const QString& name, double value) {
  const std::string key = name.toStdString();
  Q_EMIT command_posted({"set " + name, "set " + name, [key, value](cuview::Attachment& c) { c.set({{key, value}}); }});
}

void SimulationPanel::describe(const proto::DescribeResult& d) {
  while (params_form_->rowCount() > 0) params_form_->removeRow(0);
  params_.clear();
  for (const auto& p : d.params) {
    auto* box = new QDoubleSpinBox;
    box->setRange(p.min, p.max);
    box->setDecimals(p.integer ? 0 : 4);
    box->setSingleStep(p.integer ? 1 : (p.max - p.min) / 100);
    box->setValue(p.value);
    box->setKeyboardTracking(false);
    box->setToolTip(QString::fromStdString(p.help));
    const QString name = QString::fromStdString(p.name);
    box->setObjectName("param:" + name);
    connect(box, &QDoubleSpinBox::valueChanged, this, [this, name](double v) {
      if (auto* b = params_.value(name); b && !b->property("updating").toBool()) set_parameter(name, v);
    });
    params_form_->addRow(name, box);
    params_.insert(name, box);
  }
  presets_->clear();
  for (const auto& p : d.presets) presets_->addItem(QString::fromStdString(p.name));
  // Drawing: into the first input the simulation declares (a mask, or points to place).
  draw_input_.clear();
  for (const auto& in : d.inputs)
    if (in.kind == "mask" || in.kind == "points") {
      draw_input_ = QString::fromStdString(in.name);
      break;
    }
  draw_->setEnabled(!draw_input_.isEmpty());
  draw_->setText(draw_input_.isEmpty() ? "Draw" : "Draw " + draw_input_);
  draw_->setToolTip(draw_input_.isEmpty() ? "this simulation takes no drawing"
                                          : "left button draws, right button erases, middle button pans");
  if (draw_input_.isEmpty()) draw_->setChecked(false);
}

void SimulationPanel::show_stats(const proto::Stats& s) {
  paused_ = s.paused;
  pause_->setText(s.paused ? "Resume" : "Pause");
  // Show changes made by other viewers, but never fight the user's editing.
  for (const auto& [name, value] : s.params) {
    auto* box = params_.value(QString::fromStdString(name));
    if (box == nullptr || box->hasFocus() || box->value() == value) continue;
    box->setProperty("updating", true);
    box->setValue(value);
    box->setProperty("updating", false);
  }
}

}  // namespace cuview::gui
