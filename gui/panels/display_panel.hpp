// The Display dock: which field (or particle view) is shown, arrows over vector fields, the
// colormap and the range; for a volume, which plane (axis and position). It remembers the user's colormap per field and learns from the first
// frames whether a field has both signs (then it opens in diverging, centred on 0).
#pragma once

#include <QDockWidget>
#include <QMap>
#include <QString>
#include <array>

#include "render/colormap.hpp"
#include "render/rendered_frame.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QSettings;
class QSlider;

namespace cuview::gui {

/// Owns the Display dock's widgets and the per-field colormap choices; MainWindow asks it for its
/// part of each view request.
class DisplayPanel : public QDockWidget {
  Q_OBJECT
 public:
  /// A dock of `window`, which places it.
  explicit DisplayPanel(QWidget* window);

  /// What interactive runs remembered (QSettings "view/…"); headless runs never call these.
  void restore(const QSettings& settings);
  void save(QSettings& settings) const;
  /// The command line's choices, over what was remembered: a colormap for every field (empty:
  /// none) and the field to show first (empty: the remembered one).
  void start_with(const QString& colormap, const QString& field);

  /// The fields and particle views of a newly described simulation; the field shown is kept by name.
  /// A run of several grids lists its fields under a heading per grid.
  void describe(const proto::DescribeResult& description);
  /// The grid of the field shown (slowest axis first): a volume's gets the plane controls. The
  /// window calls it after describe() and at each field chosen (DescribeResult::for_field).
  void show_grid(const std::vector<std::uint32_t>& dims);
  /// Remote views carry one value per pixel: arrows and particle views are disabled, saying why.
  void set_remote(bool remote);
  /// Learns from the first frame of a field with more than one value whether the field is signed.
  /// True when that changes its colormap: the frame is stale then, and a fresh one is on its way.
  bool learn_sign(const RenderedFrame& frame);
  /// The panel's part of a view request: field, colormap, range and arrows.
  void fill(ViewRequest& request) const;

  /// As a user picking `map` in the Colormap list: the choice for the field shown (and for fields
  /// of one sign, the colormap from now on).
  void set_colormap(Colormap map);
  void set_fixed_range(float lo, float hi);
  void set_field(const QString& name);
  /// A volume's plane: across `axis` ("x", "y" or "z") at `index` (clamped to the axis).
  void set_slice(const QString& axis, int index);
  /// Moves the plane `delta` cells along its axis (the keyboard); nothing for a 2-D grid.
  void move_slice(int delta);
  /// Moves the plane across `axis` (a SliceAxis) `delta` cells (Shift + wheel over that plane):
  /// the slider's when it is the axis chosen, else one of the three planes shown side by side.
  void move_plane(int axis, int delta);
  /// Three orthogonal planes side by side (true) or the plane across the axis chosen.
  void set_three_planes(bool on);
  [[nodiscard]] Slice slice() const;
  /// The view shown: a field's index in the description, or after the fields a particle view's; -1: none.
  [[nodiscard]] int field_index() const;
  [[nodiscard]] Colormap colormap() const;

 Q_SIGNALS:
  /// Something the view request holds changed.
  void view_changed();
  /// The user (or set_field) picked another field or particle view; view_changed follows.
  void field_chosen();
  void reset_zoom();
  void error(const QString& message);

 private:
  /// The user picked `map` for the field shown.
  void choose_colormap(Colormap map);
  /// The colormap the field shown opens with: the user's choice for it; else diverging when its
  /// values are both negative and positive (unless the command line named one); else the colormap
  /// chosen last. Sets the Colormap list without taking it for the user's choice.
  void show_colormap_of_field();
  /// The slider's range and the label for the axis chosen, keeping the plane's index where it fits.
  void show_slice_axis();
  /// The arrows' box: off remotely (one value per pixel) and over three planes (none lies in all).
  void show_arrows_state();

  QComboBox* field_ = nullptr;
  QCheckBox* arrows_ = nullptr;  // vector fields: arrows over the magnitude
  QComboBox* colormap_ = nullptr;
  QComboBox* range_mode_ = nullptr;
  QDoubleSpinBox* range_lo_ = nullptr;
  QDoubleSpinBox* range_hi_ = nullptr;
  QFormLayout* form_ = nullptr;
  QComboBox* slice_axis_ = nullptr;  // x, y, z: shown for a volume only
  QSlider* slice_ = nullptr;
  QLabel* slice_label_ = nullptr;
  QCheckBox* three_planes_ = nullptr;  // x, y and z planes side by side
  std::vector<std::uint32_t> dims_;  // the grid described last, slowest axis first
  std::array<int, 3> index_{};       // each axis's plane (SliceAxis order: z, y, x); the slider shows the chosen axis's
  int wanted_slice_ = -1;            // set_slice's index, for the volume described next; -1: its middle

  bool remote_ = false;
  QString forced_colormap_;                 ///< --colormap: every field's, never diverging by itself
  QString field_name_;                      ///< the field shown, or wanted when the next description has it
  QString sim_;                             ///< the simulation described last
  Colormap preferred_ = Colormap::viridis;  ///< for fields the user chose nothing for
  QMap<QString, Colormap> chosen_;          ///< the user's choice per field (this session)
  QMap<QString, bool> signed_;              ///< per field of sim_: values both negative and positive
};

}  // namespace cuview::gui
