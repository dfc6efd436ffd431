// cuview-gui: main() only parses the command line and shows the window.
#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>
#include <cstdio>
#include <cstdlib>

#include "main_window.hpp"

int main(int argc, char** argv) {
  cuview::gui::quiet_platform_noise();
  // Headless screenshots need no display: fall back to the offscreen platform when none is set.
  bool headless = false;
  for (int i = 1; i < argc; ++i) headless |= std::string(argv[i]).rfind("--screenshot", 0) == 0;
  if (headless && !std::getenv("QT_QPA_PLATFORM") && !std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY"))
    setenv("QT_QPA_PLATFORM", "offscreen", 1);

  QApplication app(argc, argv);
  QApplication::setOrganizationName("cuview");
  QApplication::setApplicationName("cuview-gui");
  QApplication::setApplicationVersion(CUVIEW_VERSION);

  QCommandLineParser parser;
  parser.setApplicationDescription(
      "cuview-gui: watch a running cuview-compute simulation live; attach, detach and steer it.");
  parser.addHelpOption();
  parser.addVersionOption();
  QCommandLineOption name({"n", "name"}, "Attach to the daemon NAME.", "NAME");
  QCommandLineOption attach("attach", "Attach to the last daemon used (or 'default').");
  QCommandLineOption screenshot("screenshot", "Headless: save a PNG of the view to PATH after --frames frames, then exit.",
                                "PATH");
  QCommandLineOption frames("frames", "Frames to wait for before --screenshot (default 1).", "N", "1");
  QCommandLineOption timeout("timeout", "Headless: seconds to wait for the frames (default 30).", "S", "30");
  QCommandLineOption colormap("colormap", "viridis, magma, grayscale or diverging.", "MAP");
  QCommandLineOption whole("screenshot-window", "Screenshots show the whole window, not only the view.");
  parser.addOptions({name, attach, screenshot, frames, timeout, colormap, whole});
  parser.process(app);

  cuview::gui::ViewerOptions o;
  o.name = parser.value(name);
  if (o.name.isEmpty() && (parser.isSet(attach) || parser.isSet(screenshot)))
    o.name = QSettings().value("daemon/name", "default").toString();
  o.screenshot = parser.value(screenshot);
  bool ok = false;
  o.frames = parser.value(frames).toInt(&ok);
  if (!ok || o.frames < 1) {
    std::fprintf(stderr, "cuview-gui: --frames %s is not a positive number\n", qPrintable(parser.value(frames)));
    return 2;
  }
  o.timeout_s = parser.value(timeout).toInt(&ok);
  if (!ok || o.timeout_s < 1) {
    std::fprintf(stderr, "cuview-gui: --timeout %s is not a positive number\n", qPrintable(parser.value(timeout)));
    return 2;
  }
  o.colormap = parser.value(colormap);
  o.whole_window = parser.isSet(whole);

  cuview::gui::MainWindow window(o);
  QObject::connect(&window, &cuview::gui::MainWindow::finished, &app, &QApplication::exit, Qt::QueuedConnection);
  window.resize(1100, 760);
  window.show();
  return QApplication::exec();
}
