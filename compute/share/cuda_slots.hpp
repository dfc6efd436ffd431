// What every CUDA mechanism shares: one interprocess event per slot, recorded after the slot is
// sealed and waited on before it is written again, and the device's identity for the client.
// A mechanism adds only where the slots' memory comes from and how it is exported. Handles are
// made once, on the thread that creates the slots: fill_handles (the control thread) only copies
// bytes and makes no CUDA call.
#pragma once

#include <vector>

#include "cuview/cuda_ipc.hpp"
#include "share/slot_memory.hpp"

namespace cuview {

class CudaSlots : public SlotMemory {
 public:
  std::uint32_t count() const override { return static_cast<std::uint32_t>(events_.size()); }
  void before_write(std::uint32_t i, void* stream) override;
  void written(std::uint32_t i, void* stream) override;

 protected:
  /// Creates `slots` interprocess events, each recorded once so that a client waiting on a
  /// never-written slot does not block.
  CudaSlots(Executor& executor, std::uint32_t slots);
  /// Zeroes the slots and records the events' first time, on the executor's stream; waits.
  void zero_and_record(const SlotLayout& layout);
  /// device_pci, and the events into `h.slots` (which must already hold count() entries).
  void fill_common(proto::HandlesResult& h) const;

  Executor& executor_;
  int device_;
  std::string pci_;
  std::vector<cuda::Event> events_;
  std::vector<std::vector<char>> event_handles_;  // cudaIpcEventHandle_t of each event
};

}  // namespace cuview
