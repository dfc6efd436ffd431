// How ring slots cross processes: the memory the frames are written into and what a client
// needs to map it. POSIX shared memory on the host; legacy CUDA IPC (one cudaMalloc and one
// interprocess event per slot) on CUDA. The frame ring (cuview/ring.hpp), its leases and
// notification know nothing of the mechanism.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuview/frame_layout.hpp"
#include "cuview/protocol.hpp"
#include "executor/executor.hpp"

namespace cuview {

class SlotMemory {
 public:
  virtual ~SlotMemory() = default;
  [[nodiscard]] virtual std::uint32_t count() const = 0;
  /// Slot `i`'s first byte: host memory, or device memory on the executor's device. Zeroed at
  /// creation (field padding stays zero: the checksum reads it).
  [[nodiscard]] virtual void* slot(std::uint32_t i) const = 0;
  /// Before slot `i` is written on `stream` (a cudaStream_t): CUDA orders the write after the
  /// slot's previous one, which may have been queued on another stream. Never blocks the host.
  virtual void before_write(std::uint32_t i, void* stream) = 0;
  /// After slot `i` was written and sealed on `stream`: CUDA records its interprocess event there.
  virtual void written(std::uint32_t i, void* stream) = 0;
  /// The mechanism's part of a `handles` reply.
  virtual void fill_handles(proto::HandlesResult& h) const = 0;
  /// Named shared-memory segments it created (cleaned up after a crash).
  [[nodiscard]] virtual std::vector<std::string> segments() const { return {}; }
};

/// One POSIX shared-memory segment holding every slot (host executor).
std::unique_ptr<SlotMemory> make_shared_memory_slots(const SlotLayout& layout, std::uint32_t slots);
#ifdef CUVIEW_HAVE_CUDA
/// cudaMalloc per slot, exported with cudaIpcGetMemHandle, and an interprocess event per slot.
std::unique_ptr<SlotMemory> make_cuda_ipc_slots(Executor& executor, const SlotLayout& layout, std::uint32_t slots);
#endif

}  // namespace cuview
