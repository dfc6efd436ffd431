// How ring slots cross processes: the memory the frames are written into and what a client
// needs to map it. POSIX shared memory on the host; on CUDA one of three mechanisms (legacy IPC,
// VMM file descriptors, IPC memory pools), each with one interprocess event per slot. The frame
// ring (cuview/ring.hpp), its leases and notification know nothing of the mechanism; adding one is
// a file in this folder and a line in make_slot_memory.
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
  /// "shm", "legacy", "vmm" or "pool", as the `handles` reply and `stats` name it.
  [[nodiscard]] virtual const char* mechanism() const = 0;
  /// The mechanism's part of a `handles` reply (the slots, and what the descriptors mean).
  virtual void fill_handles(proto::HandlesResult& h) const = 0;
  /// Descriptors a client needs (sent over the descriptor socket), owned by this object.
  [[nodiscard]] virtual std::vector<int> fds() const { return {}; }
  /// Named shared-memory segments it created (cleaned up after a crash).
  [[nodiscard]] virtual std::vector<std::string> segments() const { return {}; }
};

/// The mechanisms, as `--sharing` and the `handles` reply name them. "auto" picks legacy on CUDA
/// and shm on the host.
inline constexpr const char* kSharingChoices[] = {"auto", "legacy", "vmm", "pool"};

/// Throws what make_slot_memory would for `sharing` on `executor`, without allocating anything.
void check_sharing(const Executor& executor, const std::string& sharing, const std::string& who);

/// Slots for `executor` shared by `sharing` ("auto", "legacy", "vmm" or "pool"). Throws
/// Error(unsupported) naming the mechanism, why it does not apply here and the alternatives;
/// Error(bad_value) for a name that is none of these. `who` names the publisher in messages.
std::unique_ptr<SlotMemory> make_slot_memory(Executor& executor, const SlotLayout& layout, std::uint32_t slots,
                                             const std::string& sharing, const std::string& who);

/// One POSIX shared-memory segment holding every slot (host executor).
std::unique_ptr<SlotMemory> make_shared_memory_slots(const SlotLayout& layout, std::uint32_t slots);
#ifdef CUVIEW_HAVE_CUDA
/// cudaMalloc per slot, exported with cudaIpcGetMemHandle.
std::unique_ptr<SlotMemory> make_cuda_ipc_slots(Executor& executor, const SlotLayout& layout, std::uint32_t slots);
/// One cuMemCreate allocation holding every slot, exported as one POSIX file descriptor.
std::unique_ptr<SlotMemory> make_cuda_vmm_slots(Executor& executor, const SlotLayout& layout, std::uint32_t slots);
/// An IPC-enabled memory pool (exported as one POSIX file descriptor), one allocation per slot.
std::unique_ptr<SlotMemory> make_cuda_pool_slots(Executor& executor, const SlotLayout& layout, std::uint32_t slots);
#endif

}  // namespace cuview
