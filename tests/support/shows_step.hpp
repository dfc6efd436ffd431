// Waiting for what a person watching a run sees: a frame of a given step.
#pragma once

#include <chrono>
#include <cstdint>

namespace cuview::test {

/// Takes frames from `source` (a local Attachment or a RemoteClient: anything with
/// `next_frame(timeout)`) until one of step `step` arrives, as a person watching the run sees it;
/// false when none has after a minute (far longer than any loaded machine needs: a failure guard).
template <class Source>
bool shows_step(Source& source, std::uint64_t step) {
  using namespace std::chrono_literals;
  const auto until = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < until)
    if (const auto f = source.next_frame(1s); f && f->info().step == step) return true;
  return false;
}

}  // namespace cuview::test
