// Commands the UI sends the daemon, queued for the worker thread. After RenderDoc's
// ReplayManager::AsyncInvoke: a command posted with a key replaces a queued command of the same
// key, so a spin box dragged through forty values while the worker is busy sends one `set`, of its
// last value, not forty.
#pragma once

#include <QString>
#include <deque>
#include <functional>

#include "cuview/client.hpp"

namespace cuview::gui {

/// One request to run with the worker's Client.
struct Command {
  QString what;  ///< for messages: "set F", "step"
  QString key;   ///< commands of one non-empty key replace each other while queued; empty: never replaced
  std::function<void(cuview::Attachment&)> run;  // steers the run (its leader)
};

/// A queue of commands, merged by key. Not locked: its owner guards it.
class CommandQueue {
 public:
  /// Appends `command`, dropping a queued command of the same non-empty key (the newest wins, in
  /// the newest's place: after what was posted between them).
  void post(Command command);
  /// Everything queued, oldest first; the queue is empty after.
  [[nodiscard]] std::deque<Command> take();
  [[nodiscard]] bool empty() const { return queued_.empty(); }
  [[nodiscard]] std::size_t size() const { return queued_.size(); }

 private:
  std::deque<Command> queued_;
};

}  // namespace cuview::gui
