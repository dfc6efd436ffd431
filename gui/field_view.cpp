#include "field_view.hpp"

#include <QFontMetrics>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QStringList>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "cuview/schema.hpp"
#include "render/render.hpp"

namespace cuview::gui {

FieldView::FieldView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(160, 160);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

void FieldView::show_frame(const RenderedFrame& frame) {
  frame_ = frame;
  fresh_ = true;
  update();
}

void FieldView::set_message(const QString& message) {
  if (message == message_) return;
  message_ = message;
  update();
}

void FieldView::reset_view() {
  zoom_ = 1;
  cx_ = cy_ = -1;
  camera_ = VolumeCamera{};
  Q_EMIT view_changed();
}

void FieldView::set_volume(bool on) {
  if (on == volume_) return;
  volume_ = on;
  orbit_ = Drag::none;
  Q_EMIT view_changed();
}

void FieldView::set_volume_camera(const VolumeCamera& camera) {
  camera_ = camera;
  Q_EMIT view_changed();
}

namespace {
/// Pixels per brick cell of a volume picture (volume_render's scale), for panning by the mouse.
double volume_pixels_per_cell(const RenderedFrame& f, const VolumeCamera& c) {
  if (!f.volume || f.image.isNull()) return 1;
  const auto& v = *f.volume;
  const double diag = std::sqrt(double(v.brick_w) * v.brick_w + double(v.brick_h) * v.brick_h + double(v.brick_d) * v.brick_d);
  return std::max(1e-6, c.zoom * std::min(f.image.width(), f.image.height()) / std::max(diag, 1.0));
}
}  // namespace

void FieldView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), QColor(0x20, 0x20, 0x20));
  if (!frame_.image.isNull()) p.drawImage(QPoint(0, 0), frame_.image);
  if (!message_.isEmpty()) {
    // A panel across the middle, over the last picture if there is one.
    const QRect box = rect().adjusted(width() / 10, 0, -width() / 10, 0);
    const QRect text =
        p.fontMetrics().boundingRect(box.adjusted(12, 0, -12, 0), Qt::TextWordWrap | Qt::AlignCenter, message_);
    const QRect panel(box.left(), height() / 2 - text.height() / 2 - 12, box.width(), text.height() + 24);
    p.fillRect(panel, QColor(0, 0, 0, 170));
    p.setPen(Qt::white);
    p.drawText(panel.adjusted(12, 12, -12, -12), Qt::TextWordWrap | Qt::AlignCenter, message_);
  }
  if (fresh_) {
    fresh_ = false;
    Q_EMIT painted(frame_);
  }
}

void FieldView::resizeEvent(QResizeEvent*) { Q_EMIT view_changed(); }

void FieldView::pin_center() {
  if (cx_ < 0 && has_frame()) {
    cx_ = frame_.center_x;
    cy_ = frame_.center_y;
  }
}

void FieldView::wheelEvent(QWheelEvent* e) {
  if (volume_) {  // closer or further, about the view's centre
    camera_.zoom = std::clamp(camera_.zoom * std::pow(1.25, e->angleDelta().y() / 120.0), 0.05, 64.0);
    Q_EMIT view_changed();
    return;
  }
  if (!has_frame()) return;
  if (!frame_.layout.panels.empty() && (e->modifiers() & Qt::ShiftModifier)) {
    // Shift + wheel moves the plane of a volume under the cursor. Qt turns a vertical wheel with
    // Shift into a horizontal one on some platforms: take either.
    const int delta = e->angleDelta().y() != 0 ? e->angleDelta().y() : e->angleDelta().x();
    double x = 0, y = 0;
    const Panel* panel = frame_.layout.panels.size() == 1 ? &frame_.layout.panels.front()
                         : cell_coords(e->position().toPoint(), x, y)
                             ? frame_.layout.panel_at(static_cast<int>(x), static_cast<int>(y))
                             : nullptr;
    if (delta != 0 && panel != nullptr) Q_EMIT plane_step(static_cast<int>(panel->slice.axis), delta > 0 ? 1 : -1);
    return;
  }
  pin_center();
  const double steps = e->angleDelta().y() / 120.0;
  const double factor = std::pow(1.25, steps);
  const double new_zoom = std::clamp(zoom_ * factor, 0.1, 512.0);
  // Keep the cell under the cursor where it is.
  const QPointF pos = e->position();
  const double ppc = frame_.pixels_per_cell;
  const double fx = cx_ + (pos.x() - width() / 2.0) / ppc;
  const double fy = cy_ + (pos.y() - height() / 2.0) / ppc;
  const double new_ppc = ppc * new_zoom / zoom_;
  cx_ = fx - (pos.x() - width() / 2.0) / new_ppc;
  cy_ = fy - (pos.y() - height() / 2.0) / new_ppc;
  zoom_ = new_zoom;
  Q_EMIT view_changed();
}

bool FieldView::cell_coords(QPoint p, double& x, double& y) const {
  if (!has_frame()) return false;
  x = frame_.center_x + (p.x() + 0.5 - frame_.image.width() * 0.5) / frame_.pixels_per_cell;
  y = frame_.center_y + (p.y() + 0.5 - frame_.image.height() * 0.5) / frame_.pixels_per_cell;
  return x >= 0 && y >= 0 && x < frame_.field_w && y < frame_.field_h;
}

void FieldView::emit_stroke(double x, double y) {
  if (frame_.layout.panels.empty()) {
    Q_EMIT stroke(x, y, stroke_value_);
    return;
  }
  // Planes of a volume: the ball's centre is the cell's, in the plane under the pointer.
  if (const auto c = frame_.layout.cell_at(static_cast<int>(x), static_cast<int>(y)))
    Q_EMIT stroke_ball((*c)[0] + 0.5, (*c)[1] + 0.5, (*c)[2] + 0.5, stroke_value_);
}

void FieldView::mousePressEvent(QMouseEvent* e) {
  if (volume_) {
    const bool shift = e->modifiers() & Qt::ShiftModifier;
    orbit_ = e->button() == Qt::LeftButton ? (shift ? Drag::pan : Drag::orbit)
             : e->button() == Qt::MiddleButton ? Drag::pan
             : e->button() == Qt::RightButton  ? Drag::zoom
                                               : Drag::none;
    orbit_from_ = e->pos();
    if (orbit_ != Drag::none) Q_EMIT view_changed();  // interacting: the picture may come coarser
    return;
  }
  if (drawing_ && (e->button() == Qt::LeftButton || e->button() == Qt::RightButton)) {
    stroke_value_ = e->button() == Qt::LeftButton ? 1 : 0;
    double x = 0, y = 0;
    if (cell_coords(e->pos(), x, y)) emit_stroke(x, y);
    return;
  }
  if (e->button() != (drawing_ ? Qt::MiddleButton : Qt::LeftButton)) return;
  dragging_ = true;
  drag_from_ = e->pos();
  pin_center();
}

void FieldView::mouseMoveEvent(QMouseEvent* e) {
  if (volume_ && orbit_ != Drag::none) {
    const QPoint d = e->pos() - orbit_from_;
    orbit_from_ = e->pos();
    if (orbit_ == Drag::orbit) {
      // As if the volume were grabbed: dragging right turns its front to the right, dragging down
      // turns its top towards the viewer.
      camera_.azimuth_deg = std::remainder(camera_.azimuth_deg + 0.4 * d.x(), 360.0);
      camera_.elevation_deg = std::clamp(camera_.elevation_deg + 0.4 * d.y(), -90.0, 90.0);
    } else if (orbit_ == Drag::pan) {
      const double ppc = volume_pixels_per_cell(frame_, camera_);
      camera_.pan_x -= d.x() / ppc;
      camera_.pan_y -= d.y() / ppc;
    } else {
      camera_.zoom = std::clamp(camera_.zoom * std::pow(1.01, -d.y()), 0.05, 64.0);
    }
    Q_EMIT view_changed();
  } else if (stroke_value_ >= 0) {
    double x = 0, y = 0;
    if (cell_coords(e->pos(), x, y)) emit_stroke(x, y);
  } else if (dragging_ && has_frame()) {
    const QPoint d = e->pos() - drag_from_;
    drag_from_ = e->pos();
    cx_ -= d.x() / frame_.pixels_per_cell;
    cy_ -= d.y() / frame_.pixels_per_cell;
    Q_EMIT view_changed();
  }
  Q_EMIT hovered(readout(e->pos()));
}

void FieldView::mouseReleaseEvent(QMouseEvent*) {
  if (orbit_ != Drag::none) {
    orbit_ = Drag::none;
    Q_EMIT view_changed();  // at rest: the picture at full resolution
  }
  dragging_ = false;
  stroke_value_ = -1;
}
void FieldView::leaveEvent(QEvent*) { Q_EMIT hovered(QString()); }

namespace {
/// A cell's value as the readout says it: a whole value of an integer field as an integer, a
/// float64 field's with every digit it needs (the shortest that reads back the same double), any
/// other with 6.
QString value_text(double v, DType dtype, int components) {
  const auto& t = dtype_traits(dtype);
  const bool integer = is_integer(dtype);
  if (integer && components == 1 && v == std::floor(v)) return QString::number(v, 'f', 0);
  if (t.size > size_of(DType::float32)) return QString::number(v, 'g', QLocale::FloatingPointShortest);
  return QString::number(v, 'g', 6);
}
}  // namespace

QString FieldView::position_text(const std::vector<std::uint32_t>& cell) const {
  const std::size_t n = grid_.dims.size();
  if (n != cell.size() || grid_.origin.size() != n || grid_.spacing.size() != n) return {};
  bool own = !grid_.units.empty();
  for (std::size_t k = 0; k < n; ++k) own = own || grid_.origin[k] != 0 || grid_.spacing[k] != 1;
  if (!own) return {};
  QStringList at;
  for (std::size_t k = 0; k < n; ++k)  // `cell` is fastest axis first; the grid's lists slowest first
    at << QString::number(grid_.origin[n - 1 - k] + cell[k] * grid_.spacing[n - 1 - k], 'g', 6);
  return QString(" at (%1)%2").arg(at.join(", "), grid_.units.empty() ? QString() : " " + QString::fromStdString(grid_.units));
}

QString FieldView::readout(QPoint p) const {
  if (!has_frame() || !frame_.values || p.x() < 0 || p.y() < 0 || p.x() >= frame_.image.width() ||
      p.y() >= frame_.image.height())
    return {};
  const std::size_t at = static_cast<std::size_t>(p.y()) * frame_.image.width() + p.x();
  const float v = (*frame_.values)[at];
  if (std::isnan(v)) return {};
  if (frame_.volume) {  // what the ray through the pixel shows
    const auto& vi = *frame_.volume;
    const QString bound = frame_.link && frame_.link->error_bound > 0
                              ? QString(" ± %1").arg(frame_.link->error_bound, 0, 'g', 2)
                              : QString();
    switch (vi.mode) {
      case VolumeMode::mip:
        return QString("largest along the ray = %1%2").arg(static_cast<double>(v), 0, 'g', 6).arg(bound);
      case VolumeMode::emission:
        return QString("opacity along the ray %1").arg(static_cast<double>(v), 0, 'f', 3);
      case VolumeMode::isosurface:
        return QString("isosurface at %1, %2 cells in").arg(static_cast<double>(vi.level), 0, 'g', 6)
            .arg(static_cast<double>(v) * vi.stride, 0, 'f', 1);
    }
  }
  ViewTransform t;  // the frame's own sampling: the cell is the one whose value was drawn there
  t.field_w = frame_.field_w, t.field_h = frame_.field_h;
  t.view_w = frame_.image.width(), t.view_h = frame_.image.height();
  t.center_x = frame_.center_x, t.center_y = frame_.center_y, t.pixels_per_cell = frame_.pixels_per_cell;
  int cx = 0, cy = 0;
  if (!t.cell_at(p.x(), p.y(), cx, cy)) return {};
  // The cell's value before its rounding to float where the frame has it (a float64 or int64 field's).
  const double value = frame_.exact && at < frame_.exact->size() ? (*frame_.exact)[at] : static_cast<double>(v);
  const QString shown = value_text(value, frame_.dtype, frame_.components);
  // The cell in the grid's own axes, fastest first: a line's is x alone; a plane of a volume's
  // picture names its cell in the volume.
  std::vector<std::uint32_t> cell{static_cast<std::uint32_t>(cx), static_cast<std::uint32_t>(cy)};
  if (!frame_.layout.panels.empty()) {
    const auto c = frame_.layout.cell_at(cx, cy);
    if (!c) return {};
    cell.assign(c->begin(), c->end());
  } else if (!grid_.dims.empty() && grid_.dims.size() < cell.size()) {
    cell.resize(grid_.dims.size());
  }
  QStringList indices;
  for (const auto i : cell) indices << QString::number(i);
  QString text = QString("(%1)%2 = %3").arg(indices.join(", "), position_text(cell), shown);
  // A remote value is the gateway's encoding of the true one: say how far off it may be.
  if (frame_.link && frame_.link->error_bound > 0)
    return text + QString(" ± %1").arg(frame_.link->error_bound, 0, 'g', 2);
  return text;
}

namespace {
// The bar's layout: the gradient, its ticks, then the labels.
constexpr int kBarLeft = 4, kBarWidth = 18, kTickLength = 4, kLabelLeft = kBarLeft + kBarWidth + 9, kLabelRight = 4;
constexpr int kTicks = 5;
}  // namespace

ColorBar::ColorBar(QWidget* parent) : QWidget(parent) {}

void ColorBar::set(Colormap map, float lo, float hi) {
  lut_ = make_lut(map);
  lo_ = lo;
  hi_ = hi;
  update();
}

QString ColorBar::label(double value, double lo, double hi) {
  if (std::abs(value) <= 1e-6 * std::abs(hi - lo)) value = 0;  // the middle of −m..+m, not 1.49e-09
  return QString::number(value, 'g', 3);
}

QSize ColorBar::minimumSizeHint() const {
  // The longest texts three significant digits of a float give, in every digit (fonts whose
  // digits differ in width).
  const QFontMetrics fm(font());
  int widest = 0;
  for (const QChar d : QStringLiteral("0123456789")) {
    const QString ddd = QString(3, d);
    for (const QString& text : {"-0.000" + ddd, "-" + ddd.left(1) + "." + ddd.mid(1) + "e-" + ddd.left(2),
                                "-" + ddd.left(1) + "." + ddd.mid(1) + "e+" + ddd.left(2)})
      widest = std::max(widest, fm.horizontalAdvance(text));
  }
  return {kLabelLeft + widest + kLabelRight, kTicks * fm.height()};
}

void ColorBar::changeEvent(QEvent* e) {
  if (e->type() == QEvent::FontChange) updateGeometry();
  QWidget::changeEvent(e);
}

std::vector<ColorBar::Label> ColorBar::labels() const {
  const QFontMetrics fm(font());
  const int top = fm.height() / 2 + 2, bottom = height() - top, h = std::max(1, bottom - top);
  std::vector<Label> out;
  for (int k = 0; k < kTicks; ++k) {
    const double t = double(k) / (kTicks - 1);
    const int y = bottom - static_cast<int>(t * (h - 1));
    out.push_back({label(lo_ + t * (hi_ - lo_), lo_, hi_),
                   QRect(kLabelLeft, y - fm.height() / 2, width() - kLabelLeft - kLabelRight, fm.height()), y});
  }
  return out;
}

void ColorBar::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const auto texts = labels();
  // The gradient spans the ticks of the lowest and the highest label.
  const int bottom = texts.front().tick_y, top = texts.back().tick_y;
  const int h = std::max(1, bottom - top + 1);
  for (int y = 0; y < h; ++y) {
    const int i = std::clamp(static_cast<int>(std::lround((1.0 - double(y) / std::max(1, h - 1)) * 255)), 0, 255);
    p.setPen(QColor::fromRgb(lut_[static_cast<std::size_t>(i)]));
    p.drawLine(kBarLeft, top + y, kBarLeft + kBarWidth, top + y);
  }
  p.setPen(palette().color(QPalette::WindowText));
  for (const auto& l : texts) {
    p.drawLine(kBarLeft + kBarWidth, l.tick_y, kBarLeft + kBarWidth + kTickLength, l.tick_y);
    p.drawText(l.rect, Qt::AlignLeft | Qt::AlignVCenter, l.text);
  }
}

}  // namespace cuview::gui
