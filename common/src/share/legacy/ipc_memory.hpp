// Legacy CUDA IPC's objects: the export of a cudaMalloc allocation's handle, and another
// process's allocation mapped into this one. Only built with CUDA.
#pragma once

#include <cuda_runtime_api.h>

#include "cuview/cuda/device_buffer.hpp"
#include "cuview/unique_handle.hpp"

namespace cuview::cuda {

namespace detail {
/// Drops one owner's reference to the process's mapping at `ptr`; unmaps it with the last.
int release_ipc_mapping(void* ptr) noexcept;
}  // namespace detail

/// The handle another process opens with IpcMemory (describes the whole allocation). Throws
/// Error(cuda).
cudaIpcMemHandle_t export_ipc_handle(const DeviceBuffer& buffer);

/// Another process's allocation mapped into this one (cudaIpcOpenMemHandle); unmapped when the
/// last IpcMemory of that handle in this process goes. CUDA maps a handle once per process and
/// refuses a second open (cudaErrorAlreadyMapped), so several clients of one daemon in one process
/// share the mapping through a process-wide reference count. Move-only; a moved-from IpcMemory
/// releases nothing.
class IpcMemory {
 public:
  IpcMemory() noexcept = default;
  /// Maps `handle` (or takes another reference to its mapping). Throws Error(cuda).
  explicit IpcMemory(const cudaIpcMemHandle_t& handle);
  [[nodiscard]] void* get() const noexcept { return owner_.get(); }

 private:
  UniqueHandle<PointerTraits<void*, &detail::release_ipc_mapping>> owner_;
};

}  // namespace cuview::cuda
