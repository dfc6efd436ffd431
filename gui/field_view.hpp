// Shows the worker's rendered frames; zoom (wheel), pan (drag), value readout (hover), and for a
// plane of a volume Shift + wheel moves the plane under the cursor (plane_step). In drawing mode the left button
// draws and the right button erases (stroke()), the middle button pans. A volume seen whole takes
// ParaView's mouse: the left button orbits (Shift + left pans), the middle pans, the right zooms
// (drag up: closer), as does the wheel.
// paintEvent only draws.
#pragma once

#include <QWidget>
#include <vector>

#include "render/colormap.hpp"
#include "render/rendered_frame.hpp"

namespace cuview::gui {

class FieldView : public QWidget {
  Q_OBJECT
 public:
  explicit FieldView(QWidget* parent = nullptr);
  void show_frame(const RenderedFrame& frame);
  [[nodiscard]] const RenderedFrame& last_frame() const { return frame_; }
  [[nodiscard]] bool has_frame() const { return !frame_.image.isNull(); }
  [[nodiscard]] double zoom() const { return zoom_; }
  [[nodiscard]] double center_x() const { return cx_; }
  [[nodiscard]] double center_y() const { return cy_; }
  void reset_view();
  /// A volume seen whole: the mouse moves the camera (volume_camera) instead of the plane's view.
  void set_volume(bool on);
  [[nodiscard]] bool volume() const { return volume_; }
  [[nodiscard]] const VolumeCamera& volume_camera() const { return camera_; }
  void set_volume_camera(const VolumeCamera& camera);
  /// A mouse button is moving the volume's camera.
  [[nodiscard]] bool interacting() const { return orbit_ != Drag::none; }
  /// A sentence shown across the view (e.g. why no frames come); empty hides it.
  void set_message(const QString& message);
  [[nodiscard]] QString message() const { return message_; }
  /// Value and cell under widget pixel p, as text ("" outside the field), and the cell's position
  /// in the grid's coordinates when the program gave them (set_grid).
  [[nodiscard]] QString readout(QPoint p) const;
  /// The grid watched, with its coordinates (whole_grid of the description).
  void set_grid(const proto::GridDesc& grid) { grid_ = grid; }
  [[nodiscard]] QSize sizeHint() const override { return {640, 640}; }
  /// Drawing mode: strokes instead of panning with the left (draw) and right (erase) buttons.
  void set_drawing(bool on) { drawing_ = on; }
  [[nodiscard]] bool drawing() const { return drawing_; }
  /// The grid cell coordinates (continuous) under widget pixel p; false outside the field.
  bool cell_coords(QPoint p, double& x, double& y) const;
  /// Emits stroke() at picture coordinates (x, y), or stroke_ball() at the volume's cell there
  /// where the picture shows planes of a volume (nothing between them).
  void emit_stroke(double x, double y);

 Q_SIGNALS:
  void view_changed();
  void painted(const cuview::gui::RenderedFrame& frame);
  void hovered(const QString& text);
  /// A drawing stroke at grid coordinates (x, y): value 1 draws, 0 erases.
  void stroke(double x, double y, int value);
  /// The same on a plane of a volume: a ball centred in cell (x, y, z) of the volume, the plane's
  /// position along its axis.
  void stroke_ball(double x, double y, double z, int value);
  /// Shift + wheel over a plane of a volume: move that plane (across `axis`, a SliceAxis) `delta`
  /// cells along its axis.
  void plane_step(int axis, int delta);

 protected:
  void paintEvent(QPaintEvent*) override;
  void resizeEvent(QResizeEvent*) override;
  void wheelEvent(QWheelEvent*) override;
  void mousePressEvent(QMouseEvent*) override;
  void mouseMoveEvent(QMouseEvent*) override;
  void mouseReleaseEvent(QMouseEvent*) override;
  void leaveEvent(QEvent*) override;

 private:
  void pin_center();
  /// " at (0.25, 1.5) m": cell `cell` (fastest axis first) in the grid's coordinates; "" when the
  /// grid has none of its own (origin 0, spacing 1, no units).
  [[nodiscard]] QString position_text(const std::vector<std::uint32_t>& cell) const;
  RenderedFrame frame_;
  proto::GridDesc grid_;
  QString message_;
  bool fresh_ = false;
  double zoom_ = 1, cx_ = -1, cy_ = -1;  // centre < 0: the field's centre
  QPoint drag_from_;
  bool dragging_ = false;
  bool drawing_ = false;
  int stroke_value_ = -1;  // while a drawing button is held: 1 or 0
  bool volume_ = false;
  VolumeCamera camera_;
  enum class Drag { none, orbit, pan, zoom };
  Drag orbit_ = Drag::none;  // the volume's camera under a held button
  QPoint orbit_from_;
};

/// The colour bar beside the view: the colormap from lo (bottom) to hi (top) with labels.
class ColorBar : public QWidget {
  Q_OBJECT
 public:
  explicit ColorBar(QWidget* parent = nullptr);
  void set(Colormap map, float lo, float hi);
  /// A value's label: three significant digits ("0.0599", "-1.2e-05"), and "0" for a value that
  /// is 0 but for rounding.
  static QString label(double value, double lo, double hi);
  struct Label {
    QString text;
    QRect rect;  ///< where it is drawn, in the bar's coordinates
    int tick_y;  ///< the row of its tick and its value's colour
  };
  /// The labels as drawn now, bottom (lo) to top (hi).
  [[nodiscard]] std::vector<Label> labels() const;
  /// Wide enough for the widest label any float can have, so that the width never follows the
  /// values (the view would be resized with every range) and no label is ever cut off.
  [[nodiscard]] QSize minimumSizeHint() const override;
  [[nodiscard]] QSize sizeHint() const override { return minimumSizeHint().expandedTo({70, 300}); }

 protected:
  void paintEvent(QPaintEvent*) override;
  void changeEvent(QEvent* e) override;

 private:
  Lut lut_ = make_lut(Colormap::viridis);
  float lo_ = 0, hi_ = 1;
};

}  // namespace cuview::gui
