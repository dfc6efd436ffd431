// Runs the viewer's tests, with settings in a scratch folder. Two platforms:
// - the tests tagged [window] (hidden unless asked for by that tag) run in real windows on a
//   private X server (Xvfb, Qt's xcb platform) and are driven with real input through it; where
//   Xvfb or xdotool is missing they are reported as skipped (exit 77), never as passed;
// - every other test runs on Qt's offscreen platform.
#include <QApplication>
#include <QDir>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "catch_runner.hpp"
#include "main_window.hpp"
#include "process.hpp"
#include "window_system.hpp"

int main(int argc, char** argv) {
  if (auto skip = cuview::test::skip_without_gpu(argc, argv)) return *skip;
  bool wants_window = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    wants_window |= a.find("[window]") != std::string::npos && a.find("~[window]") == std::string::npos;
  }
  std::unique_ptr<cuview::test::XServer> x_server;
  if (wants_window) {
    std::string why;
    if (!cuview::test::have_window_tools(&why) || !(x_server = cuview::test::XServer::start(&why))) {
      std::printf("SKIPPED: the [window] tests need a private X server and real input: %s\n", why.c_str());
      return 77;
    }
    std::printf("real windows on Xvfb %s (platform xcb)\n", x_server->display().c_str());
    setenv("QT_QPA_PLATFORM", "xcb", 1);
  } else {
    setenv("QT_QPA_PLATFORM", "offscreen", 0);
  }
  const QString config = QDir::temp().filePath(QString("cuview-gui-test-config-%1").arg(getpid()));
  setenv("XDG_CONFIG_HOME", config.toLocal8Bit().constData(), 1);  // never touch the user's settings
  cuview::gui::quiet_platform_noise();
  int rc = 0;
  {
    QApplication app(argc, argv);
    QApplication::setOrganizationName("cuview");
    QApplication::setApplicationName("cuview-gui-tests");
    // Viewers the tests start choose their platform as a user's would (xcb, from DISPLAY).
    if (wants_window) unsetenv("QT_QPA_PLATFORM");
    rc = cuview::test::run_catch(argc, argv);
  }
  QDir(config).removeRecursively();
  return rc;
}
