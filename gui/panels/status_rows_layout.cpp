#include "panels/status_rows_layout.hpp"

#include <algorithm>

namespace cuview::gui {
namespace {
// Between two labels of a row: wide enough to tell "12.0 fps" from the "latency 3.1 ms" after it.
constexpr int kColumnGap = 16;
constexpr int kRowGap = 2;

/// Whether a label takes room: shown, and with a text (or room kept for one).
bool takes_room(const QLayoutItem* item) { return !item->isEmpty() && item->sizeHint().width() > 0; }
}  // namespace

StatusRowsLayout::StatusRowsLayout(QWidget* parent) : QLayout(parent) {
  setContentsMargins(0, 0, 0, 0);
  setSpacing(kColumnGap);
}

StatusRowsLayout::~StatusRowsLayout() {
  while (QLayoutItem* item = takeAt(0)) delete item;
}

void StatusRowsLayout::addItem(QLayoutItem* item) { items_.append(item); }

QLayoutItem* StatusRowsLayout::takeAt(int index) {
  return index >= 0 && index < items_.size() ? items_.takeAt(index) : nullptr;
}

int StatusRowsLayout::heightForWidth(int width) const { return arrange(QRect(0, 0, width, 0), Placement::measure); }

QSize StatusRowsLayout::sizeHint() const {
  int width = 0, height = 0, shown = 0;
  for (const QLayoutItem* item : items_) {
    if (!takes_room(item)) continue;
    const QSize s = item->sizeHint();
    width += s.width();
    height = std::max(height, s.height());
    ++shown;
  }
  const QMargins m = contentsMargins();
  return {width + std::max(shown - 1, 0) * kColumnGap + m.left() + m.right(), height + m.top() + m.bottom()};
}

QSize StatusRowsLayout::minimumSize() const {
  int width = 0, height = 0;
  for (const QLayoutItem* item : items_) {
    if (!takes_room(item)) continue;
    width = std::max(width, item->minimumSize().width());
    height = std::max(height, item->sizeHint().height());
  }
  const QMargins m = contentsMargins();
  return {width + m.left() + m.right(), height + m.top() + m.bottom()};
}

void StatusRowsLayout::setGeometry(const QRect& rect) {
  QLayout::setGeometry(rect);
  (void)arrange(rect, Placement::apply);
}

int StatusRowsLayout::arrange(const QRect& rect, Placement placement) const {
  const QRect area = rect.marginsRemoved(contentsMargins());
  int x = area.x(), y = area.y(), row_height = 0;
  for (QLayoutItem* item : items_) {
    if (!takes_room(item)) continue;
    const QSize hint = item->sizeHint();
    // As wide as its text; a description wider than the row gets the row (and cuts itself short).
    const int width = std::max(std::min(hint.width(), area.width()), item->minimumSize().width());
    if (x > area.x() && x + width > area.x() + area.width()) {
      x = area.x();
      y += row_height + kRowGap;
      row_height = 0;
    }
    if (placement == Placement::apply) item->setGeometry(QRect(QPoint(x, y), QSize(width, hint.height())));
    x += width + kColumnGap;
    row_height = std::max(row_height, hint.height());
  }
  const QMargins m = contentsMargins();
  return y + row_height - rect.y() + m.bottom();
}

}  // namespace cuview::gui
