#include "worker/command_queue.hpp"

#include <algorithm>
#include <utility>

namespace cuview::gui {

void CommandQueue::post(Command command) {
  if (!command.key.isEmpty()) std::erase_if(queued_, [&](const Command& queued) { return queued.key == command.key; });
  queued_.push_back(std::move(command));
}

std::deque<Command> CommandQueue::take() { return std::exchange(queued_, {}); }

}  // namespace cuview::gui
