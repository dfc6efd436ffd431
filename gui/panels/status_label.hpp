// A label of the status bar: its whole text when there is room, else the start of it and "…", the
// whole text then also in its tooltip (before the tooltip's own words). The status bar shares the window's width out among its
// labels (each as wide as its text while they fit), so that a long line — a remote view's link, a
// volume's brick — never makes the window wider than a screen, nor overlaps its neighbour.
#pragma once

#include <QLabel>

namespace cuview::gui {

class StatusLabel : public QLabel {
  Q_OBJECT
 public:
  using QLabel::QLabel;
  /// What is drawn: text(), or its start and "…" when the label is narrower than it.
  [[nodiscard]] QString shown_text() const;
  [[nodiscard]] QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* e) override;
  bool event(QEvent* e) override;
};

}  // namespace cuview::gui
