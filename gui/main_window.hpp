// The viewer's window: the field view with its colour bar in the middle, four docks around it
// (panels/: daemons, display, simulation, rates), a line under the picture, the status bar and the
// menus. It composes them:
// the worker's signals go to the panels that show them, the panels' requests to the worker.
#pragma once

#include <QElapsedTimer>
#include <QMainWindow>
#include <QSize>

#include "application.hpp"
#include "field_view.hpp"
#include "worker/daemon_lister.hpp"
#include "worker/viewer_worker.hpp"

class QAction;
class QLabel;

namespace cuview::gui {

class DaemonsPanel;
class DisplayPanel;
class RatesPanel;
class SimulationPanel;
class StatusLabel;
class VolumePanel;

struct ViewerOptions {
  QString name;        ///< attach to this daemon at start (empty: none)
  /// The gateway to reach daemons through (AttachOptions::remote), or the gateways of several
  /// hosts separated by spaces (a run of parts over them: cuview::open with them); empty: this host.
  QString remote;
  int announce_port = 8991;  ///< where gateways' announcements are listened for (docs/remote.md)
  QString screenshot;  ///< headless: save a PNG here after `frames` frames, then quit
  int frames = 1;
  int timeout_s = 30;         ///< headless: give up after this long without enough frames
  QString colormap;           ///< for every field, overriding the remembered one and the diverging default
  QString field;              ///< the field (or "SET (points by ATTR)") to show first; empty: the remembered one
  QString plane;              ///< a volume's plane to show first, "AXIS=INDEX" (z=10); empty: the middle z-plane
  bool three_planes = false;  ///< a volume's planes across z, x and y side by side
  bool whole_window = false;  ///< screenshots show the whole window, not only the view
  QString volume;             ///< a volume seen whole at start: mip, emission or isosurface (empty: planes)
  std::optional<double> level;  ///< the isosurface's level at start
  std::optional<int> brick;     ///< the volume's brick, longest axis in cells, at start
  QString opacity;            ///< the emission's opacity preset at start (ramp, peak, flat)
  std::optional<VolumeCamera> camera;  ///< the volume's camera at start

  /// Headless runs (a screenshot) take their settings from these options and the defaults alone:
  /// they neither read nor write what interactive runs remember (QSettings), so one run's
  /// colormap never changes a later shot, and a shot never changes the next session.
  [[nodiscard]] bool headless() const { return !screenshot.isEmpty(); }
};

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(const ViewerOptions& options, QWidget* parent = nullptr);
  ~MainWindow() override;

  // For tests and scripting.
  void attach_to(const QString& name);
  /// From now on, list and attach to the publishers of the gateway at `url` (empty: this host's);
  /// detaches from the daemon shown.
  void use_gateway(const QString& url);
  [[nodiscard]] QString gateway() const { return remote_; }
  /// What the Attach button and Daemon → Attach do: the selected daemon; with none selected,
  /// the only one listed; otherwise a message saying what to pick.
  void attach_selected();
  void detach();
  /// As a user picking `map` in the Colormap list: the choice for the field shown (and for fields
  /// of one sign, the colormap from now on).
  void set_colormap(Colormap map);
  void set_fixed_range(float lo, float hi);
  void set_field(const QString& name);
  void set_parameter(const QString& name, double value);
  [[nodiscard]] FieldView* view() const { return view_; }
  [[nodiscard]] VolumePanel* volume_panel() const { return volume_; }
  [[nodiscard]] Connection connection() const { return state_; }
  /// The connection's state as the status bar shows it ("connected to run1", "waiting for run1").
  [[nodiscard]] QString connection_text() const;
  /// The whole sentence behind it: why, and what to do.
  [[nodiscard]] QString connection_detail() const { return connection_detail_; }
  [[nodiscard]] QString last_error() const { return last_error_; }
  [[nodiscard]] quint64 frames_displayed() const { return frames_displayed_; }
  [[nodiscard]] QString session() const { return session_; }
  [[nodiscard]] QStringList daemon_names() const;
  /// Saves the view and colour bar as PNG. Returns an error sentence, or empty on success.
  QString save_screenshot(const QString& path);

 Q_SIGNALS:
  /// Headless runs end through this: 0 on success, otherwise after a message on stderr.
  void finished(int exit_code);

 protected:
  void closeEvent(QCloseEvent* e) override;

 private:
  /// The line under the picture: what it is made of, and the value under the mouse.
  QWidget* build_caption();
  void build_status_bar();
  void build_menus();
  void connect_parts();
  void save_settings();
  void push_view();
  void on_frame(const RenderedFrame& f);
  /// "remote ssh://host · u16 · ±3.1e-06 · 18.2 MB/s" for a remote view, nothing for a local frame.
  void show_link(const RenderedFrame& f);
  /// The volume view's brick (its size, the grid's cells it takes), copy and render times.
  void show_volume(const RenderedFrame& f);
  void on_painted(const RenderedFrame& f);
  void on_connection(Connection state, const QString& text);
  void on_described(const proto::DescribeResult& d);
  /// The grid of the field shown (a run's fields may lie on several): the volume panel, the
  /// view's coordinates and the plane controls follow it.
  void show_field_grid();
  void on_stats(const proto::Stats& s);
  /// When the daemon last wrote a checkpoint, and a word when a new one lands or one failed.
  void show_checkpoints(const proto::Stats& s);
  void on_error(const QString& message);
  void fail_headless(const QString& message);
  void toggle_recording(bool on);

  ViewerOptions opts_;
  proto::DescribeResult described_;  ///< the run described last
  ViewerWorker worker_;
  DaemonLister lister_;
  FieldView* view_ = nullptr;
  QWidget* picture_ = nullptr;  ///< the view and its colour bar: what a screenshot saves
  ColorBar* colorbar_ = nullptr;
  DaemonsPanel* daemons_ = nullptr;
  DisplayPanel* display_ = nullptr;
  SimulationPanel* simulation_ = nullptr;
  VolumePanel* volume_ = nullptr;
  RatesPanel* rates_ = nullptr;
  StatusLabel* connection_label_ = nullptr;
  StatusLabel* fps_label_ = nullptr;
  StatusLabel* latency_label_ = nullptr;
  StatusLabel* steps_label_ = nullptr;
  StatusLabel* cost_label_ = nullptr;  // "cost 0.98 % of 1 % · budget-limited" (stats)
  StatusLabel* skipped_label_ = nullptr;
  StatusLabel* backend_label_ = nullptr;
  StatusLabel* remote_label_ = nullptr;  ///< the gateway, encoding, error bound and link of a remote view
  StatusLabel* readout_label_ = nullptr;     ///< the value under the mouse
  StatusLabel* checkpoint_label_ = nullptr;  ///< when the daemon last wrote a checkpoint
  StatusLabel* volume_label_ = nullptr;      ///< what a volume view is made of and what it cost
  QElapsedTimer first_painted_;              ///< since the first frame was painted (a headless run's rate)
  QAction* checkpoint_now_ = nullptr;
  std::uint64_t checkpoints_seen_ = 0, checkpoints_answered_ = 0;  ///< the daemon's counts at the last stats
  QString checkpoint_session_;
  QAction* record_ = nullptr;

  Connection state_ = Connection::detached;
  QString target_;
  QString remote_;  ///< the gateway attached through; empty: this host
  QString session_;
  QString last_error_;
  QString connection_detail_ = "detached";
  quint64 frames_displayed_ = 0, skipped_total_ = 0;
  double last_latency_ms_ = 0;
  /// Pictures the run casts for viewers (stats.pictures): the count and when it was read, and the
  /// rate between the last two readings, for the volume's status.
  std::uint64_t pictures_seen_ = 0;
  std::int64_t pictures_seen_ns_ = 0;
  double pictures_per_s_ = 0;
  QElapsedTimer fps_clock_;
  quint64 fps_frames_ = 0;
  QString record_dir_;
  quint64 record_index_ = 0;
  QElapsedTimer headless_clock_;
  bool headless_done_ = false;
};

}  // namespace cuview::gui
