#include "application.hpp"

#include <QGuiApplication>
#include <QScreen>
#include <QWidget>
#include <QWindow>

#include <cstdlib>

#ifdef CUVIEW_HAVE_XCB
#include <xcb/xcb.h>
#endif

// Resources compiled into a static library need an explicit reference, or the linker drops them.
static void init_resources() { Q_INIT_RESOURCE(cuview); }

namespace cuview::gui {

namespace {
QtMessageHandler g_default_handler = nullptr;
void filter_messages(QtMsgType type, const QMessageLogContext& context, const QString& message) {
  if (message.contains("does not support propagateSizeHints")) return;
  g_default_handler(type, context, message);
}
}  // namespace

void quiet_platform_noise() { g_default_handler = qInstallMessageHandler(filter_messages); }

std::string chosen_platform(const std::vector<std::string>& qt_args) {
  for (std::size_t i = 0; i + 1 < qt_args.size(); ++i)
    if (qt_args[i] == "-platform") return qt_args[i + 1];
  const char* env = std::getenv("QT_QPA_PLATFORM");
  return env != nullptr ? env : "";
}

DisplayCheck check_display(const std::string& platform) {
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  if (!platform.empty() && platform.rfind("xcb", 0) != 0) return {};  // offscreen, wayland, ...
  if (platform.empty() && wayland != nullptr && *wayland != '\0') return {};
  const char* display = std::getenv("DISPLAY");
  const std::string what =
      "; run it in a desktop session or over `ssh -X`, or save a picture headless: cuview-gui --name NAME "
      "--screenshot view.png";
  if (display == nullptr || *display == '\0')
    return {"cuview-gui cannot open a window: no display (DISPLAY is " + std::string(display ? "empty" : "not set") +
                ")" + what,
            nullptr};
#ifdef CUVIEW_HAVE_XCB
  std::shared_ptr<xcb_connection_t> c(xcb_connect(nullptr, nullptr), xcb_disconnect);
  if (xcb_connection_has_error(c.get()) != 0)
    return {"cuview-gui cannot open a window: no X server answers at DISPLAY=" + std::string(display) +
                " (or it refused this user; an ssh session whose X forwarding ended looks the same)" + what,
            nullptr};
  return {std::nullopt, std::move(c)};
#else
  return {};
#endif
}

QIcon application_icon() {
  init_resources();
  QIcon icon;
  for (int size : {16, 24, 32, 48, 64, 128, 256}) icon.addFile(QString(":/cuview/icons/cuview-%1.png").arg(size));
  return icon;
}

QImage grab_pixels(QWidget* widget) {
  // On a real display, what the window system shows (the X server's pixels of this window);
  // offscreen there is no such thing, and the widget renders itself.
  QWindow* window = widget->window()->windowHandle();
  if (QGuiApplication::platformName() == "offscreen" || window == nullptr || !window->isExposed())
    return widget->grab().toImage();
  const QPoint at = widget->mapTo(widget->window(), QPoint(0, 0));
  return window->screen()->grabWindow(window->winId(), at.x(), at.y(), widget->width(), widget->height()).toImage();
}

}  // namespace cuview::gui
