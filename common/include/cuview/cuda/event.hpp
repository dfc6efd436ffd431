// An owned CUDA event (NVIDIA CCCL's cuda::event), and the export and import of an interprocess
// event's handle (cuda-api-wrappers' event::ipc): every CUDA sharing mechanism has one per slot.
// Only built with CUDA (CUVIEW_HAVE_CUDA).
#pragma once

#include <cuda_runtime_api.h>

#include "cuview/cuda/event_ref.hpp"
#include "cuview/unique_handle.hpp"

namespace cuview::cuda {

/// interprocess and blocking_sync events have timing disabled; timing events can be timed.
enum class EventKind { interprocess, blocking_sync, timing };

/// A CUDA event; interprocess events are created with timing disabled, as IPC requires.
/// Move-only; a moved-from event owns nothing. Failing calls throw Error(cuda).
class Event {
 public:
  Event() noexcept = default;
  explicit Event(EventKind kind);
  /// Takes ownership of an event opened from another process's IPC handle.
  static Event from_ipc_handle(const cudaIpcEventHandle_t& handle);
  [[nodiscard]] cudaEvent_t get() const noexcept { return owner_.get(); }
  [[nodiscard]] EventRef ref() const noexcept { return owner_.get(); }
  [[nodiscard]] explicit operator bool() const noexcept { return static_cast<bool>(owner_); }
  /// The handle another process opens with from_ipc_handle (interprocess events only).
  [[nodiscard]] cudaIpcEventHandle_t ipc_handle() const;

 private:
  UniqueHandle<PointerTraits<cudaEvent_t, &cudaEventDestroy>> owner_;
};

}  // namespace cuview::cuda
