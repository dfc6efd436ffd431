// A dock's contents in a vertical scroll area. The docks of one side of the window stack, and Qt
// makes a window at least as tall as its stacked docks' minimum heights: three form-like panels
// (Display, Simulation, Volume with its opacity editor) asked for more than a laptop's screen, so
// the window grew past the screen's bottom edge, and its height (the picture's with it) changed
// with the rows the panels showed. In a scroll area a panel asks for its whole height where there
// is room and scrolls where there is not; the window stays the size the person (or the default)
// gave it.
#pragma once

#include <QDockWidget>
#include <QScrollArea>

namespace cuview::gui {

class DockScroll : public QScrollArea {
  Q_OBJECT
 public:
  explicit DockScroll(QWidget* content, QWidget* parent = nullptr);
  /// The contents' own size (and room for the scroll bar): shown whole where the window allows.
  [[nodiscard]] QSize sizeHint() const override;
  /// As narrow as the contents go (never cut sideways), a few lines high.
  [[nodiscard]] QSize minimumSizeHint() const override;

 protected:
  bool eventFilter(QObject* watched, QEvent* e) override;
};

/// `dock` shows `content` in a DockScroll.
void set_scrolling_widget(QDockWidget* dock, QWidget* content);

}  // namespace cuview::gui
