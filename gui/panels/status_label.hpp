// A label of the status bar or of the line under the picture. A brief one (a state, a rate, a step:
// read at a glance) always shows its whole text; the status bar puts it on a further row rather
// than cut it to its first letters (StatusRowsLayout). A description (what a volume's picture is
// made of, a remote view's link, the value under the mouse) takes the room it is given: where that
// is narrower than its text, it shows the start of it and "…", and its tooltip the whole text
// (before the tooltip's own words). Neither ever makes the window wider than a screen.
#pragma once

#include <QLabel>

namespace cuview::gui {

class StatusLabel : public QLabel {
  Q_OBJECT
 public:
  enum class Kind { brief, description };
  explicit StatusLabel(Kind kind = Kind::brief, const QString& text = {}, QWidget* parent = nullptr);
  [[nodiscard]] Kind kind() const { return kind_; }
  /// What is drawn: text(), or its start and "…" when the label is narrower than it.
  [[nodiscard]] QString shown_text() const;
  /// Brief: as wide as the widest text it has shown, so that numbers that change every second
  /// ("9.8 fps", "10.1 fps") do not move the labels after them, nor take a row away and give it
  /// back. A description: as wide as its text.
  [[nodiscard]] QSize sizeHint() const override;
  /// Brief: its whole text. A description: a few characters and "…".
  [[nodiscard]] QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* e) override;
  bool event(QEvent* e) override;

 private:
  Kind kind_;
  mutable int widest_ = 0;  ///< a brief label's widest sizeHint so far (sizeHint is const, as Qt's caches are)
};

}  // namespace cuview::gui
