// What the real-window tests share. The viewer as a person uses it: real windows on an X server
// (Qt's xcb platform), real mouse and keyboard input through that server, pixels read back from the
// server. The cuview-gui program itself is started as a child process where the command line
// matters (--name, --attach, Ctrl+Q), and a window in this process is driven where the test must
// look inside (the Attach button's messages, the panel's spin boxes). Tagged [.window]: main()
// starts Xvfb for them, or reports them skipped where it cannot.
#pragma once

#include <QGuiApplication>
#include <QImage>
#include <QListWidget>
#include <QScreen>
#include <QSet>
#include <QSettings>
#include <QWindow>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "main_window.hpp"
#include "process.hpp"
#include "viewer_test.hpp"
#include "window_system.hpp"

namespace cuview::test {
using namespace std::chrono_literals;

/// cuview-gui started as from a terminal: the platform Qt picks from DISPLAY, nothing forced.
inline ChildProcess start_viewer(std::vector<std::string> args) {
  std::vector<std::string> argv{"/usr/bin/env", "-u", "QT_QPA_PLATFORM", bin("cuview-gui")};
  argv.insert(argv.end(), args.begin(), args.end());
  return ChildProcess(argv);
}

inline bool is_reading(const std::string& name, std::uint32_t readers = 1, std::chrono::milliseconds timeout = 10s) {
  try {
    wait_stats(
        name, [&](const StatsView& s) { return s.readers == readers; }, timeout);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

/// The X server's pixels of a window, by id (another process's too).
inline QImage screen_pixels(unsigned long window) {
  return QGuiApplication::primaryScreen()->grabWindow(static_cast<WId>(window)).toImage();
}

/// Colours on a grid of every fifth pixel: a field shows many, a blank window one or two.
inline int distinct_colours(const QImage& img) {
  QSet<QRgb> colours;
  for (int y = 0; y < img.height(); y += 5)
    for (int x = 0; x < img.width(); x += 5) colours.insert(img.pixel(x, y));
  return static_cast<int>(colours.size());
}

inline QPoint centre_of(const QWidget* w) { return w->mapToGlobal(w->rect().center()); }

inline QPoint centre_of(const QListWidget* list, const QString& daemon) {
  for (int i = 0; i < list->count(); ++i)
    if (list->item(i)->data(Qt::UserRole).toString() == daemon)
      return list->viewport()->mapToGlobal(list->visualItemRect(list->item(i)).center());
  FAIL("daemon " << daemon.toStdString() << " is not in the Daemons list");
  return {};
}

/// A window of this process, shown and mapped by the X server, ready for input.
inline void show_real(gui::MainWindow& w) {
  REQUIRE(QGuiApplication::platformName() == "xcb");
  w.show();
  REQUIRE(wait_for([&] { return w.windowHandle() != nullptr && w.windowHandle()->isExposed(); }, 10000));
  x11::focus(w.winId());
  REQUIRE(wait_for([&] { return w.isActiveWindow(); }, 5000));
}

inline void forget_window_geometry() { QSettings().remove("window/geometry"); }

}  // namespace cuview::test
