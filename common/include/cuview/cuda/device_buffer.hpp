// Device memory from cudaMalloc, with an owner. Only built with CUDA (CUVIEW_HAVE_CUDA).
#pragma once

#include <cstddef>

#include "cuview/unique_handle.hpp"

namespace cuview::cuda {

namespace detail {
struct DeviceBufferTraits {
  struct handle_type {
    void* ptr = nullptr;
    std::size_t bytes = 0;
    friend constexpr bool operator==(const handle_type& a, const handle_type& b) noexcept {
      return a.ptr == b.ptr && a.bytes == b.bytes;  // not defaulted: .cu files are C++17
    }
  };
  static constexpr handle_type null() noexcept { return {}; }
  static void close(const handle_type& h) noexcept;  // cudaFree, its error ignored
};
}  // namespace detail

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
  UniqueHandle<detail::DeviceBufferTraits> owner_;
};

}  // namespace cuview::cuda
