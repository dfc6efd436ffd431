#include "panels/volume_panel.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

#include "panels/dock_scroll.hpp"

namespace cuview::gui {

namespace {
constexpr int kStrip = 12;  // the colormap's strip under the curve, pixels

std::array<float, 256> preset(const QString& name) {
  return opacity_preset_curve(name.toUtf8().constData());
}
}  // namespace

TransferFunctionEditor::TransferFunctionEditor(QWidget* parent) : QWidget(parent) {
  setObjectName("transfer_function");
  setToolTip("opacity over the colour range (low values left): drag with the left button to draw the curve");
  curve_ = preset("ramp");
}

void TransferFunctionEditor::set_curve(const std::array<float, 256>& curve) {
  curve_ = curve;
  update();
  Q_EMIT changed();
}

void TransferFunctionEditor::show_curve(const std::array<float, 256>& curve) {
  if (curve == curve_) return;
  curve_ = curve;
  update();
}

void TransferFunctionEditor::set_colormap(Colormap map) {
  lut_ = make_lut(map);
  update();
}

QRect TransferFunctionEditor::plot() const { return rect().adjusted(2, 2, -2, -kStrip - 4); }

int TransferFunctionEditor::entry_at(int x) const {
  const QRect r = plot();
  return std::clamp(static_cast<int>(std::lround(255.0 * (x - r.left()) / std::max(1, r.width() - 1))), 0, 255);
}

float TransferFunctionEditor::opacity_at(int y) const {
  const QRect r = plot();
  return std::clamp(static_cast<float>(r.bottom() - y) / std::max(1, r.height() - 1), 0.0f, 1.0f);
}

void TransferFunctionEditor::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), QColor(0x20, 0x20, 0x20));
  const QRect r = plot();
  for (int x = r.left(); x <= r.right(); ++x) {  // the colormap, and under the curve its colour dimmed
    const auto c = QColor::fromRgb(lut_[static_cast<std::size_t>(entry_at(x))]);
    p.setPen(c);
    p.drawLine(x, r.bottom() + 4, x, r.bottom() + 3 + kStrip);
    const int top = r.bottom() - static_cast<int>(std::lround(curve_[static_cast<std::size_t>(entry_at(x))] * (r.height() - 1)));
    p.setPen(c.darker(160));
    p.drawLine(x, top, x, r.bottom());
  }
  QPainterPath path;
  for (int i = 0; i < 256; ++i) {
    const QPointF at(r.left() + i * (r.width() - 1) / 255.0, r.bottom() - curve_[static_cast<std::size_t>(i)] * (r.height() - 1));
    i == 0 ? path.moveTo(at) : path.lineTo(at);
  }
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(QPen(Qt::white, 1.5));
  p.drawPath(path);
}

void TransferFunctionEditor::draw_to(QPoint pos) {
  // Every entry between the last point and this one, on the line through them.
  const QPoint from = last_.value_or(pos);
  const int a = entry_at(from.x()), b = entry_at(pos.x());
  const float oa = opacity_at(from.y()), ob = opacity_at(pos.y());
  for (int i = std::min(a, b); i <= std::max(a, b); ++i) {
    const float t = a == b ? 1.0f : static_cast<float>(i - a) / static_cast<float>(b - a);
    curve_[static_cast<std::size_t>(i)] = oa + (ob - oa) * t;
  }
  last_ = pos;
  update();
  Q_EMIT changed();
  Q_EMIT drawn();
}

void TransferFunctionEditor::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return;
  last_.reset();
  draw_to(e->pos());
}
void TransferFunctionEditor::mouseMoveEvent(QMouseEvent* e) {
  if (e->buttons() & Qt::LeftButton) draw_to(e->pos());
}
void TransferFunctionEditor::mouseReleaseEvent(QMouseEvent*) { last_.reset(); }

VolumePanel::VolumePanel(QWidget* window) : QDockWidget("Volume", window) {
  setObjectName("volume_dock");
  auto* body = new QWidget;
  form_ = new QFormLayout(body);
  mode_ = new QComboBox;
  mode_->setObjectName("volume_mode");
  mode_->addItem("planes", "planes");
  mode_->addItem("maximum intensity", "mip");
  mode_->addItem("emission–absorption", "emission");
  mode_->addItem("isosurface", "isosurface");
  mode_->setToolTip("planes of the volume, or the whole volume seen through: the largest value along each ray, "
                    "colour and opacity accumulated along it (the transfer function below), or the surface where the "
                    "field reaches a level. Mouse: left orbits, Shift+left or middle pans, right or wheel zooms");
  preset_ = new QComboBox;
  preset_->setObjectName("opacity_preset");
  for (const char* p : {"auto", "ramp", "peak", "flat"}) preset_->addItem(p);
  preset_->setToolTip("auto: the values most cells hold clear, rarer ones opaque, as shells at five evenly spaced "
                      "values (nested surfaces, not a fog), over the range most values lie in; "
                      "ramp: opacity rising with the value; peak: a band around the middle of the range; flat: the same "
                      "everywhere. Drawing the curve replaces the preset");
  editor_ = new TransferFunctionEditor;
  level_ = new QDoubleSpinBox;
  level_->setObjectName("iso_level");
  level_->setDecimals(4);
  level_->setRange(-1e12, 1e12);
  level_->setValue(0.5);
  level_->setKeyboardTracking(false);
  level_->setToolTip("the isosurface's level: the surface where the field crosses this value");
  brick_ = new QComboBox;
  brick_->setObjectName("brick");
  for (int n : {64, 96, 128, 192, 256}) brick_->addItem(QString("%1 cells").arg(n), n);
  brick_->setCurrentIndex(2);
  brick_->setToolTip("the longest axis of the brick rendered: a larger volume is taken every k-th cell (the status bar "
                     "says which); larger is sharper and slower");
  show_plane_ = new QCheckBox("outline the Display plane");
  show_plane_->setObjectName("show_plane");
  form_->addRow("Show", mode_);
  form_->addRow("Opacity", preset_);
  form_->addRow(editor_);
  form_->addRow("Level", level_);
  form_->addRow("Brick", brick_);
  form_->addRow("", show_plane_);
  set_scrolling_widget(this, body);
  connect(mode_, &QComboBox::currentIndexChanged, this, [this] {
    show_rows();
    Q_EMIT active_changed(active());
    Q_EMIT view_changed();
  });
  connect(preset_, &QComboBox::activated, this, [this] { set_preset(preset_->currentText()); });
  connect(editor_, &TransferFunctionEditor::changed, this, &VolumePanel::view_changed);
  connect(editor_, &TransferFunctionEditor::drawn, this, [this] {
    auto_opacity_ = false;  // a drawn curve is none of the presets
    preset_->setCurrentIndex(-1);
  });
  connect(level_, &QDoubleSpinBox::valueChanged, this, &VolumePanel::view_changed);
  connect(brick_, &QComboBox::currentIndexChanged, this, &VolumePanel::view_changed);
  connect(show_plane_, &QCheckBox::toggled, this, &VolumePanel::view_changed);
  show_rows();
  setEnabled(false);
}

void VolumePanel::show_rows() {
  const QString m = mode_->currentData().toString();
  form_->setRowVisible(preset_, m == "emission");
  form_->setRowVisible(editor_, m == "emission");
  form_->setRowVisible(level_, m == "isosurface");
  form_->setRowVisible(brick_, m != "planes");
  form_->setRowVisible(show_plane_, m != "planes");
}

void VolumePanel::describe(const proto::DescribeResult& d) {
  const bool was = active();
  three_axes_ = d.dims.size() == 3;
  setEnabled(three_axes_);
  setToolTip(three_axes_ ? QString() : "the grid of the field shown has no third axis: nothing to see as a volume");
  if (was != active()) Q_EMIT active_changed(active());
}

bool VolumePanel::active() const { return three_axes_ && mode_->currentData().toString() != "planes"; }

void VolumePanel::fill(ViewRequest& view, const VolumeCamera& camera, bool interacting) const {
  if (!active()) return;
  VolumeRequest v;
  const QString m = mode_->currentData().toString();
  v.mode = volume_mode_of(m.toStdString()).value_or(VolumeMode::mip);
  v.camera = camera;
  v.opacity = editor_->curve();
  v.auto_opacity = auto_opacity_;
  v.level = static_cast<float>(level_->value());
  v.max_brick = brick_->currentData().toInt();
  v.show_plane = show_plane_->isChecked();
  v.interacting = interacting;
  view.volume = v;
}

bool VolumePanel::set_mode(const QString& mode) {
  const int i = mode_->findData(mode);
  if (i < 0) return false;
  mode_->setCurrentIndex(i);
  return true;
}

void VolumePanel::set_level(double level) { level_->setValue(level); }

void VolumePanel::set_brick(int cells) {
  int i = brick_->findData(cells);
  if (i < 0) {
    brick_->addItem(QString("%1 cells").arg(cells), cells);
    i = brick_->count() - 1;
  }
  brick_->setCurrentIndex(i);
}

bool VolumePanel::set_preset(const QString& name) {
  const int i = preset_->findText(name);
  if (i < 0) return false;
  preset_->setCurrentIndex(i);
  auto_opacity_ = name == "auto";
  if (auto_opacity_)
    Q_EMIT view_changed();  // the next picture brings the curve
  else
    editor_->set_curve(preset(name));
  return true;
}

void VolumePanel::show_auto_curve(const std::array<float, 256>& curve) {
  if (auto_opacity_) editor_->show_curve(curve);
}

void VolumePanel::set_colormap(Colormap map) { editor_->set_colormap(map); }

}  // namespace cuview::gui
