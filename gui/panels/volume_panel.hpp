// The Volume dock (issue 40): a volume seen whole instead of its planes — maximum-intensity
// projection, emission–absorption through a transfer function edited here (the colormap and an
// opacity curve drawn with the mouse, with presets), or a shaded isosurface at a level typed here —
// the brick's size, and the Display dock's plane outlined inside. Shown for grids of three axes.
#pragma once

#include <QDockWidget>
#include <QWidget>
#include <array>
#include <optional>

#include "render/rendered_frame.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;

namespace cuview::gui {

/// The opacity curve over the colour range: the colormap along the bottom, the curve above it.
/// Dragging with the left button draws the curve through the pointer (value across, opacity up).
class TransferFunctionEditor : public QWidget {
  Q_OBJECT
 public:
  explicit TransferFunctionEditor(QWidget* parent = nullptr);
  [[nodiscard]] const std::array<float, 256>& curve() const { return curve_; }
  void set_curve(const std::array<float, 256>& curve);
  /// Shows `curve` (the one the picture was drawn with) without changing what is asked for.
  void show_curve(const std::array<float, 256>& curve);
  void set_colormap(Colormap map);
  [[nodiscard]] QSize sizeHint() const override { return {220, 110}; }
  [[nodiscard]] QSize minimumSizeHint() const override { return {120, 80}; }
  /// The entry under widget x, and the opacity at widget y (the plot's geometry).
  [[nodiscard]] int entry_at(int x) const;
  [[nodiscard]] float opacity_at(int y) const;

 Q_SIGNALS:
  void changed();
  /// The curve was drawn with the mouse (after changed()).
  void drawn();

 protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent*) override;
  void mouseMoveEvent(QMouseEvent*) override;
  void mouseReleaseEvent(QMouseEvent*) override;

 private:
  [[nodiscard]] QRect plot() const;
  void draw_to(QPoint p);
  std::array<float, 256> curve_{};
  Lut lut_ = make_lut(Colormap::viridis);
  std::optional<QPoint> last_;  // the pointer's last place while drawing
};

class VolumePanel : public QDockWidget {
  Q_OBJECT
 public:
  explicit VolumePanel(QWidget* window);
  /// The grid described: the dock is enabled for three axes only.
  void describe(const proto::DescribeResult& description);
  /// The volume seen whole (any mode but planes), on a grid of three axes.
  [[nodiscard]] bool active() const;
  /// The panel's part of a view request: view.volume, with the view's camera.
  void fill(ViewRequest& view, const VolumeCamera& camera, bool interacting) const;
  /// "planes", "mip", "emission" or "isosurface" (the command line's --volume); false: none of them.
  bool set_mode(const QString& mode);
  void set_level(double level);
  /// The brick's longest axis in cells (a size the list lacks is added to it).
  void set_brick(int cells);
  /// An opacity preset: "auto" (the default: from the values, opacity_by_rarity), "ramp",
  /// "peak" or "flat".
  bool set_preset(const QString& name);
  /// A picture drawn with the automatic curve: the editor shows it.
  void show_auto_curve(const std::array<float, 256>& curve);
  void set_colormap(Colormap map);
  [[nodiscard]] TransferFunctionEditor* editor() const { return editor_; }

 Q_SIGNALS:
  void view_changed();
  /// The mode changed between planes and the volume seen whole.
  void active_changed(bool active);

 private:
  void show_rows();
  QComboBox* mode_ = nullptr;
  QComboBox* preset_ = nullptr;
  TransferFunctionEditor* editor_ = nullptr;
  QDoubleSpinBox* level_ = nullptr;
  QComboBox* brick_ = nullptr;
  QCheckBox* show_plane_ = nullptr;
  QFormLayout* form_ = nullptr;
  bool three_axes_ = false;
  bool auto_opacity_ = true;  // the preset "auto", until another is chosen or the curve drawn
};

}  // namespace cuview::gui
