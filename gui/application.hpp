// What the viewer program and its tests need around the window: Qt's noise filtered, the icon,
// pixels read back as the user sees them, the window's default size.
#pragma once

#include <QIcon>
#include <QImage>
#include <QSize>

#include <memory>
#include <optional>
#include <string>
#include <vector>

class QWidget;

namespace cuview::gui {

/// Drops the offscreen platform's warning about every window resize, which says nothing to a user.
void quiet_platform_noise();
/// cuview's icon (resources/icons), at every size it is drawn in.
QIcon application_icon();
/// The pixels of `widget` as the user sees them: grabbed from the window system on a real display,
/// rendered by the widget itself offscreen.
QImage grab_pixels(QWidget* widget);
/// The Qt platform `qt_args` ("-platform NAME") or QT_QPA_PLATFORM choose; "" when neither does.
std::string chosen_platform(const std::vector<std::string>& qt_args);
/// Whether a window can be shown, asked before QApplication tries: Qt's xcb platform aborts the
/// process (SIGABRT) when DISPLAY names no X server that answers.
struct DisplayCheck {
  /// Why no window can be shown, in one sentence; empty when a window can be tried (an X server
  /// answers, or another platform was chosen).
  std::optional<std::string> problem;
  /// The check's connection to the X server, to be dropped once QApplication has its own: an X
  /// server whose last client leaves resets (Xvfb without -noreset), and Qt's connection made
  /// meanwhile would fail.
  std::shared_ptr<void> connection;
};
DisplayCheck check_display(const std::string& platform);
/// The window's size when no geometry was saved.
inline constexpr QSize kDefaultWindowSize{1100, 760};

}  // namespace cuview::gui
