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

/// The slot layout of these fields on a width × height grid: each field's bytes rounded up to
/// whole 32-bit words (the checksum's unit) and aligned to 256 bytes, then the trailer.
[[nodiscard]] SlotLayout layout_for(const std::vector<sim::FieldSpec>& fields, std::uint32_t width,
                                    std::uint32_t height);

/// Bytes of one field's values on the grid (before rounding up to words).
[[nodiscard]] std::size_t field_bytes(const sim::FieldSpec& field, std::uint32_t width, std::uint32_t height);

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
  std::vector<std::size_t> bytes_;  // each field's own bytes
  std::vector<sim::FieldTarget> targets_;
};

}  // namespace cuview
