// The export half of a sharing mechanism (the publisher's side): the memory frames are written
// into, and what a client needs to map it. Each mechanism implements it in its own folder,
// common/src/share/<mechanism>/, beside its import half (imported_slots.hpp); registry.hpp makes
// one by name. The frame ring (cuview/ring.hpp), its leases and notification know nothing of the
// mechanism.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuview/cuda/stream_ref.hpp"
#include "cuview/protocol.hpp"

namespace cuview::share {

/// Where the slots are made: the host, or one CUDA device and the stream they are first zeroed
/// on (the publisher's executor's). Every CUDA call of an export runs under a DeviceGuard of
/// `device`, so the caller's current device is never moved.
struct SlotPlace {
  int device = -1;           ///< CUDA device ordinal; -1: the host backend
  cuda::StreamRef stream{};  ///< CUDA: must outlive the SlotMemory made on it
  [[nodiscard]] bool on_host() const noexcept { return device < 0; }
};

/// Slots made by one mechanism, owned through a unique_ptr. Made and written on the program's
/// thread; fill_handles, fds and segments are called from the publisher's control thread and make
/// no CUDA call (handles are made once, at creation).
class SlotMemory {
 public:
  virtual ~SlotMemory() = default;
  [[nodiscard]] virtual std::uint32_t count() const = 0;
  /// Slot `i`'s first byte: host memory, or device memory on the SlotPlace's device. Zeroed at
  /// creation (field padding stays zero: the checksum reads it).
  [[nodiscard]] virtual void* slot(std::uint32_t i) const = 0;
  /// Before slot `i` is written on `stream`: CUDA orders the write after the slot's previous one,
  /// which may have been queued on another stream. Never blocks the host.
  virtual void before_write(std::uint32_t i, cuda::StreamRef stream) = 0;
  /// After slot `i` was written and sealed on `stream`: CUDA records its interprocess event there.
  virtual void written(std::uint32_t i, cuda::StreamRef stream) = 0;
  /// Its name in the registry, as the `handles` reply and `stats` give it ("shm", "legacy", ...).
  [[nodiscard]] virtual const char* mechanism() const = 0;
  /// The mechanism's part of a `handles` reply (the slots, and what the descriptors mean).
  virtual void fill_handles(proto::HandlesResult& h) const = 0;
  /// Descriptors a client needs (sent over the descriptor socket), owned by this object.
  [[nodiscard]] virtual std::vector<int> fds() const { return {}; }
  /// Named shared-memory segments it created (cleaned up after a crash).
  [[nodiscard]] virtual std::vector<std::string> segments() const { return {}; }
};

}  // namespace cuview::share
