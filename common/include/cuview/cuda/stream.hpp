// An owned CUDA stream (NVIDIA CCCL's cuda::stream); interfaces take its StreamRef. Only built
// with CUDA (CUVIEW_HAVE_CUDA).
#pragma once

#include <cuda_runtime_api.h>

#include "cuview/cuda/stream_ref.hpp"
#include "cuview/unique_handle.hpp"

namespace cuview::cuda {

/// A non-blocking stream (does not synchronise with the legacy default stream), destroyed with
/// its owner (work queued on it still completes). Move-only; a moved-from stream owns nothing.
class Stream {
 public:
  /// `lowest`: the device's lowest priority, whose blocks wait while other streams' are ready
  /// (what the publisher's pictures run on, beside the simulation).
  enum class Priority { normal, lowest };
  Stream() noexcept = default;
  /// Creates one on the current context. Throws Error(cuda).
  static Stream create(Priority priority = Priority::normal);
  [[nodiscard]] cudaStream_t get() const noexcept { return owner_.get(); }
  [[nodiscard]] StreamRef ref() const noexcept { return owner_.get(); }
  [[nodiscard]] explicit operator bool() const noexcept { return static_cast<bool>(owner_); }

 private:
  UniqueHandle<PointerTraits<cudaStream_t, &cudaStreamDestroy>> owner_;
};

}  // namespace cuview::cuda
