// IPC memory pools: a pool created with POSIX-fd handles (cudaMemPoolCreate), one allocation per
// slot from it. The pool travels as one descriptor over the descriptor socket, each slot as a
// 64-byte export record in `handles`; a client imports the pool, then each pointer
// (cudaMemPoolImportFromShareableHandle, cudaMemPoolImportPointer). The halves are only built
// with CUDA.
#pragma once

#include "cuview/share/registry.hpp"

namespace cuview::share::pool {

extern const Mechanism kMechanism;

#ifdef CUVIEW_HAVE_CUDA
std::optional<std::string> unsupported(int device) noexcept;
std::unique_ptr<SlotMemory> export_(const SlotLayout& layout, std::uint32_t slots, const SlotPlace& place);
std::unique_ptr<ImportedSlots> import(const ImportSource& source);
#endif

}  // namespace cuview::share::pool
