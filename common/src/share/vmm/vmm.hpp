// VMM: one cuMemCreate allocation holding every slot (slot i at i × slot_bytes), exported once
// as a POSIX file descriptor that clients receive over the descriptor socket and map themselves
// (cuMemImportFromShareableHandle, cuMemAddressReserve, cuMemMap, cuMemSetAccess). The halves
// are only built with CUDA.
#pragma once

#include "cuview/share/registry.hpp"

namespace cuview::share::vmm {

extern const Mechanism kMechanism;

#ifdef CUVIEW_HAVE_CUDA
std::optional<std::string> unsupported(int device) noexcept;
std::unique_ptr<SlotMemory> export_(const SlotLayout& layout, std::uint32_t slots, const SlotPlace& place);
std::unique_ptr<ImportedSlots> import(const ImportSource& source);
#endif

}  // namespace cuview::share::vmm
