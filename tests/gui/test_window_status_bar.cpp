// The status bar of a real window as a user reads it (issue 53, item 12). At the viewer's default
// size (1100 × 760 px) each short label — the connection, the rates, the cost, the backend, the
// checkpoint — shows its whole text, never its first letters and "…", in one row; the volume
// view's description of its picture is on the line under the picture, whole. Made as narrow as it
// goes, the window is still narrower than a laptop's screen, and its short labels are still whole,
// in more rows.
// CUVIEW_SCREENSHOT_DIR keeps the X server's pictures of the window (status-bar-*.png).
#include <QHelpEvent>
#include <QLabel>
#include <QSet>
#include <QStatusBar>
#include <QToolTip>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "main_window.hpp"
#include "panels/status_label.hpp"
#include "viewer_test.hpp"
#include "window_test.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace cuview::gui;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {
constexpr int kLaptopWidth = 1024;

/// The labels of the status bar and of the line under the picture a user sees now (shown, with a text).
std::vector<StatusLabel*> shown_labels(MainWindow& w) {
  std::vector<StatusLabel*> shown;
  for (auto* label : w.findChildren<StatusLabel*>())
    if (label->isVisible() && !label->text().isEmpty()) shown.push_back(label);
  return shown;
}

/// Whether the status bar has been laid out for the window's width and the labels' texts now.
bool settled(MainWindow& w) {
  QApplication::processEvents();
  for (auto* label : shown_labels(w))
    if (label->width() < label->minimumSizeHint().width()) return false;
  return true;
}

void keep_picture(MainWindow& w, const fs::path& dir, const std::string& name) {
  const QImage shot = screen_pixels(w.winId());
  CHECK(shot.width() == w.width());
  shot.save(QString::fromStdString((dir / name).string()), "PNG");
}

/// What a user reads at this width: each short label whole, inside the window, over no other.
void check_short_labels_whole(MainWindow& w) {
  const QRect window = w.rect();
  std::vector<QRect> taken;
  for (auto* label : shown_labels(w)) {
    const QRect at(label->mapTo(&w, QPoint(0, 0)), label->size());
    INFO("window " << w.width() << " px wide: status label '" << label->objectName().toStdString() << "' reads '"
                   << label->shown_text().toStdString() << "' of '" << label->text().toStdString() << "' ("
                   << at.width() << " px wide at x " << at.x() << ", y " << at.y() << ")");
    CHECK(window.contains(at));
    for (const QRect& other : taken) CHECK_FALSE(at.intersects(other));
    taken.push_back(at);
    if (label->kind() == StatusLabel::Kind::brief) CHECK(label->shown_text() == label->text());
  }
}
}  // namespace

TEST_CASE("at 1100 px the status bar shows every short label whole, and the volume's description whole under the picture",
          "[.window][window]") {
  RuntimeDir rt;
  const char* keep = std::getenv("CUVIEW_SCREENSHOT_DIR");
  const fs::path pictures = keep != nullptr ? fs::path(keep) : rt.path();
  const fs::path checkpoints = rt.path() / "checkpoints";
  fs::create_directories(checkpoints);
  auto daemon = start_daemon("gray-scott-volume", Backend::host,
                             {"--sim", "grayscott3d", "--checkpoint-dir", checkpoints.string()}, "48x40x32");
  forget_window_geometry();
  ViewerOptions options = attach_options("gray-scott-volume");
  options.volume = "mip";
  MainWindow w(options);
  show_real(w);
  // The width this test is about.
  REQUIRE(w.width() == kDefaultWindowSize.width());
  REQUIRE(shows_frames(w));

  // Everything the bar says once the run's rates have come: the connection, frames per second
  // (after a second), latency, steps, cost, skipped frames, backend, checkpoint, and the volume.
  auto* volume = w.findChild<StatusLabel*>("volume");
  REQUIRE(volume != nullptr);
  const QStringList names{"connection", "fps", "latency", "steps", "cost", "skipped", "backend", "checkpoint", "volume"};
  std::string seen;  // what the bar said when last looked at: a failure names the label that is missing
  const bool all_there = wait_for([&] {
    seen = "connection '" + w.connection_text().toStdString() + "'";
    bool ok = true;
    for (const QString& name : names) {
      auto* label = w.findChild<StatusLabel*>(name);
      seen += "; " + name.toStdString() + ": " +
              (label == nullptr ? std::string("none")
                                : (label->isVisible() ? "'" + label->text().toStdString() + "'" : std::string("hidden")));
      ok = ok && label != nullptr && label->isVisible() && !label->text().isEmpty();
    }
    // The viewer's own brick, or the run's picture once the camera has rested: either is described.
    return ok && w.connection_text() == "connected to gray-scott-volume" &&
           (volume->text().startsWith("MIP · brick 48×40×32") || volume->text().startsWith("MIP · every cell of 48×40×32"));
  });
  INFO("the status bar: " << seen);
  REQUIRE(all_there);
  REQUIRE(wait_for([&] { return settled(w); }));
  CHECK(shown_labels(w).size() >= static_cast<std::size_t>(names.size()));
  keep_picture(w, pictures, "status-bar-1100.png");
  check_short_labels_whole(w);

  // The short labels in one row, in the window's whole width.
  QSet<int> rows;
  for (auto* label : w.statusBar()->findChildren<StatusLabel*>())
    if (label->isVisible() && !label->text().isEmpty()) rows.insert(label->mapTo(&w, QPoint(0, 0)).y());
  CHECK(rows.size() == 1);
  // The volume's rows, which came with its description after the window was shown, scroll in
  // their docks: the window is still the size it was given.
  CHECK(w.size() == kDefaultWindowSize);

  // The description of the picture: whole, under the picture and above the status bar; its
  // tooltip says what the numbers are.
  CHECK(volume->shown_text() == volume->text());
  const int top = volume->mapTo(&w, QPoint(0, 0)).y();
  CHECK(top >= w.view()->mapTo(&w, QPoint(0, w.view()->height())).y());
  CHECK(top + volume->height() <= w.statusBar()->mapTo(&w, QPoint(0, 0)).y());
  CHECK(volume->toolTip().contains("the brick rendered"));

  // A laptop's width, and the narrowest the window goes: the short labels still whole.
  CHECK(w.minimumSizeHint().width() <= kLaptopWidth);
  for (const int width : {kLaptopWidth, w.minimumSizeHint().width()}) {
    w.resize(width, kDefaultWindowSize.height());
    REQUIRE(wait_for([&] { return w.width() == width && settled(w); }));
    check_short_labels_whole(w);
    CHECK(w.view()->height() > 300);  // the rows of labels leave the picture its room
    // The description, cut short where the picture is narrower than it: whole in its tooltip.
    QHelpEvent hover(QEvent::ToolTip, volume->rect().center(), volume->mapToGlobal(volume->rect().center()));
    QApplication::sendEvent(volume, &hover);
    if (volume->shown_text() != volume->text()) CHECK(QToolTip::text().startsWith(volume->text()));
    QToolTip::hideText();
    REQUIRE(wait_for([] { return !QToolTip::isVisible(); }));
  }
  keep_picture(w, pictures, "status-bar-narrowest.png");
}
