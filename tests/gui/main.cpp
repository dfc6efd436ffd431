// Runs the viewer's tests on Qt's offscreen platform, with settings in a scratch folder.
#define CATCH_CONFIG_RUNNER
#include <QApplication>
#include <QDir>
#include <catch2/catch.hpp>
#include <cstdlib>

#include "main_window.hpp"
#include "process.hpp"

int main(int argc, char** argv) {
  if (auto skip = cuview::test::skip_without_gpu(argc, argv)) return *skip;
  setenv("QT_QPA_PLATFORM", "offscreen", 0);
  const QString config = QDir::temp().filePath(QString("cuview-gui-test-config-%1").arg(getpid()));
  setenv("XDG_CONFIG_HOME", config.toLocal8Bit().constData(), 1);  // never touch the user's settings
  cuview::gui::quiet_platform_noise();
  QApplication app(argc, argv);
  QApplication::setOrganizationName("cuview");
  QApplication::setApplicationName("cuview-gui-tests");
  const int rc = Catch::Session().run(argc, argv);
  QDir(config).removeRecursively();
  return rc;
}
