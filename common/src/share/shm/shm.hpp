// POSIX shared memory, the host backend's mechanism: one segment holding every slot (slot i at
// i × slot_bytes). Its name travels in `handles`; a client maps it read-only. A frame is complete
// before the ring publishes it, so no event is needed: the ring's publish counter is the signal.
#pragma once

#include "cuview/share/registry.hpp"

namespace cuview::share::shm {

extern const Mechanism kMechanism;

std::unique_ptr<SlotMemory> export_(const SlotLayout& layout, std::uint32_t slots, const SlotPlace& place);
std::unique_ptr<ImportedSlots> import(const ImportSource& source);

}  // namespace cuview::share::shm
