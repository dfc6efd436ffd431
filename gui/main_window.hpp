// The viewer's window: daemon list, field view with colour bar, display and simulation
// controls generated from the daemon's description, status bar and rate plot.
#pragma once

#include <QElapsedTimer>
#include <QMainWindow>
#include <QMap>
#include <QSize>

#include "field_view.hpp"
#include "viewer_worker.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QListWidget;
class QPushButton;
class QAction;
class QIcon;
class QImage;

namespace cuview::gui {

/// Drops the offscreen platform's warning about every window resize, which says nothing to a user.
void quiet_platform_noise();
/// cuview's icon (resources/icons), at every size it is drawn in.
QIcon application_icon();
/// The pixels of `widget` as the user sees them: grabbed from the window system on a real display,
/// rendered by the widget itself offscreen.
QImage grab_pixels(QWidget* widget);
/// The window's size when no geometry was saved.
inline constexpr QSize kDefaultWindowSize{1100, 760};

struct ViewerOptions {
  QString name;        ///< attach to this daemon at start (empty: none)
  QString screenshot;  ///< headless: save a PNG here after `frames` frames, then quit
  int frames = 1;
  int timeout_s = 30;         ///< headless: give up after this long without enough frames
  QString colormap;           ///< for every field, overriding the remembered one and the diverging default
  QString field;              ///< the field (or "SET (points by ATTR)") to show first; empty: the remembered one
  bool whole_window = false;  ///< screenshots show the whole window, not only the view

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
  void build_ui();
  void save_settings();
  void push_view();
  /// The user picked `map` for the field shown.
  void choose_colormap(Colormap map);
  /// The colormap the field shown opens with: the user's choice for it; else diverging when its
  /// values are both negative and positive (unless --colormap said otherwise); else the colormap
  /// chosen last. Sets the Colormap list without taking it for the user's choice.
  void show_colormap_of_field();
  /// Learns from the first frame of a field with more than one value whether the field is signed.
  /// True when that changes its colormap: the frame is stale then, and a fresh one is on its way.
  bool learn_sign(const RenderedFrame& f);
  void on_frame(const RenderedFrame& f);
  void on_painted(const RenderedFrame& f);
  void on_connection(Connection state, const QString& text);
  void on_described(const proto::DescribeResult& d);
  void on_stats(const proto::Stats& s);
  void on_error(const QString& message);
  void on_daemons_listed(const QList<DaemonEntry>& list);
  void fail_headless(const QString& message);
  void toggle_recording(bool on);

  ViewerOptions opts_;
  ViewerWorker worker_;
  FieldView* view_ = nullptr;
  ColorBar* colorbar_ = nullptr;
  RatePlot* plot_ = nullptr;
  QListWidget* daemons_ = nullptr;
  QComboBox* field_ = nullptr;
  QComboBox* colormap_ = nullptr;
  QComboBox* range_mode_ = nullptr;
  QDoubleSpinBox* range_lo_ = nullptr;
  QDoubleSpinBox* range_hi_ = nullptr;
  QComboBox* presets_ = nullptr;
  QCheckBox* arrows_ = nullptr;  // vector fields: arrows over the magnitude
  QPushButton* draw_ = nullptr;  // drawing mode, enabled when the simulation has an input
  QDoubleSpinBox* brush_ = nullptr;
  QString draw_input_;
  QFormLayout* params_form_ = nullptr;
  QWidget* params_box_ = nullptr;
  QMap<QString, QDoubleSpinBox*> params_;
  QPushButton* pause_ = nullptr;
  QLabel* conn_label_ = nullptr;
  QLabel* fps_label_ = nullptr;
  QLabel* latency_label_ = nullptr;
  QLabel* steps_label_ = nullptr;
  QLabel* skipped_label_ = nullptr;
  QLabel* backend_label_ = nullptr;
  QLabel* readout_label_ = nullptr;
  QLabel* checkpoint_label_ = nullptr;  ///< when the daemon last wrote a checkpoint
  QAction* checkpoint_now_ = nullptr;
  std::uint64_t checkpoints_seen_ = 0, checkpoints_answered_ = 0;  ///< the daemon's counts at the last stats
  QString checkpoint_session_;
  QAction* record_ = nullptr;

  Connection state_ = Connection::detached;
  QString target_;
  QString session_;
  QString field_name_;
  QString sim_;                             ///< the simulation described last
  Colormap preferred_ = Colormap::viridis;  ///< for fields the user chose nothing for
  QMap<QString, Colormap> chosen_;          ///< the user's choice per field (this session)
  QMap<QString, bool> signed_;              ///< per field of sim_: values both negative and positive
  QString last_error_;
  QString connection_detail_ = "detached";
  bool paused_ = false;
  quint64 frames_displayed_ = 0, skipped_total_ = 0;
  double last_latency_ms_ = 0;
  QElapsedTimer fps_clock_;
  quint64 fps_frames_ = 0;
  QString record_dir_;
  quint64 record_index_ = 0;
  QElapsedTimer headless_clock_;
  bool headless_done_ = false;
};

}  // namespace cuview::gui
