#include "panels/display_panel.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QStandardItemModel>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSettings>
#include <algorithm>

#include "cuview/assembly.hpp"
#include "panels/dock_scroll.hpp"
#include "render/point_views.hpp"

namespace cuview::gui {

namespace {
const QString kRemoteOverlays =
    "not available remotely: a gateway sends one value per pixel of a field, no vectors or particles";

/// Greys out the particle views (the entries from `first` on) of a remote simulation's field list.
void disable_point_views(QComboBox* fields, int first) {
  auto* model = qobject_cast<QStandardItemModel*>(fields->model());
  if (model == nullptr) return;
  for (int i = first; i < fields->count(); ++i) {
    model->item(i)->setEnabled(false);
    model->item(i)->setToolTip(kRemoteOverlays);
  }
}

/// A heading of the field list: the grid the fields below it lie on (not a view: no data).
void add_heading(QComboBox* fields, const proto::GridDesc& g) {
  QString label = QString::fromStdString(g.name + " · " + Extent{g.dims}.text()).replace('x', QChar(0xd7));
  if (!g.units.empty()) label += QString::fromStdString(" (" + g.units + ")");
  fields->addItem(label);
  if (auto* model = qobject_cast<QStandardItemModel*>(fields->model())) {
    auto* item = model->item(fields->count() - 1);
    item->setFlags(Qt::NoItemFlags);
    auto font = item->font();
    font.setBold(true);
    item->setFont(font);
  }
}

QString name_of(Colormap map) {
  const auto name = kColormapNames[static_cast<std::size_t>(map)];
  return QString::fromLatin1(name.data(), static_cast<int>(name.size()));
}

Colormap colormap_from(const QString& name, Colormap fallback) {
  return parse_colormap(name.toStdString()).value_or(fallback);
}

/// The entry of the field list that `name` picks (find_view: a field, or a particle view).
int find_field(const QComboBox* fields, const QString& name) {
  QStringList labels;  // headings are no view's name
  for (int i = 0; i < fields->count(); ++i) labels << (fields->itemData(i).isValid() ? fields->itemText(i) : QString());
  return find_view(labels, name);
}

/// The first entry that is a view (not a heading); -1: none.
int first_view(const QComboBox* fields) {
  for (int i = 0; i < fields->count(); ++i)
    if (fields->itemData(i).isValid()) return i;
  return -1;
}
}  // namespace

DisplayPanel::DisplayPanel(QWidget* window) : QDockWidget("Display", window) {
  setObjectName("display");
  field_ = new QComboBox;
  field_->setObjectName("field");
  colormap_ = new QComboBox;
  colormap_->setObjectName("colormap");
  for (std::size_t i = 0; i < kColormapNames.size(); ++i) colormap_->addItem(name_of(static_cast<Colormap>(i)));
  range_mode_ = new QComboBox;
  range_mode_->setObjectName("range_mode");
  range_mode_->addItems({"auto", "fixed"});
  range_lo_ = new QDoubleSpinBox;
  range_hi_ = new QDoubleSpinBox;
  for (auto* s : {range_lo_, range_hi_}) {
    s->setRange(-1e6, 1e6);
    s->setDecimals(4);
    s->setSingleStep(0.05);
    s->setKeyboardTracking(false);
    s->setEnabled(false);  // the range is automatic until the user fixes it
  }
  auto* reset_view = new QPushButton("Reset zoom");
  arrows_ = new QCheckBox("arrows (vector fields)");
  arrows_->setObjectName("arrows");
  slice_axis_ = new QComboBox;
  slice_axis_->setObjectName("slice_axis");
  for (auto axis : {SliceAxis::z, SliceAxis::y, SliceAxis::x}) slice_axis_->addItem(to_string(axis));  // in SliceAxis's order
  slice_axis_->setToolTip("the axis across the plane shown");
  slice_ = new QSlider(Qt::Horizontal);
  slice_->setObjectName("slice");
  slice_->setToolTip("the plane's position (Page Up/Down, or Shift + wheel over the view)");
  slice_label_ = new QLabel;
  slice_label_->setObjectName("slice_label");
  three_planes_ = new QCheckBox("three planes (x, y, z)");
  three_planes_->setObjectName("three_planes");
  three_planes_->setToolTip("the planes across z, x and y through one cell, side by side; Shift + wheel over one "
                            "moves it, the slider moves the plane across the axis chosen");
  auto* box = new QWidget;
  auto* form = form_ = new QFormLayout(box);
  form->addRow("Field", field_);
  form->addRow("", arrows_);
  form->addRow("Plane across", slice_axis_);
  form->addRow(slice_label_, slice_);
  form->addRow("", three_planes_);
  form->setRowVisible(slice_axis_, false);
  form->setRowVisible(slice_, false);
  form->setRowVisible(three_planes_, false);
  form->addRow("Colormap", colormap_);
  form->addRow("Range", range_mode_);
  form->addRow("Min", range_lo_);
  form->addRow("Max", range_hi_);
  form->addRow(reset_view);
  connect(field_, &QComboBox::currentIndexChanged, this, [this] {
    if (field_->currentIndex() >= 0) field_name_ = field_->currentText();
    show_colormap_of_field();
    Q_EMIT field_chosen();
    Q_EMIT view_changed();
  });
  // activated: only what the user picks is a choice (the list also follows the field shown).
  connect(colormap_, &QComboBox::activated, this, [this](int index) { choose_colormap(static_cast<Colormap>(index)); });
  connect(colormap_, &QComboBox::currentIndexChanged, this, &DisplayPanel::view_changed);
  connect(arrows_, &QCheckBox::toggled, this, &DisplayPanel::view_changed);
  connect(range_mode_, &QComboBox::currentIndexChanged, this, [this](int mode) {
    range_lo_->setEnabled(mode != 0);
    range_hi_->setEnabled(mode != 0);
    Q_EMIT view_changed();
  });
  connect(range_lo_, &QDoubleSpinBox::valueChanged, this, &DisplayPanel::view_changed);
  connect(range_hi_, &QDoubleSpinBox::valueChanged, this, &DisplayPanel::view_changed);
  connect(reset_view, &QPushButton::clicked, this, &DisplayPanel::reset_zoom);
  connect(slice_axis_, &QComboBox::currentIndexChanged, this, [this] {
    show_slice_axis();
    Q_EMIT reset_zoom();  // another plane has another shape: fit it
    Q_EMIT view_changed();
  });
  connect(slice_, &QSlider::valueChanged, this, [this](int value) {
    index_[static_cast<std::size_t>(slice().axis)] = value;
    show_slice_axis();
    Q_EMIT view_changed();
  });
  connect(three_planes_, &QCheckBox::toggled, this, [this] {
    show_arrows_state();
    Q_EMIT reset_zoom();  // another picture: fit it
    Q_EMIT view_changed();
  });
  set_scrolling_widget(this, box);
}

Slice DisplayPanel::slice() const {
  return {static_cast<SliceAxis>(std::clamp(slice_axis_->currentIndex(), 0, 2)),
          static_cast<std::uint32_t>(std::max(0, slice_->value()))};
}

void DisplayPanel::show_slice_axis() {
  if (dims_.size() != 3) return;
  const auto a = static_cast<std::size_t>(slice().axis);
  {
    const QSignalBlocker quiet(slice_);
    slice_->setRange(0, static_cast<int>(dims_[a]) - 1);
    slice_->setValue(index_[a]);  // each axis keeps its own plane
  }
  slice_label_->setText(QString("%1 = %2").arg(slice_axis_->currentText()).arg(slice_->value()));
}

void DisplayPanel::set_slice(const QString& axis, int index) {
  const int i = slice_axis_->findText(axis);
  if (i >= 0) slice_axis_->setCurrentIndex(i);
  wanted_slice_ = index;  // a volume not described yet takes it then
  if (dims_.size() == 3) {
    const auto a = static_cast<std::size_t>(slice().axis);
    index_[a] = std::clamp(index, 0, static_cast<int>(dims_[a]) - 1);
  }
  show_slice_axis();
}

void DisplayPanel::move_slice(int delta) {
  if (dims_.size() == 3) slice_->setValue(slice_->value() + delta);
}

void DisplayPanel::move_plane(int axis, int delta) {
  if (dims_.size() != 3 || axis < 0 || axis > 2) return;
  if (axis == slice_axis_->currentIndex()) return move_slice(delta);
  const auto a = static_cast<std::size_t>(axis);
  index_[a] = std::clamp(index_[a] + delta, 0, static_cast<int>(dims_[a]) - 1);
  Q_EMIT view_changed();
}

void DisplayPanel::set_three_planes(bool on) { three_planes_->setChecked(on); }

void DisplayPanel::restore(const QSettings& settings) {
  preferred_ = colormap_from(settings.value("view/colormap").toString(), Colormap::viridis);
  range_mode_->setCurrentIndex(settings.value("view/range_mode", 0).toInt());
  range_lo_->setValue(settings.value("view/range_lo", 0.0).toDouble());
  range_hi_->setValue(settings.value("view/range_hi", 1.0).toDouble());
}

void DisplayPanel::save(QSettings& settings) const {
  // The colormap chosen last, not the diverging one a signed field showed by itself.
  settings.setValue("view/colormap", name_of(preferred_));
  settings.setValue("view/range_mode", range_mode_->currentIndex());
  settings.setValue("view/range_lo", range_lo_->value());
  settings.setValue("view/range_hi", range_hi_->value());
}

void DisplayPanel::start_with(const QString& colormap, const QString& field) {
  forced_colormap_ = colormap;
  if (!colormap.isEmpty()) preferred_ = colormap_from(colormap, Colormap::viridis);
  if (!field.isEmpty()) field_name_ = field;
  show_colormap_of_field();
}

void DisplayPanel::set_remote(bool remote) {
  remote_ = remote;
  if (remote) arrows_->setChecked(false);
  show_arrows_state();
}

void DisplayPanel::show_arrows_state() {
  // Arrows lie in one plane: three planes side by side have none (the choice is kept for later).
  const bool three = dims_.size() == 3 && three_planes_->isChecked();
  arrows_->setEnabled(!remote_ && !three);
  arrows_->setToolTip(remote_ ? kRemoteOverlays
                      : three ? QString("arrows are drawn over one plane at a time: untick three planes")
                              : QString("vector fields: arrows over the magnitude"));
}

void DisplayPanel::describe(const proto::DescribeResult& d) {
  // Whether a field is signed is learnt again for another simulation (a restarted one keeps it).
  if (const QString sim = QString::fromStdString(d.sim); sim != sim_) {
    signed_.clear();
    sim_ = sim;
  }
  // Keep the selected field by name; say so if it no longer exists.
  const QString wanted = field_name_;
  field_->blockSignals(true);
  field_->clear();
  // Each entry's data is its view's index (fields, then particle views); a run of several grids
  // lists its fields under a heading per grid, its first grid's first.
  const std::size_t groups = std::max<std::size_t>(d.grids.size(), 1);
  for (std::size_t g = 0; g < groups; ++g) {
    if (groups > 1) add_heading(field_, d.grids[g]);
    for (std::size_t i = 0; i < d.fields.size(); ++i) {
      const auto& f = d.fields[i];
      const auto on = std::find_if(d.grids.begin(), d.grids.end(), [&](const auto& x) { return x.name == f.grid; });
      const std::size_t group = on == d.grids.end() ? 0 : static_cast<std::size_t>(on - d.grids.begin());
      if (group != g) continue;
      field_->addItem(QString::fromStdString(f.name), static_cast<int>(i));
      if (groups > 1)
        field_->setItemData(field_->count() - 1, QString::fromStdString("on grid '" + d.grid_of(f).name + "'"),
                            Qt::ToolTipRole);
    }
  }
  const int first_point_view = field_->count();
  int view = static_cast<int>(d.fields.size());
  for (const auto& v : point_views(d)) field_->addItem(v.label, view++);
  if (remote_) disable_point_views(field_, first_point_view);
  const int index = find_field(field_, wanted);
  if (index < 0 && !wanted.isEmpty() && first_view(field_) >= 0)
    Q_EMIT error(QString("field '%1' does not exist in this simulation; showing '%2'")
                     .arg(wanted, field_->itemText(first_view(field_))));
  field_->setCurrentIndex(index >= 0 ? index : first_view(field_));
  field_name_ = field_->currentText();
  field_->blockSignals(false);
  show_colormap_of_field();  // the grid of the field shown: MainWindow::show_field_grid, after this
}

void DisplayPanel::show_grid(const std::vector<std::uint32_t>& dims) {
  // A volume: which plane. Its slider keeps its place while the volume keeps its size.
  if (dims != dims_) {
    dims_ = dims;
    // A new volume opens at its middle (or the plane asked for), on every axis.
    for (std::size_t a = 0; a < dims_.size() && a < 3; ++a) index_[a] = static_cast<int>(dims_[a]) / 2;
    if (dims_.size() == 3 && wanted_slice_ >= 0) {
      const auto a = static_cast<std::size_t>(slice().axis);
      index_[a] = std::min(wanted_slice_, static_cast<int>(dims_[a]) - 1);
    }
    show_slice_axis();
  }
  form_->setRowVisible(slice_axis_, dims_.size() == 3);
  form_->setRowVisible(slice_, dims_.size() == 3);
  form_->setRowVisible(three_planes_, dims_.size() == 3);
  show_arrows_state();
}

void DisplayPanel::fill(ViewRequest& v) const {
  v.field = std::max(0, field_index());
  v.colormap = colormap();
  v.auto_range = range_mode_->currentIndex() == 0;
  v.lo = static_cast<float>(range_lo_->value());
  v.hi = static_cast<float>(range_hi_->value());
  v.arrows = arrows_->isChecked();
  v.slice = slice();
  v.three_planes = dims_.size() == 3 && three_planes_->isChecked();
  for (std::size_t k = 0; k < 3; ++k) v.through[k] = static_cast<std::uint32_t>(std::max(0, index_[2 - k]));  // {x, y, z}
}

int DisplayPanel::field_index() const {
  const auto data = field_->currentData();
  return data.isValid() ? data.toInt() : -1;
}

Colormap DisplayPanel::colormap() const { return static_cast<Colormap>(std::max(0, colormap_->currentIndex())); }

void DisplayPanel::set_colormap(Colormap map) {
  colormap_->setCurrentIndex(static_cast<int>(map));
  choose_colormap(map);
}

void DisplayPanel::choose_colormap(Colormap map) {
  if (!field_name_.isEmpty()) chosen_.insert(field_name_, map);
  // A map picked for a signed field is that field's; one picked for any other is the new default.
  if (!signed_.value(field_name_, false)) preferred_ = map;
}

void DisplayPanel::show_colormap_of_field() {
  Colormap map = preferred_;
  if (const auto it = chosen_.constFind(field_name_); it != chosen_.constEnd())
    map = *it;
  else if (forced_colormap_.isEmpty() && signed_.value(field_name_, false))
    map = Colormap::diverging;
  const QSignalBlocker quiet(colormap_);  // the caller asks for the view
  colormap_->setCurrentIndex(static_cast<int>(map));
}

bool DisplayPanel::learn_sign(const RenderedFrame& f) {
  // Only a frame of the field shown now, and one that says something: a field that is 0
  // everywhere (a flow at rest) is neither signed nor not yet.
  if (f.field != field_index() || signed_.contains(field_name_) || !(f.data_lo < f.data_hi)) return false;
  signed_.insert(field_name_, f.data_lo < 0 && f.data_hi > 0);
  const int before = colormap_->currentIndex();
  show_colormap_of_field();
  if (colormap_->currentIndex() == before) return false;
  Q_EMIT view_changed();
  return true;
}

void DisplayPanel::set_fixed_range(float lo, float hi) {
  range_mode_->setCurrentIndex(1);
  range_lo_->setValue(lo);
  range_hi_->setValue(hi);
}

void DisplayPanel::set_field(const QString& name) {
  field_name_ = name;
  if (const int i = find_field(field_, name); i >= 0) field_->setCurrentIndex(i);
}

}  // namespace cuview::gui
