#include "panels/dock_scroll.hpp"

#include <QEvent>
#include <QScrollBar>

namespace cuview::gui {

DockScroll::DockScroll(QWidget* content, QWidget* parent) : QScrollArea(parent) {
  setFrameShape(QFrame::NoFrame);
  setWidgetResizable(true);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setWidget(content);  // also watches it (QScrollArea's event filter)
}

QSize DockScroll::sizeHint() const {
  const QSize s = widget()->sizeHint();
  return {s.width() + verticalScrollBar()->sizeHint().width(), s.height()};
}

QSize DockScroll::minimumSizeHint() const {
  return {widget()->minimumSizeHint().width() + verticalScrollBar()->sizeHint().width(), 4 * fontMetrics().height()};
}

bool DockScroll::eventFilter(QObject* watched, QEvent* e) {
  // Rows shown or hidden in the contents change what this area asks the dock for.
  if (watched == widget() && e->type() == QEvent::LayoutRequest) updateGeometry();
  return QScrollArea::eventFilter(watched, e);
}

void set_scrolling_widget(QDockWidget* dock, QWidget* content) { dock->setWidget(new DockScroll(content)); }

}  // namespace cuview::gui
