// Device memory from cudaMalloc, with an owner. Only built with CUDA (CUVIEW_HAVE_CUDA).
#pragma once

#include <cstddef>

#include "cuview/cuda/allocation.hpp"
#include "cuview/unique_handle.hpp"

namespace cuview::cuda {

/// `bytes` of device memory on the current device, freed with cudaFree (its error ignored: a
/// destructor cannot report it). Move-only; a moved-from buffer frees nothing. Throws Error(cuda)
/// naming the size.
class DeviceBuffer {
 public:
  DeviceBuffer() noexcept = default;
  explicit DeviceBuffer(std::size_t bytes);
  [[nodiscard]] void* get() const noexcept { return owner_.get().ptr; }
  [[nodiscard]] std::size_t size() const noexcept { return owner_.get().bytes; }

 private:
  UniqueHandle<detail::AllocationTraits<&detail::free_device>> owner_;
};

}  // namespace cuview::cuda
