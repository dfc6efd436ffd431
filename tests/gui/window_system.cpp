#include "window_system.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

namespace cuview::test {
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {
/// The program's full path from PATH (posix_spawn does not search), or empty.
std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path p = fs::path(dir) / name;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return {};
}

/// Runs an X tool to completion; its output, or a failure naming the command and what it said.
std::string run_tool(const std::string& tool, const std::vector<std::string>& args) {
  const std::string program = find_program(tool);
  if (program.empty()) fail(tool + " is not installed (scripts/install-deps.sh installs it)");
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildProcess p(argv);
  const auto code = p.wait_for(20s);
  if (code != 0) {
    std::string command = tool;
    for (const auto& a : args) command += " " + a;
    fail(command + (code ? " failed (exit " + std::to_string(*code) + "): " : " did not finish in 20 s: ") + p.err());
  }
  return p.out();
}

std::string xdotool(const std::vector<std::string>& args) { return run_tool("xdotool", args); }
}  // namespace

std::unique_ptr<XServer> XServer::start(std::string* why) {
  const std::string xvfb = find_program("Xvfb");
  if (xvfb.empty()) {
    *why = "Xvfb is not installed (Debian package xvfb; scripts/install-deps.sh installs it)";
    return nullptr;
  }
  int fds[2];
  if (::pipe(fds) != 0) {
    *why = "pipe() failed";
    return nullptr;
  }
  // -displayfd: the server picks a free display number and writes it to the pipe once it accepts
  // clients, so parallel test runs never collide and no sleep is needed.
  ChildProcess process(
      {xvfb, "-displayfd", std::to_string(fds[1]), "-screen", "0", "1600x1000x24", "-nolisten", "tcp", "-noreset"},
      fds[1]);
  ::close(fds[1]);
  std::string number;
  pollfd p{fds[0], POLLIN, 0};
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (number.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[32];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    number.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  while (!number.empty() && (number.back() == '\n' || number.back() == ' ')) number.pop_back();
  if (number.empty()) {
    *why = "Xvfb did not start: " + process.err();
    return nullptr;
  }
  const std::string display = ":" + number;
  ::setenv("DISPLAY", display.c_str(), 1);
  ::unsetenv("WAYLAND_DISPLAY");
  return std::unique_ptr<XServer>(new XServer(std::move(process), display));
}

XServer::~XServer() {
  process_.signal(SIGTERM);
  if (!process_.wait_for(5s)) process_.signal(SIGKILL);
}

bool have_window_tools(std::string* why) {
  for (const char* tool : {"Xvfb", "xdotool", "xprop"}) {
    if (find_program(tool).empty()) {
      *why = std::string(tool) + " is not installed (scripts/install-deps.sh installs xvfb, xdotool and x11-utils)";
      return false;
    }
  }
  return true;
}

namespace x11 {
void click(QPoint global, int count, Button button) {
  xdotool({"mousemove", "--sync", std::to_string(global.x()), std::to_string(global.y()), "click", "--repeat",
           std::to_string(count), "--delay", "60", std::to_string(static_cast<int>(button))});
}

void click_with(const std::string& modifier, QPoint global, Button button) {
  xdotool({"mousemove", "--sync", std::to_string(global.x()), std::to_string(global.y()), "keydown", modifier, "click",
           std::to_string(static_cast<int>(button)), "keyup", modifier});
}

void drag(QPoint from, QPoint to, Button button, int steps) {
  std::vector<std::string> args{"mousemove", "--sync", std::to_string(from.x()), std::to_string(from.y()), "mousedown",
                                std::to_string(static_cast<int>(button))};
  for (int k = 1; k <= steps; ++k) {
    const QPoint at = from + (to - from) * k / steps;
    args.insert(args.end(), {"sleep", "0.02", "mousemove", "--sync", std::to_string(at.x()), std::to_string(at.y())});
  }
  args.insert(args.end(), {"sleep", "0.05", "mouseup", std::to_string(static_cast<int>(button))});
  xdotool(args);
}

void move(QPoint global) { xdotool({"mousemove", "--sync", std::to_string(global.x()), std::to_string(global.y())}); }

void focus(unsigned long window) { xdotool({"windowfocus", "--sync", std::to_string(window)}); }

void key(const std::string& combo) { xdotool({"key", "--delay", "40", combo}); }

void type(const std::string& text) { xdotool({"type", "--delay", "30", text}); }

std::optional<unsigned long> window_of(pid_t pid, int timeout_ms) {
  static const std::string program = find_program("xdotool");
  // --sync waits for the window to be mapped; the child is killed if it never is.
  ChildProcess p({program, "search", "--sync", "--onlyvisible", "--pid", std::to_string(pid)});
  if (p.wait_for(std::chrono::milliseconds(timeout_ms)) != 0) return std::nullopt;
  std::stringstream out(p.out());
  unsigned long window = 0;
  if (out >> window) return window;
  return std::nullopt;
}

std::string window_name(unsigned long window) {
  std::string name = xdotool({"getwindowname", std::to_string(window)});
  while (!name.empty() && name.back() == '\n') name.pop_back();
  return name;
}
std::string property(unsigned long window, const std::string& name) {
  return run_tool("xprop", {"-id", std::to_string(window), name});
}
}  // namespace x11

}  // namespace cuview::test
