#include "main_window.hpp"

#include <QAction>
#include <QCloseEvent>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenuBar>
#include <QSettings>
#include <QShortcut>
#include <QStatusBar>
#include <QTimer>
#include <QVBoxLayout>
#include <cstdio>

#include "cuview/assembly.hpp"
#include "cuview/posix.hpp"
#include "panels/daemons_panel.hpp"
#include "panels/display_panel.hpp"
#include "panels/rates_panel.hpp"
#include "panels/simulation_panel.hpp"
#include "panels/status_label.hpp"
#include "panels/status_rows_layout.hpp"
#include "panels/volume_panel.hpp"

namespace cuview::gui {
namespace {
const QString kRemoteTip =
    "values sent by the gateway: its encoding, the largest difference from the true value, the link's rate";
}  // namespace

namespace {
const QString kDetachedHint =
    "Detached. Pick a running daemon in the Daemons list and click Attach (or double-click it).";

/// A label's text (a StatusLabel: a brief one always whole, on a further row of the status bar
/// where the window is narrow; a description cut short where it has less room than its text).
void show_status(QLabel* label, const QString& text) { label->setText(text); }
}  // namespace

MainWindow::MainWindow(const ViewerOptions& options, QWidget* parent)
    : QMainWindow(parent), opts_(options), remote_(options.remote) {
  setWindowTitle("cuview");
  setWindowIcon(application_icon());
  view_ = new FieldView;
  colorbar_ = new ColorBar;
  picture_ = new QWidget;
  auto* row = new QHBoxLayout(picture_);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(view_, 1);
  row->addWidget(colorbar_);
  auto* central = new QWidget;
  auto* column = new QVBoxLayout(central);
  column->setContentsMargins(0, 0, 0, 0);
  column->setSpacing(0);
  column->addWidget(picture_, 1);
  column->addWidget(build_caption());
  setCentralWidget(central);
  daemons_ = new DaemonsPanel(this, opts_.announce_port);
  addDockWidget(Qt::LeftDockWidgetArea, daemons_);
  display_ = new DisplayPanel(this);
  addDockWidget(Qt::RightDockWidgetArea, display_);
  simulation_ = new SimulationPanel(this);
  addDockWidget(Qt::RightDockWidgetArea, simulation_);
  volume_ = new VolumePanel(this);
  addDockWidget(Qt::RightDockWidgetArea, volume_);
  rates_ = new RatesPanel(this);
  addDockWidget(Qt::LeftDockWidgetArea, rates_);
  build_status_bar();
  build_menus();
  connect_parts();
  if (opts_.headless()) {
    resize(kDefaultWindowSize);  // the defaults of the widgets built above, and these options
  } else {
    QSettings settings;
    if (!restoreGeometry(settings.value("window/geometry").toByteArray())) resize(kDefaultWindowSize);
    display_->restore(settings);
  }
  display_->start_with(opts_.colormap, opts_.field);
  if (!opts_.plane.isEmpty()) display_->set_slice(opts_.plane.section('=', 0, 0), opts_.plane.section('=', 1).toInt());
  display_->set_three_planes(opts_.three_planes);
  if (opts_.level) volume_->set_level(*opts_.level);
  if (opts_.brick) volume_->set_brick(*opts_.brick);
  if (!opts_.opacity.isEmpty()) volume_->set_preset(opts_.opacity);
  if (opts_.camera) view_->set_volume_camera(*opts_.camera);
  if (!opts_.volume.isEmpty()) volume_->set_mode(opts_.volume);
  fps_clock_.start();
  headless_clock_.start();
  lister_.set_remote(remote_);
  display_->set_remote(!remote_.isEmpty());
  worker_.start();
  lister_.start();
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

void MainWindow::connect_parts() {
  connect(&worker_, &ViewerWorker::frame_ready, this, &MainWindow::on_frame);
  connect(&worker_, &ViewerWorker::connection_changed, this, &MainWindow::on_connection);
  connect(&worker_, &ViewerWorker::described, this, &MainWindow::on_described);
  connect(&worker_, &ViewerWorker::stats_updated, this, &MainWindow::on_stats);
  connect(&worker_, &ViewerWorker::error, this, &MainWindow::on_error);
  connect(&lister_, &DaemonLister::listed, this,
          [this](const QList<DaemonEntry>& daemons) { daemons_->show_daemons(daemons, target_); });
  connect(daemons_, &DaemonsPanel::attach_requested, this, &MainWindow::attach_to);
  connect(daemons_, &DaemonsPanel::detach_requested, this, &MainWindow::detach);
  connect(daemons_, &DaemonsPanel::gateway_requested, this, &MainWindow::use_gateway);
  connect(daemons_, &DaemonsPanel::error, this, &MainWindow::on_error);
  connect(display_, &DisplayPanel::field_chosen, this, &MainWindow::show_field_grid);
  connect(display_, &DisplayPanel::view_changed, this, &MainWindow::push_view);
  connect(display_, &DisplayPanel::reset_zoom, view_, &FieldView::reset_view);
  connect(display_, &DisplayPanel::error, this, &MainWindow::on_error);
  connect(simulation_, &SimulationPanel::command_posted, this, [this](const Command& c) { worker_.post(c); });
  connect(simulation_, &SimulationPanel::drawing_toggled, view_, &FieldView::set_drawing);
  connect(view_, &FieldView::stroke, simulation_, &SimulationPanel::stroke);
  connect(view_, &FieldView::stroke_ball, simulation_, &SimulationPanel::stroke_ball);
  connect(view_, &FieldView::view_changed, this, &MainWindow::push_view);
  connect(volume_, &VolumePanel::view_changed, this, &MainWindow::push_view);
  connect(volume_, &VolumePanel::active_changed, view_, &FieldView::set_volume);
  // The painted frame frees the worker for the next one straight from the view (frame_shown is
  // thread-safe); the window's bookkeeping follows, queued: on_painted may grab the view for a
  // screenshot, which must not happen inside paintEvent.
  connect(view_, &FieldView::painted, &worker_, &ViewerWorker::frame_shown);
  connect(view_, &FieldView::painted, this, &MainWindow::on_painted, Qt::QueuedConnection);
  connect(view_, &FieldView::hovered, readout_label_, &QLabel::setText);
  // A volume's plane: Shift + wheel over the view, Page Up/Down anywhere in the window.
  connect(view_, &FieldView::plane_step, display_, &DisplayPanel::move_plane);
  auto* forward = new QShortcut(QKeySequence(Qt::Key_PageUp), this);
  auto* back = new QShortcut(QKeySequence(Qt::Key_PageDown), this);
  connect(forward, &QShortcut::activated, display_, [this] { display_->move_slice(1); });
  connect(back, &QShortcut::activated, display_, [this] { display_->move_slice(-1); });
}

QWidget* MainWindow::build_caption() {
  // What the picture is made of (a volume's brick and its costs, a remote view's encoding and
  // bound) and the value under the mouse, on a line of their own under the picture: a line the
  // picture gives up, never the window (the docks beside it are often as short as they go), and
  // always there, so that nothing changes size as the mouse comes and goes. Each is cut short
  // ("…", the whole text in its tooltip) where the picture is narrower than it.
  auto* caption = new QWidget;
  caption->setObjectName("caption");
  auto* line = new QHBoxLayout(caption);
  line->setContentsMargins(4, 1, 4, 1);
  line->setSpacing(16);
  const auto description = [&](const char* name) {
    auto* l = new StatusLabel(StatusLabel::Kind::description);
    l->setObjectName(name);
    return l;
  };
  volume_label_ = description("volume");
  volume_label_->setToolTip("the volume view: the brick rendered (the grid's cells it takes), what bringing it cost, "
                            "how long the rays took on this computer's cores");
  volume_label_->setVisible(false);
  remote_label_ = description("remote");
  remote_label_->setToolTip(kRemoteTip);
  remote_label_->setVisible(false);
  readout_label_ = description("readout");
  // The descriptions share what the readout leaves (a text's width asks for nothing).
  for (auto* l : {volume_label_, remote_label_}) {
    l->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    line->addWidget(l, 1);
  }
  line->addStretch(0);
  line->addWidget(readout_label_);
  caption->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
  caption->setMinimumHeight(QFontMetrics(caption->font()).height() + 2);  // one line, with text or not
  return caption;
}

void MainWindow::build_status_bar() {
  // Short labels, each read at a glance and so never cut short: where the window is narrower than
  // them all, the bar takes another row.
  auto* rows = new QWidget;
  rows->setObjectName("status_rows");
  auto* layout = new StatusRowsLayout(rows);
  const auto brief = [&](const char* name) {
    auto* l = new StatusLabel(StatusLabel::Kind::brief);
    l->setObjectName(name);
    layout->addWidget(l);
    return l;
  };
  connection_label_ = brief("connection");
  connection_label_->setText("detached");
  fps_label_ = brief("fps");
  latency_label_ = brief("latency");
  steps_label_ = brief("steps");
  cost_label_ = brief("cost");
  skipped_label_ = brief("skipped");
  backend_label_ = brief("backend");
  checkpoint_label_ = brief("checkpoint");
  // A temporary message (showMessage) hides the labels: the bar keeps its rows meanwhile, so the
  // picture above does not change size twice for each message.
  QSizePolicy keep = rows->sizePolicy();
  keep.setRetainSizeWhenHidden(true);
  rows->setSizePolicy(keep);
  statusBar()->addWidget(rows, 1);
  // A status bar is one row high by default (its vertical size policy is Fixed): let it be as tall
  // as its rows, which the main window's layout asks it for the window's width (heightForWidth).
  QSizePolicy grows = statusBar()->sizePolicy();
  grows.setVerticalPolicy(QSizePolicy::Minimum);
  statusBar()->setSizePolicy(grows);
}

void MainWindow::build_menus() {
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
    worker_.post({"checkpoint", {}, [](cuview::Attachment& c) { (void)c.checkpoint(); }});
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
  worker_.set_target(name, remote_);
}

void MainWindow::use_gateway(const QString& url) {
  if (url == remote_) return;
  detach();
  remote_ = url;
  lister_.set_remote(url);
  display_->set_remote(!url.isEmpty());
  statusBar()->showMessage(url.isEmpty() ? "listing this host's daemons" : "listing the publishers of " + url, 8000);
}

void MainWindow::attach_selected() { daemons_->attach_selected(); }

void MainWindow::detach() {
  target_.clear();
  worker_.set_target({});
}

void MainWindow::set_colormap(Colormap map) { display_->set_colormap(map); }

void MainWindow::set_fixed_range(float lo, float hi) { display_->set_fixed_range(lo, hi); }

void MainWindow::set_field(const QString& name) { display_->set_field(name); }

void MainWindow::set_parameter(const QString& name, double value) { simulation_->set_parameter(name, value); }

QString MainWindow::connection_text() const { return connection_label_->text(); }

QStringList MainWindow::daemon_names() const { return daemons_->names(); }

void MainWindow::push_view() {
  ViewRequest v;
  v.width = view_->width();
  v.height = view_->height();
  v.zoom = view_->zoom();
  v.center_x = view_->center_x();
  v.center_y = view_->center_y();
  display_->fill(v);
  volume_->fill(v, view_->volume_camera(), view_->interacting());
  worker_.set_view(v);
}

void MainWindow::on_frame(const RenderedFrame& f) {
  skipped_total_ += f.skipped;
  if (display_->learn_sign(f)) {  // drawn in the colormap the field no longer has: the next one is not
    worker_.frame_shown();
    return;
  }
  view_->show_frame(f);
  show_link(f);
  show_volume(f);
  colorbar_->set(f.colormap, f.lo, f.hi);
  volume_->set_colormap(f.colormap);
  if (f.volume && f.volume->auto_opacity) volume_->show_auto_curve(*f.volume->auto_opacity);
  if (!view_->isVisible()) worker_.frame_shown();  // nothing will paint it: do not stall the worker
}

void MainWindow::show_link(const RenderedFrame& f) {
  remote_label_->setVisible(f.link.has_value());
  if (!f.link) return;
  // Several gateways (a run of parts over hosts): counted here, named in the tooltip, so that the
  // encoding and the bound stay in sight.
  const QStringList gateways = remote_.split(' ', Qt::SkipEmptyParts);
  const QString where = gateways.size() > 1 ? QString("%1 gateways").arg(gateways.size()) : remote_;
  remote_label_->setToolTip(kRemoteTip + (gateways.size() > 1 ? "\n" + gateways.join("\n") : QString()));
  QString text = QString("remote %1 · %2 · ±%3").arg(where, f.link->encoding).arg(f.link->error_bound, 0, 'g', 2);
  if (f.link->link_bytes_per_s > 0) text += QString(" · %1 MB/s").arg(f.link->link_bytes_per_s / 1e6, 0, 'f', 1);
  show_status(remote_label_, text);
}

void MainWindow::show_volume(const RenderedFrame& f) {
  volume_label_->setVisible(f.volume.has_value());
  if (!f.volume) return;
  const auto& v = *f.volume;
  const char* mode = v.mode == VolumeMode::mip ? "MIP" : v.mode == VolumeMode::emission ? "emission" : "isosurface";
  if (v.by_run) {  // a picture the run cast from its frame
    QString text = QString("%1 · every cell of %2×%3×%4 · cast by the run in %5 ms")
                       .arg(mode).arg(v.brick_w).arg(v.brick_h).arg(v.brick_d).arg(v.render_ms, 0, 'f', 1);
    if (pictures_per_s_ > 0) text += QString(" · %1 pictures/s").arg(pictures_per_s_, 0, 'f', 1);
    show_status(volume_label_, text);
    return;
  }
  QString text = QString("%1 · brick %2×%3×%4").arg(mode).arg(v.brick_w).arg(v.brick_h).arg(v.brick_d);
  if (v.stride > 1) {
    const char* th = v.stride % 10 == 2 && v.stride % 100 != 12 ? "nd" : v.stride % 10 == 3 && v.stride % 100 != 13 ? "rd" : "th";
    text += QString(" (every %1%2 cell of %3×%4×%5)").arg(v.stride).arg(th).arg(v.grid[2]).arg(v.grid[1]).arg(v.grid[0]);
  }
  if (!v.source.isEmpty()) text += " · " + v.source;
  if (v.copy_ms > 0)
    text += v.bytes > 0 ? QString(" · copy %1 ms, %2 MB").arg(v.copy_ms, 0, 'f', 1).arg(v.bytes / 1e6, 0, 'f', 1)
                        : QString(" · read %1 ms").arg(v.copy_ms, 0, 'f', 1);
  text += QString(" · rays %1 ms").arg(v.render_ms, 0, 'f', 1);
  if (v.scale > 1) text += QString(" at 1/%1 resolution").arg(v.scale);
  show_status(volume_label_, text);
}

void MainWindow::on_painted(const RenderedFrame& f) {
  ++frames_displayed_;
  if (!first_painted_.isValid()) first_painted_.start();
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
  const bool drawn_as_shown =
      f.image.size() == view_->size() && f.field == display_->field_index() && f.colormap == display_->colormap() &&
      f.volume.has_value() == volume_->active() &&
      (f.volume || !f.slice || (*f.slice == display_->slice() && (f.layout.panels.size() == 3) == opts_.three_planes));
  if (opts_.headless() && !headless_done_ && drawn_as_shown &&
      frames_displayed_ >= static_cast<quint64>(opts_.frames)) {
    headless_done_ = true;
    if (const QString err = save_screenshot(opts_.screenshot); !err.isEmpty()) {
      fail_headless(err);
      return;
    }
    // How fast frames were drawn since the first: what a headless run measures (scripts/gpu-volume.sh).
    const double since_first = first_painted_.isValid() ? first_painted_.elapsed() / 1000.0 : 0.0;
    std::fprintf(stderr, "cuview-gui: saved %s after %llu frame(s) (step %llu; %.1f frames/s drawn after the first)%s%s\n",
                 qPrintable(opts_.screenshot), static_cast<unsigned long long>(frames_displayed_),
                 static_cast<unsigned long long>(f.info.step),
                 frames_displayed_ > 1 && since_first > 0 ? static_cast<double>(frames_displayed_ - 1) / since_first : 0.0,
                 f.volume ? "; " : "", f.volume ? qPrintable(volume_label_->text()) : "");
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
  show_status(connection_label_, label);
  connection_label_->setToolTip(text);
  view_->set_message(state == Connection::connected ? QString() : state == Connection::detached ? kDetachedHint : text);
  if (state != Connection::connected) show_status(backend_label_, {});
  if (state == Connection::detached) remote_label_->setVisible(false);
  if (state == Connection::failed) {
    on_error(text);
    if (opts_.headless()) fail_headless(text);
  }
}

void MainWindow::on_described(const proto::DescribeResult& d) {
  described_ = d;
  session_ = QString::fromStdString(d.session);
  show_status(backend_label_, QString::fromStdString(d.backend));
  backend_label_->setToolTip(QString::fromStdString(d.device));
  setWindowTitle(QString("cuview — %1 (%2 %3 on %4)")
                     .arg(target_, QString::fromStdString(d.sim),
                          QString::fromStdString(Extent{d.dims}.text()).replace('x', QChar(0xd7)),
                          QString::fromStdString(d.backend)));
  display_->describe(d);
  simulation_->describe(d);
  show_field_grid();  // the field kept by name may be another one now
  push_view();
}

void MainWindow::show_field_grid() {
  const int field = display_->field_index();
  const auto d = described_.for_field(static_cast<std::size_t>(field));
  volume_->describe(d);
  view_->set_grid(whole_grid(described_, static_cast<std::size_t>(std::max(field, 0))));
  display_->show_grid(d.dims);
}

void MainWindow::on_stats(const proto::Stats& s) {
  show_status(steps_label_, QString("%1 steps/s · step %2").arg(s.steps_per_second, 0, 'f', 0).arg(s.step));
  // What watching costs the run: short here, the whole sentence on hover (the same as status's).
  QString cost = QString("cost %1").arg(QString::fromStdString(proto::percent_text(s.cost)));
  if (s.max_cost < 1) cost += QString(" of %1").arg(QString::fromStdString(proto::percent_text(s.max_cost)));
  if (s.limited_by == "budget") cost += " · budget-limited";
  show_status(cost_label_, cost);
  cost_label_->setToolTip(QString::fromStdString(proto::cost_text(s)));
  // How many pictures a second the run pays for (its budget decides), said with the picture.
  const std::int64_t now = monotonic_ns();
  if (pictures_seen_ns_ > 0 && s.pictures >= pictures_seen_ && now > pictures_seen_ns_)
    pictures_per_s_ = static_cast<double>(s.pictures - pictures_seen_) / (static_cast<double>(now - pictures_seen_ns_) * 1e-9);
  pictures_seen_ = s.pictures, pictures_seen_ns_ = now;
  simulation_->show_stats(s);
  rates_->show_stats(s, last_latency_ms_);
  show_checkpoints(s);
}

void MainWindow::show_checkpoints(const proto::Stats& s) {
  const auto& c = s.checkpoint;
  checkpoint_now_->setEnabled(c.enabled);
  checkpoint_label_->setVisible(c.enabled);
  if (!c.enabled) return;
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

QString MainWindow::save_screenshot(const QString& path) {
  const QFileInfo info(path);
  const QFileInfo dir(info.absolutePath());
  if (!dir.exists() || !dir.isDir())
    return QString("cannot save %1: folder %2 does not exist").arg(path, dir.filePath());
  if (!dir.isWritable()) return QString("cannot save %1: folder %2 is not writable").arg(path, dir.filePath());
  QWidget* what = opts_.whole_window ? static_cast<QWidget*>(this) : picture_;
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
  display_->save(settings);
  if (!target_.isEmpty()) settings.setValue("daemon/name", target_);
}

}  // namespace cuview::gui
