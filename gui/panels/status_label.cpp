#include "panels/status_label.hpp"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

namespace cuview::gui {

StatusLabel::StatusLabel(Kind kind, const QString& text, QWidget* parent) : QLabel(text, parent), kind_(kind) {}

QString StatusLabel::shown_text() const {
  return fontMetrics().elidedText(text(), Qt::ElideRight, contentsRect().width());
}

QSize StatusLabel::sizeHint() const {
  QSize s = QLabel::sizeHint();
  if (kind_ == Kind::description) return s;
  widest_ = std::max(widest_, s.width());
  s.setWidth(widest_);
  return s;
}

QSize StatusLabel::minimumSizeHint() const {
  if (kind_ == Kind::brief) return sizeHint();
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
