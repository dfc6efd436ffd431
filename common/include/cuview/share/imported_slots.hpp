// The import half of a sharing mechanism (a client's side): another process's slots mapped into
// this one. Each mechanism implements it in its own folder, common/src/share/<mechanism>/, beside
// its export half (slot_memory.hpp); registry.hpp picks it by the name in the `handles` reply.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
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

/// The mapped slots and every owner that keeps the mapping alive (move-only members). Destroyed
/// in the importing device's context (the owner holds a DeviceGuard around it).
class ImportedSlots {
 public:
  virtual ~ImportedSlots() = default;
  /// Slot `i`'s first byte in this process: device memory on CUDA, shared memory on the host.
  [[nodiscard]] const std::byte* slot(std::uint32_t i) const { return slots_[i]; }
  [[nodiscard]] std::uint32_t count() const noexcept { return static_cast<std::uint32_t>(slots_.size()); }

 protected:
  std::vector<const std::byte*> slots_;  // filled by the mechanism, pointing into what it owns
};

}  // namespace cuview::share
