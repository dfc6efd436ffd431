#include "application.hpp"

#include <QGuiApplication>
#include <QScreen>
#include <QWidget>
#include <QWindow>

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
