// Legacy CUDA IPC: one cudaMalloc per slot (cudaIpcGetMemHandle describes a whole allocation);
// each slot's 64-byte handle travels in `handles`, a client opens it with cudaIpcOpenMemHandle.
// The halves are only built with CUDA.
#pragma once

#include "cuview/share/registry.hpp"

namespace cuview::share::legacy {

extern const Mechanism kMechanism;

#ifdef CUVIEW_HAVE_CUDA
std::optional<std::string> unsupported(int device) noexcept;
std::unique_ptr<SlotMemory> export_(const SlotLayout& layout, std::uint32_t slots, const SlotPlace& place);
std::unique_ptr<ImportedSlots> import(const ImportSource& source);
#endif

}  // namespace cuview::share::legacy
