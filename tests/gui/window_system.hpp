// A private X server for the viewer's real-window tests, and real input delivered through it.
// Input goes through the X server (xdotool, i.e. the XTEST extension), so Qt receives it exactly as
// it receives a person's mouse and keyboard: xcb events, focus, grabs, popup menus and all.
#pragma once

#include <QPoint>
#include <memory>
#include <optional>
#include <string>

#include "process.hpp"

namespace cuview::test {

/// Xvfb on a display number the server picks (-displayfd), exported as DISPLAY for this process
/// and its children while it lives.
class XServer {
 public:
  /// Starts one, or returns null and says why (no Xvfb installed, it failed to start).
  static std::unique_ptr<XServer> start(std::string* why);
  XServer(const XServer&) = delete;
  XServer& operator=(const XServer&) = delete;
  ~XServer();  ///< stops the server (SIGTERM, so it removes its socket and lock file)
  [[nodiscard]] const std::string& display() const { return display_; }

 private:
  XServer(ChildProcess process, std::string display) : process_(std::move(process)), display_(std::move(display)) {}
  ChildProcess process_;
  std::string display_;
};

/// Whether the tools the real-window tests drive the window with are here; `why` says what is missing.
bool have_window_tools(std::string* why);

/// Real input through the X server. Each call returns once the X server has it; the caller then
/// runs its event loop (or waits on the other process) to see the effect. Failures throw with the
/// xdotool command and its output.
namespace x11 {
enum class Button { left = 1, middle = 2, right = 3, wheel_up = 4, wheel_down = 5 };
/// Moves the pointer to `global` (screen pixels) and clicks `count` times (2: a double-click).
void click(QPoint global, int count = 1, Button button = Button::left);
/// As click(), with `modifier` ("shift", "ctrl") held down.
void click_with(const std::string& modifier, QPoint global, Button button);
/// Gives `window` the keyboard focus (XSetInputFocus; no window manager runs here).
/// Presses `button` at `from`, moves to `to` in `steps` motions, releases it there.
void drag(QPoint from, QPoint to, Button button = Button::left, int steps = 10);
/// Moves the pointer to `global`.
void move(QPoint global);
void focus(unsigned long window);
/// Presses and releases a key combination in xdotool's words: "ctrl+q", "alt+d", "Return".
void key(const std::string& combo);
/// Types text as key presses.
void type(const std::string& text);
/// The visible top-level window of process `pid`, waiting up to `timeout_ms` for it to be mapped.
std::optional<unsigned long> window_of(pid_t pid, int timeout_ms = 20000);
/// A window's title.
std::string window_name(unsigned long window);
/// A window property as xprop prints it ("WM_CLASS(STRING) = ...").
std::string property(unsigned long window, const std::string& name);
}  // namespace x11

}  // namespace cuview::test
