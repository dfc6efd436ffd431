#include "main_window.hpp"

#include <QAbstractItemView>
#include <QAction>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QIcon>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QPushButton>
#include <QScreen>
#include <QSet>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>
#include <QVBoxLayout>
#include <QWindow>
#include <cstdio>

#include "cuview/posix.hpp"

// Resources compiled into a static library need an explicit reference, or the linker drops them.
static void init_resources() { Q_INIT_RESOURCE(cuview); }

namespace cuview::gui {

namespace {
QtMessageHandler g_default_handler = nullptr;
void filter_messages(QtMsgType type, const QMessageLogContext& context, const QString& message) {
  if (message.contains("does not support propagateSizeHints")) return;
  g_default_handler(type, context, message);
}

const QString kDetachedHint =
    "Detached. Pick a running daemon in the Daemons list and click Attach (or double-click it).";

/// The entry of the field list that `name` picks (find_view: a field, or a particle view).
int find_field(const QComboBox* fields, const QString& name) {
  QStringList labels;
  for (int i = 0; i < fields->count(); ++i) labels << fields->itemText(i);
  return find_view(labels, name);
}

/// Status bar labels are never narrower than their text: the window's minimum width grows instead.
void show_status(QLabel* label, const QString& text) {
  label->setText(text);
  label->setMinimumWidth(label->fontMetrics().horizontalAdvance(text) + 2 * label->margin());
}

Colormap colormap_from(const QString& name, Colormap fallback) {
  for (std::size_t i = 0; i < kColormapNames.size(); ++i)
    if (name == QString::fromLatin1(kColormapNames[i].data(), static_cast<int>(kColormapNames[i].size())))
      return static_cast<Colormap>(i);
  return fallback;
}
}  // namespace

void quiet_platform_noise() { g_default_handler = qInstallMessageHandler(filter_messages); }

QIcon application_icon() {
  init_resources();
  QIcon icon;
  for (int size : {16, 24, 32, 48, 64, 128, 256}) icon.addFile(QString(":/cuview/icons/cuview-%1.png").arg(size));
  return icon;
}

MainWindow::MainWindow(const ViewerOptions& options, QWidget* parent) : QMainWindow(parent), opts_(options) {
  setWindowTitle("cuview");
  setWindowIcon(application_icon());
  build_ui();
  if (opts_.headless()) {
    resize(kDefaultWindowSize);  // the defaults of the widgets built above, and these options
  } else {
    QSettings settings;
    if (!restoreGeometry(settings.value("window/geometry").toByteArray())) resize(kDefaultWindowSize);
    preferred_ = colormap_from(settings.value("view/colormap").toString(), Colormap::viridis);
    range_mode_->setCurrentIndex(settings.value("view/range_mode", 0).toInt());
    range_lo_->setValue(settings.value("view/range_lo", 0.0).toDouble());
    range_hi_->setValue(settings.value("view/range_hi", 1.0).toDouble());
  }
  if (!opts_.colormap.isEmpty()) preferred_ = colormap_from(opts_.colormap, Colormap::viridis);
  if (!opts_.field.isEmpty()) field_name_ = opts_.field;
  show_colormap_of_field();

  connect(&worker_, &ViewerWorker::frame_ready, this, &MainWindow::on_frame);
  connect(&worker_, &ViewerWorker::connection_changed, this, &MainWindow::on_connection);
  connect(&worker_, &ViewerWorker::described, this, &MainWindow::on_described);
  connect(&worker_, &ViewerWorker::stats_updated, this, &MainWindow::on_stats);
  connect(&worker_, &ViewerWorker::error, this, &MainWindow::on_error);
  connect(&worker_, &ViewerWorker::daemons_listed, this, &MainWindow::on_daemons_listed);
  connect(view_, &FieldView::view_changed, this, &MainWindow::push_view);
  // Queued: on_painted may grab the view for a screenshot, which must not happen inside paintEvent.
  connect(view_, &FieldView::painted, this, &MainWindow::on_painted, Qt::QueuedConnection);
  connect(view_, &FieldView::hovered, readout_label_, &QLabel::setText);
  fps_clock_.start();
  headless_clock_.start();
  worker_.start();
  push_view();
  if (!opts_.name.isEmpty())
    attach_to(opts_.name);
  else
    view_->set_message(kDetachedHint);
  if (opts_.headless()) {
    auto* watchdog = new QTimer(this);
    connect(watchdog, &QTimer::timeout, this, [this] {
      if (!headless_done_ && headless_clock_.elapsed() > opts_.timeout_s * 1000LL)
        fail_headless(QString("no %1 frame(s) from daemon '%2' within %3 s (%4)")
                          .arg(opts_.frames)
                          .arg(opts_.name)
                          .arg(opts_.timeout_s)
                          .arg(connection_detail_));
    });
    watchdog->start(200);
  }
}

MainWindow::~MainWindow() { save_settings(); }

void MainWindow::build_ui() {
  view_ = new FieldView;
  colorbar_ = new ColorBar;
  auto* central = new QWidget;
  auto* row = new QHBoxLayout(central);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(view_, 1);
  row->addWidget(colorbar_);
  setCentralWidget(central);

  // Daemons
  auto* daemons_box = new QWidget;
  auto* dl = new QVBoxLayout(daemons_box);
  daemons_ = new QListWidget;
  daemons_->setObjectName("daemons");
  // Entries wrap to the dock's width (long ones are elided, the whole text is the tooltip):
  // never a horizontal scroll bar hiding a daemon's state.
  daemons_->setWordWrap(true);
  daemons_->setTextElideMode(Qt::ElideRight);
  daemons_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  daemons_->setResizeMode(QListView::Adjust);
  daemons_->setSpacing(2);
  dl->addWidget(daemons_);
  auto* attach = new QPushButton("Attach");
  attach->setObjectName("attach");
  attach->setToolTip("Attach to the selected daemon (or the only one running)");
  auto* detach_btn = new QPushButton("Detach");
  detach_btn->setObjectName("detach");
  detach_btn->setToolTip("Stop reading frames; the simulation goes on");
  auto* brow = new QHBoxLayout;
  brow->addWidget(attach);
  brow->addWidget(detach_btn);
  dl->addLayout(brow);
  connect(attach, &QPushButton::clicked, this, &MainWindow::attach_selected);
  daemons_->setSelectionMode(QAbstractItemView::SingleSelection);
  connect(daemons_, &QListWidget::itemDoubleClicked, this,
          [this](QListWidgetItem* item) { attach_to(item->data(Qt::UserRole).toString()); });
  connect(detach_btn, &QPushButton::clicked, this, &MainWindow::detach);
  auto* dock = new QDockWidget("Daemons", this);
  dock->setObjectName("daemons");
  dock->setWidget(daemons_box);
  addDockWidget(Qt::LeftDockWidgetArea, dock);

  // Display
  auto* display = new QWidget;
  auto* df = new QFormLayout(display);
  field_ = new QComboBox;
  field_->setObjectName("field");
  colormap_ = new QComboBox;
  colormap_->setObjectName("colormap");
  for (auto n : kColormapNames) colormap_->addItem(QString::fromLatin1(n.data(), static_cast<int>(n.size())));
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
  }
  auto* reset_view = new QPushButton("Reset zoom");
  arrows_ = new QCheckBox("arrows (vector fields)");
  arrows_->setObjectName("arrows");
  df->addRow("Field", field_);
  df->addRow("", arrows_);
  df->addRow("Colormap", colormap_);
  df->addRow("Range", range_mode_);
  df->addRow("Min", range_lo_);
  df->addRow("Max", range_hi_);
  df->addRow(reset_view);
  connect(field_, &QComboBox::currentIndexChanged, this, [this] {
    if (field_->currentIndex() >= 0) field_name_ = field_->currentText();
    show_colormap_of_field();
    push_view();
  });
  // activated: only what the user picks is a choice (the list also follows the field shown).
  connect(colormap_, &QComboBox::activated, this, [this](int index) { choose_colormap(static_cast<Colormap>(index)); });
  connect(colormap_, &QComboBox::currentIndexChanged, this, &MainWindow::push_view);
  connect(arrows_, &QCheckBox::toggled, this, &MainWindow::push_view);
  connect(range_mode_, &QComboBox::currentIndexChanged, this, &MainWindow::push_view);
  connect(range_lo_, &QDoubleSpinBox::valueChanged, this, &MainWindow::push_view);
  connect(range_hi_, &QDoubleSpinBox::valueChanged, this, &MainWindow::push_view);
  connect(reset_view, &QPushButton::clicked, view_, &FieldView::reset_view);
  dock = new QDockWidget("Display", this);
  dock->setObjectName("display");
  dock->setWidget(display);
  addDockWidget(Qt::RightDockWidgetArea, dock);

  // Simulation
  params_box_ = new QWidget;
  auto* sl = new QVBoxLayout(params_box_);
  auto* buttons = new QHBoxLayout;
  pause_ = new QPushButton("Pause");
  auto* step = new QPushButton("Step");
  auto* reset = new QPushButton("Reset");
  buttons->addWidget(pause_);
  buttons->addWidget(step);
  buttons->addWidget(reset);
  sl->addLayout(buttons);
  connect(pause_, &QPushButton::clicked, this, [this] {
    const bool pause = !paused_;
    worker_.post(pause ? "pause" : "resume", [pause](Client& c) { pause ? c.pause() : c.resume(); });
  });
  connect(step, &QPushButton::clicked, this, [this] { worker_.post("step", [](Client& c) { c.step(1); }); });
  connect(reset, &QPushButton::clicked, this, [this] { worker_.post("reset", [](Client& c) { c.reset(); }); });
  auto* preset_row = new QHBoxLayout;
  presets_ = new QComboBox;
  auto* apply = new QPushButton("Apply preset");
  preset_row->addWidget(presets_, 1);
  preset_row->addWidget(apply);
  sl->addLayout(preset_row);
  connect(apply, &QPushButton::clicked, this, [this] {
    const std::string preset = presets_->currentText().toStdString();
    if (!preset.empty()) worker_.post("preset " + presets_->currentText(), [preset](Client& c) { c.set({}, preset); });
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
  sl->addLayout(draw_row);
  connect(draw_, &QPushButton::toggled, this, [this](bool on) { view_->set_drawing(on); });
  connect(view_, &FieldView::stroke, this, [this](double x, double y, int value) {
    if (draw_input_.isEmpty()) return;
    const Stroke s{draw_input_.toStdString(), x, y, brush_->value(), value};
    worker_.post(value ? "draw" : "erase", [s](Client& c) { c.draw(s); });
  });
  params_form_ = new QFormLayout;
  sl->addLayout(params_form_);
  sl->addStretch(1);
  dock = new QDockWidget("Simulation", this);
  dock->setObjectName("simulation");
  dock->setWidget(params_box_);
  addDockWidget(Qt::RightDockWidgetArea, dock);

  plot_ = new RatePlot;
  dock = new QDockWidget("Rates", this);
  dock->setObjectName("rates");
  dock->setWidget(plot_);
  addDockWidget(Qt::LeftDockWidgetArea, dock);

  // Status bar
  conn_label_ = new QLabel("detached");
  fps_label_ = new QLabel;
  latency_label_ = new QLabel;
  steps_label_ = new QLabel;
  skipped_label_ = new QLabel;
  backend_label_ = new QLabel;
  readout_label_ = new QLabel;
  checkpoint_label_ = new QLabel;
  checkpoint_label_->setObjectName("checkpoint");
  for (auto* l :
       {conn_label_, fps_label_, latency_label_, steps_label_, skipped_label_, backend_label_, checkpoint_label_})
    statusBar()->addWidget(l);
  statusBar()->addPermanentWidget(readout_label_);

  // Menus
  auto* file = menuBar()->addMenu("&File");
  file->addAction("Save &screenshot…", QKeySequence::Save, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, "Save screenshot", "cuview.png", "PNG images (*.png)");
    if (path.isEmpty()) return;
    const QString err = save_screenshot(path);
    statusBar()->showMessage(err.isEmpty() ? "saved " + path : err, 8000);
    if (!err.isEmpty()) on_error(err);
  });
  record_ = file->addAction("&Record PNG sequence…");
  record_->setCheckable(true);
  connect(record_, &QAction::toggled, this, &MainWindow::toggle_recording);
  file->addSeparator();
  file->addAction("&Quit", QKeySequence::Quit, this, &QWidget::close);
  auto* daemon = menuBar()->addMenu("&Daemon");
  daemon->addAction("&Attach", this, &MainWindow::attach_selected);
  daemon->addAction("&Detach", this, &MainWindow::detach);
  daemon->addSeparator();
  checkpoint_now_ = daemon->addAction("&Checkpoint now", QKeySequence(Qt::CTRL | Qt::Key_K), this, [this] {
    worker_.post("checkpoint", [](Client& c) { (void)c.checkpoint(); });
    statusBar()->showMessage("checkpoint requested from " + target_, 8000);
  });
  checkpoint_now_->setObjectName("checkpoint_now");
  checkpoint_now_->setToolTip(
      "write the simulation's state to the daemon's checkpoint directory (docs/checkpoints.md)");
  checkpoint_now_->setEnabled(false);
}

void MainWindow::attach_to(const QString& name) {
  target_ = name;
  if (!opts_.headless()) QSettings().setValue("daemon/name", name);
  worker_.set_target(name);
}

void MainWindow::attach_selected() {
  // What is highlighted counts, not Qt's current item (which focus alone may set).
  if (const auto selected = daemons_->selectedItems(); !selected.isEmpty())
    return attach_to(selected.front()->data(Qt::UserRole).toString());
  const QStringList names = daemon_names();
  if (names.size() == 1) {
    daemons_->setCurrentRow(0, QItemSelectionModel::ClearAndSelect);
    return attach_to(names.front());
  }
  if (names.isEmpty())
    on_error(
        "no cuview-compute daemon is running for you; start one (cuview-compute --name NAME, or "
        "scripts/run.sh) and it appears in the Daemons list");
  else
    on_error(QString("%1 daemons are running (%2): select one in the Daemons list, then Attach")
                 .arg(names.size())
                 .arg(names.join(", ")));
}

void MainWindow::on_daemons_listed(const QList<DaemonEntry>& list) {
  // Updated in place, so that the selection, a hover or a double-click in progress survive.
  QSet<QString> listed;
  for (const auto& d : list) {
    listed.insert(d.name);
    const QString text = d.name + "\n" + d.summary;
    QListWidgetItem* item = nullptr;
    for (int i = 0; i < daemons_->count() && item == nullptr; ++i)
      if (daemons_->item(i)->data(Qt::UserRole).toString() == d.name) item = daemons_->item(i);
    if (item == nullptr) {
      item = new QListWidgetItem(daemons_);
      item->setData(Qt::UserRole, d.name);
      if (daemons_->selectedItems().isEmpty() && d.name == target_) item->setSelected(true);
    }
    if (item->text() != text) item->setText(text);
    item->setToolTip(d.name + ": " + d.summary);
  }
  for (int i = daemons_->count() - 1; i >= 0; --i)
    if (!listed.contains(daemons_->item(i)->data(Qt::UserRole).toString())) delete daemons_->takeItem(i);
}

void MainWindow::detach() {
  target_.clear();
  worker_.set_target({});
}

void MainWindow::set_colormap(Colormap map) {
  colormap_->setCurrentIndex(static_cast<int>(map));
  choose_colormap(map);
}

void MainWindow::choose_colormap(Colormap map) {
  if (!field_name_.isEmpty()) chosen_.insert(field_name_, map);
  // A map picked for a signed field is that field's; one picked for any other is the new default.
  if (!signed_.value(field_name_, false)) preferred_ = map;
}

void MainWindow::show_colormap_of_field() {
  Colormap map = preferred_;
  if (const auto it = chosen_.constFind(field_name_); it != chosen_.constEnd())
    map = *it;
  else if (opts_.colormap.isEmpty() && signed_.value(field_name_, false))
    map = Colormap::diverging;
  const QSignalBlocker quiet(colormap_);  // the caller pushes the view
  colormap_->setCurrentIndex(static_cast<int>(map));
}

bool MainWindow::learn_sign(const RenderedFrame& f) {
  // Only a frame of the field shown now, and one that says something: a field that is 0
  // everywhere (a flow at rest) is neither signed nor not yet.
  if (f.field != field_->currentIndex() || signed_.contains(field_name_) || !(f.data_lo < f.data_hi)) return false;
  signed_.insert(field_name_, f.data_lo < 0 && f.data_hi > 0);
  const int before = colormap_->currentIndex();
  show_colormap_of_field();
  if (colormap_->currentIndex() == before) return false;
  push_view();
  return true;
}

void MainWindow::set_fixed_range(float lo, float hi) {
  range_mode_->setCurrentIndex(1);
  range_lo_->setValue(lo);
  range_hi_->setValue(hi);
}

void MainWindow::set_field(const QString& name) {
  field_name_ = name;
  if (const int i = find_field(field_, name); i >= 0) field_->setCurrentIndex(i);
}

void MainWindow::set_parameter(const QString& name, double value) {
  const std::string key = name.toStdString();
  worker_.post("set " + name, [key, value](Client& c) { c.set({{key, value}}); });
}

QString MainWindow::connection_text() const { return conn_label_->text(); }

QStringList MainWindow::daemon_names() const {
  QStringList out;
  for (int i = 0; i < daemons_->count(); ++i) out << daemons_->item(i)->data(Qt::UserRole).toString();
  return out;
}

void MainWindow::push_view() {
  ViewRequest v;
  v.width = view_->width();
  v.height = view_->height();
  v.field = std::max(0, field_->currentIndex());
  v.colormap = static_cast<Colormap>(std::max(0, colormap_->currentIndex()));
  v.auto_range = range_mode_->currentIndex() == 0;
  v.lo = static_cast<float>(range_lo_->value());
  v.hi = static_cast<float>(range_hi_->value());
  range_lo_->setEnabled(!v.auto_range);
  range_hi_->setEnabled(!v.auto_range);
  v.arrows = arrows_->isChecked();
  v.zoom = view_->zoom();
  v.center_x = view_->center_x();
  v.center_y = view_->center_y();
  worker_.set_view(v);
}

void MainWindow::on_frame(const RenderedFrame& f) {
  skipped_total_ += f.skipped;
  if (learn_sign(f)) {  // drawn in the colormap the field no longer has: the next one is not
    worker_.frame_shown();
    return;
  }
  view_->show_frame(f);
  colorbar_->set(f.colormap, f.lo, f.hi);
  if (!view_->isVisible()) worker_.frame_shown();  // nothing will paint it: do not stall the worker
}

void MainWindow::on_painted(const RenderedFrame& f) {
  worker_.frame_shown();
  ++frames_displayed_;
  ++fps_frames_;
  last_latency_ms_ = static_cast<double>(realtime_ns() - f.info.stamp_ns) * 1e-6;
  show_status(latency_label_, QString("latency %1 ms").arg(last_latency_ms_, 0, 'f', 1));
  show_status(skipped_label_, QString("skipped %1").arg(skipped_total_));
  if (fps_clock_.elapsed() >= 1000) {
    show_status(fps_label_, QString("%1 fps").arg(fps_frames_ * 1000.0 / fps_clock_.elapsed(), 0, 'f', 1));
    fps_frames_ = 0;
    fps_clock_.restart();
  }
  if (!record_dir_.isEmpty()) {
    const QString path = QDir(record_dir_).filePath(QString("frame_%1.png").arg(++record_index_, 6, 10, QChar('0')));
    if (const QString err = save_screenshot(path); !err.isEmpty()) {
      record_->setChecked(false);
      on_error(err);
    }
  }
  // The shot shows a frame drawn as the window is now: not one rendered for the view's size before
  // the window was laid out, nor one of an earlier field or colormap.
  const bool drawn_as_shown = f.image.size() == view_->size() && f.field == field_->currentIndex() &&
                              f.colormap == static_cast<Colormap>(colormap_->currentIndex());
  if (opts_.headless() && !headless_done_ && drawn_as_shown &&
      frames_displayed_ >= static_cast<quint64>(opts_.frames)) {
    headless_done_ = true;
    if (const QString err = save_screenshot(opts_.screenshot); !err.isEmpty()) {
      fail_headless(err);
      return;
    }
    std::fprintf(stderr, "cuview-gui: saved %s after %llu frame(s) (step %llu)\n", qPrintable(opts_.screenshot),
                 static_cast<unsigned long long>(frames_displayed_), static_cast<unsigned long long>(f.info.step));
    Q_EMIT finished(0);
  }
}

void MainWindow::on_connection(Connection state, const QString& text) {
  state_ = state;
  connection_detail_ = text;
  // The status bar says the state in a few words; the whole sentence (why, and what to do) is
  // shown across the view while no frames come, and as the label's tooltip.
  QString label;
  switch (state) {
    case Connection::detached:
      label = "detached";
      break;
    case Connection::connecting:
      label = "connecting to " + target_ + "…";
      break;
    case Connection::connected:
      label = "connected to " + target_;
      break;
    case Connection::waiting:
      label = text.startsWith("disconnected") ? "disconnected — waiting for " + target_ : "waiting for " + target_;
      break;
    case Connection::failed:
      label = "cannot attach to " + target_;
      break;
  }
  show_status(conn_label_, label);
  conn_label_->setToolTip(text);
  view_->set_message(state == Connection::connected ? QString() : state == Connection::detached ? kDetachedHint : text);
  if (state != Connection::connected) show_status(backend_label_, {});
  if (state == Connection::failed) {
    on_error(text);
    if (opts_.headless()) fail_headless(text);
  }
}

void MainWindow::on_described(const proto::DescribeResult& d) {
  session_ = QString::fromStdString(d.session);
  show_status(backend_label_, QString::fromStdString(d.backend));
  backend_label_->setToolTip(QString::fromStdString(d.device));
  setWindowTitle(QString("cuview — %1 (%2 %3×%4 on %5)")
                     .arg(target_, QString::fromStdString(d.sim))
                     .arg(d.width)
                     .arg(d.height)
                     .arg(QString::fromStdString(d.backend)));
  // Whether a field is signed is learnt again for another simulation (a restarted one keeps it).
  if (const QString sim = QString::fromStdString(d.sim); sim != sim_) {
    signed_.clear();
    sim_ = sim;
  }
  // Fields: keep the selected one by name; say so if it no longer exists.
  const QString wanted = field_name_;
  field_->blockSignals(true);
  field_->clear();
  for (const auto& f : d.fields) field_->addItem(QString::fromStdString(f.name));
  for (const auto& v : point_views(d)) field_->addItem(v.label);
  int index = find_field(field_, wanted);
  if (index < 0 && !wanted.isEmpty() && field_->count() > 0)
    on_error(QString("field '%1' does not exist in this simulation; showing '%2'").arg(wanted, field_->itemText(0)));
  field_->setCurrentIndex(std::max(0, index));
  field_name_ = field_->currentText();
  field_->blockSignals(false);
  show_colormap_of_field();
  // Parameters and presets, generated from the description.
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
  push_view();
}

void MainWindow::on_stats(const proto::Stats& s) {
  paused_ = s.paused;
  pause_->setText(s.paused ? "Resume" : "Pause");
  show_status(steps_label_, QString("%1 steps/s · step %2").arg(s.steps_per_second, 0, 'f', 0).arg(s.step));
  plot_->add(s.steps_per_second, last_latency_ms_);
  // Checkpoints: when the last was written (and a word when a new one lands, or one failed).
  const auto& c = s.checkpoint;
  checkpoint_now_->setEnabled(c.enabled);
  checkpoint_label_->setVisible(c.enabled);
  if (c.enabled) {
    const QString when =
        c.written == 0
            ? QString("no checkpoint yet")
            : QString("checkpoint %1 · step %2")
                  .arg(QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(c.unix_time * 1e3)).toString("HH:mm:ss"))
                  .arg(c.step);
    show_status(checkpoint_label_, when);
    checkpoint_label_->setToolTip(c.written == 0 ? "into " + QString::fromStdString(c.dir)
                                                 : QString::fromStdString(c.path));
    const QString session = QString::fromStdString(s.session);
    if (session == checkpoint_session_ && c.written > checkpoints_seen_)
      statusBar()->showMessage(
          QString("checkpoint of step %1 written to %2").arg(c.step).arg(QString::fromStdString(c.path)), 8000);
    if (session == checkpoint_session_ && !c.error.empty() && c.error_ticket > 0 && c.answered > checkpoints_answered_)
      on_error(QString("checkpoint failed: %1").arg(QString::fromStdString(c.error)));
    checkpoint_session_ = session;
    checkpoints_seen_ = c.written;
    checkpoints_answered_ = c.answered;
  }
  // Show changes made by other viewers, but never fight the user's editing.
  for (const auto& [name, value] : s.params) {
    auto* box = params_.value(QString::fromStdString(name));
    if (box == nullptr || box->hasFocus() || box->value() == value) continue;
    box->setProperty("updating", true);
    box->setValue(value);
    box->setProperty("updating", false);
  }
}

void MainWindow::on_error(const QString& message) {
  last_error_ = message;
  statusBar()->showMessage(message, 15000);
  if (opts_.headless()) std::fprintf(stderr, "cuview-gui: %s\n", qPrintable(message));
}

void MainWindow::fail_headless(const QString& message) {
  if (headless_done_ && message.isEmpty()) return;
  headless_done_ = true;
  std::fprintf(stderr, "cuview-gui: %s\n", qPrintable(message));
  Q_EMIT finished(1);
}

QImage grab_pixels(QWidget* widget) {
  // On a real display, what the window system shows (the X server's pixels of this window);
  // offscreen there is no such thing, and the widget renders itself.
  QWindow* window = widget->window()->windowHandle();
  if (QGuiApplication::platformName() == "offscreen" || window == nullptr || !window->isExposed())
    return widget->grab().toImage();
  const QPoint at = widget->mapTo(widget->window(), QPoint(0, 0));
  return window->screen()->grabWindow(window->winId(), at.x(), at.y(), widget->width(), widget->height()).toImage();
}

QString MainWindow::save_screenshot(const QString& path) {
  const QFileInfo info(path);
  const QFileInfo dir(info.absolutePath());
  if (!dir.exists() || !dir.isDir())
    return QString("cannot save %1: folder %2 does not exist").arg(path, dir.filePath());
  if (!dir.isWritable()) return QString("cannot save %1: folder %2 is not writable").arg(path, dir.filePath());
  QWidget* what = opts_.whole_window ? static_cast<QWidget*>(this) : centralWidget();
  if (!grab_pixels(what).save(path, "PNG"))
    return QString("cannot save %1: writing the PNG failed (disk full or not writable?)").arg(path);
  return {};
}

void MainWindow::toggle_recording(bool on) {
  if (!on) {
    if (!record_dir_.isEmpty()) statusBar()->showMessage(QString("recorded %1 frames").arg(record_index_), 8000);
    record_dir_.clear();
    return;
  }
  const QString dir = QFileDialog::getExistingDirectory(this, "Record frames into folder");
  if (dir.isEmpty() || !QFileInfo(dir).isWritable()) {
    if (!dir.isEmpty()) on_error("cannot record into " + dir + ": not writable");
    record_->setChecked(false);
    return;
  }
  record_dir_ = dir;
  record_index_ = 0;
}

void MainWindow::closeEvent(QCloseEvent* e) {
  save_settings();
  e->accept();
}

void MainWindow::save_settings() {
  if (opts_.headless()) return;
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  // The colormap chosen last, not the diverging one a signed field showed by itself.
  const auto name = kColormapNames[static_cast<std::size_t>(preferred_)];
  settings.setValue("view/colormap", QString::fromLatin1(name.data(), static_cast<int>(name.size())));
  settings.setValue("view/range_mode", range_mode_->currentIndex());
  settings.setValue("view/range_lo", range_lo_->value());
  settings.setValue("view/range_hi", range_hi_->value());
  if (!target_.isEmpty()) settings.setValue("daemon/name", target_);
}

}  // namespace cuview::gui
