// What the viewer's test files share: running the Qt event loop until something holds, and
// opening a viewer window on a daemon.
#pragma once

#include <QApplication>
#include <QElapsedTimer>
#include <QImage>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <memory>
#include <string>

#include "main_window.hpp"
#include "process.hpp"

namespace cuview::test {

/// Runs the Qt event loop until `pred` holds; false after `ms`.
inline bool wait_for(const std::function<bool()>& pred, int ms = 20000) {
  QElapsedTimer t;
  t.start();
  while (!pred()) {
    if (t.elapsed() > ms) return false;
    QApplication::processEvents(QEventLoop::AllEvents, 20);
  }
  return true;
}

/// A paused lattice-Boltzmann flow `name` (160×64) after 400 steps: vortices of both signs behind
/// the cylinder, and then still.
inline ChildProcess start_still_flow(const std::string& name) {
  auto daemon = start_daemon(name, Backend::host, {"--sim", "lbm", "--paused"}, "160x64");
  REQUIRE(ctl(name, {"step", "400"}).code == 0);
  (void)wait_stats(name, [](const StatsView& s) { return s.step == 400; });
  return daemon;
}

/// Options that attach to `name` at start (none: start detached).
inline gui::ViewerOptions attach_options(const QString& name = {}) {
  gui::ViewerOptions o;
  o.name = name;
  return o;
}

/// A shown viewer window attached to `name` (none: detached), at `size` (empty: its default).
inline std::unique_ptr<gui::MainWindow> open_viewer(const QString& name, QSize size = {900, 600}) {
  auto w = std::make_unique<gui::MainWindow>(attach_options(name));
  if (!size.isEmpty()) w->resize(size);
  w->show();
  return w;
}

/// Waits until the viewer is connected and has shown more than `after` frames.
inline bool shows_frames(gui::MainWindow& w, quint64 after = 0) {
  return wait_for([&] { return w.connection() == gui::Connection::connected && w.frames_displayed() > after; });
}

inline int channel(QRgb c, int shift) { return (c >> shift) & 0xff; }

/// How a picture of a 128×128 field at zoom 1 (centred, scaled to fit) compares with the field's
/// values under the grayscale colormap over the fixed range [0, 1], on a grid of sample cells.
struct GrayscaleCheck {
  int checked = 0, nonzero = 0, wrong = 0;
  std::string first_wrong;
};
inline GrayscaleCheck check_grayscale(const QImage& img, const float* values) {
  GrayscaleCheck r;
  const double ppc = std::min(img.width(), img.height()) / 128.0;
  const double x0 = img.width() / 2.0 - 64 * ppc, y0 = img.height() / 2.0 - 64 * ppc;
  for (int cy = 1; cy < 128; cy += 3) {
    for (int cx = 2; cx < 128; cx += 3) {
      const int px = static_cast<int>(x0 + (cx + 0.5) * ppc), py = static_cast<int>(y0 + (cy + 0.5) * ppc);
      const float value = values[cy * 128 + cx];
      const int gray = static_cast<int>(std::clamp(value, 0.0f, 1.0f) * 255.0f + 0.5f);
      const QRgb c = img.pixel(px, py);
      ++r.checked;
      r.nonzero += gray > 0;
      if (std::abs(channel(c, 16) - gray) <= 1 && std::abs(channel(c, 8) - gray) <= 1 &&
          std::abs(channel(c, 0) - gray) <= 1)
        continue;
      if (r.wrong++ == 0)
        r.first_wrong = "cell (" + std::to_string(cx) + ", " + std::to_string(cy) + ") = " + std::to_string(value) +
                        " drawn as #" + QString::number(c & 0xffffff, 16).rightJustified(6, '0').toStdString() +
                        " at pixel (" + std::to_string(px) + ", " + std::to_string(py) + "), expected gray " +
                        std::to_string(gray);
    }
  }
  return r;
}

}  // namespace cuview::test
