// The import half of a sharing mechanism (a client's side): another process's slots mapped into
// this one. Each mechanism implements it in its own folder, common/src/share/<mechanism>/, beside
// its export half (slot_memory.hpp); registry.hpp picks it by the name in the `handles` reply.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "cuview/posix.hpp"
#include "cuview/protocol.hpp"

namespace cuview::share {

/// What an import works from: the publisher's `handles` reply, the slot size its description
/// states, and, for mechanisms that need them, its descriptors.
struct ImportSource {
  const proto::HandlesResult& handles;
  std::size_t slot_bytes = 0;
  /// CUDA: the publisher's GPU as this process numbers it; every CUDA call of the import runs in
  /// its primary context (the caller holds a DeviceGuard of it). Host: -1.
  int device = -1;
  /// The publisher in words ("daemon 'wave' (pid 42)"), for messages.
  std::string who;
  /// Fetches the descriptors of `handles` from the publisher (its descriptor socket); only the
  /// mechanisms that travel as descriptors call it, once.
  std::function<std::vector<UniqueFd>()> fetch_fds;
};

/// The slots and every owner that keeps their mapping alive (move-only members), mapped on
/// demand: a slot is mapped the first time it is asked for, so a client that takes one frame maps
/// one slot, not the ring. Mechanisms whose memory maps only as a whole (vmm, shm) map every slot
/// at the first. Destroyed in the importing device's context (the owner holds a DeviceGuard around
/// it). Thread-safe.
class ImportedSlots {
 public:
  virtual ~ImportedSlots() = default;
  /// Slot `i`'s first byte in this process (device memory on CUDA, shared memory on the host),
  /// mapped now if it was not yet. Throws Error: the slot number is outside the ring, or the
  /// mechanism cannot map it (its publisher gone, a stale handle).
  [[nodiscard]] const std::byte* slot(std::uint32_t i);
  [[nodiscard]] std::uint32_t count() const noexcept { return static_cast<std::uint32_t>(slots_.size()); }
  /// How many slots are mapped so far.
  [[nodiscard]] std::uint32_t mapped() const;

 protected:
  explicit ImportedSlots(std::uint32_t count) : slots_(count, nullptr) {}
  /// Maps slot `i` into slots_[i] (or every slot, for a mechanism that maps the ring as one);
  /// called under the lock, only while slots_[i] is null.
  virtual void map(std::uint32_t i) = 0;

  std::vector<const std::byte*> slots_;  // null until mapped; pointing into what the mechanism owns

 private:
  mutable std::mutex mutex_;
};

}  // namespace cuview::share
