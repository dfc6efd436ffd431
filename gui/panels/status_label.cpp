#include "panels/status_label.hpp"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

namespace cuview::gui {

QString StatusLabel::shown_text() const {
  return fontMetrics().elidedText(text(), Qt::ElideRight, contentsRect().width());
}

QSize StatusLabel::minimumSizeHint() const {
  QSize s = QLabel::minimumSizeHint();
  // A few characters and "…": the start of the text stays readable.
  s.setWidth(std::min(s.width(), fontMetrics().horizontalAdvance(QStringLiteral("0000…")) + 2 * margin()));
  return s;
}

void StatusLabel::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setPen(palette().color(foregroundRole()));
  p.drawText(contentsRect(), static_cast<int>(alignment() | Qt::AlignVCenter), shown_text());
}

bool StatusLabel::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    const bool elided = shown_text() != text();
    QString tip = elided ? text() : QString();
    if (!toolTip().isEmpty() && toolTip() != text()) tip += (tip.isEmpty() ? "" : "\n\n") + toolTip();
    if (tip.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(static_cast<QHelpEvent*>(e)->globalPos(), tip, this);
    return true;
  }
  return QLabel::event(e);
}

}  // namespace cuview::gui
