// Writes a simulation's current state into a ring slot as one frame: every field at its offset
// in the slot layout, then the seal (checksum, sequence, step, completion time), all queued in
// order on the executor. Shared by the publisher and cuview-bench.
#pragma once

#include <cstdint>
#include <vector>

#include "cuview/frame_layout.hpp"
#include "executor/executor.hpp"
#include "sims/simulation.hpp"

namespace cuview {

/// Bytes of every block a frame holds, in slot order: each field on the width × height grid, then
/// each attribute of each particle set (before rounding up to words).
[[nodiscard]] std::vector<std::size_t> block_bytes(const std::vector<sim::FieldSpec>& fields,
                                                   const std::vector<sim::ParticleSetSpec>& particles,
                                                   std::uint32_t width, std::uint32_t height);

class FrameWriter {
 public:
  FrameWriter(Executor& executor, sim::Simulation& simulation, std::uint32_t width, std::uint32_t height);
  [[nodiscard]] const SlotLayout& layout() const { return layout_; }
  /// Queues the fields' copy and the seal into `slot` (host or device memory, per the executor).
  void write(void* slot, std::uint64_t seq, std::uint64_t step);

 private:
  Executor& executor_;
  sim::Simulation& simulation_;
  SlotLayout layout_;
  std::vector<std::size_t> bytes_;  // each block's own bytes
  std::vector<sim::FieldTarget> targets_;
};

}  // namespace cuview
