// Page-locked host memory (cudaHostAlloc): what the copy engine reads from and writes to at full
// speed without a staging copy. Only built with CUDA (CUVIEW_HAVE_CUDA).
#pragma once

#include <cstddef>

#include "cuview/unique_handle.hpp"

namespace cuview::cuda {

namespace detail {
struct PinnedTraits {
  struct handle_type {
    void* ptr = nullptr;
    std::size_t bytes = 0;
    friend bool operator==(const handle_type&, const handle_type&) = default;
  };
  static constexpr handle_type null() noexcept { return {}; }
  static void close(const handle_type& h) noexcept;  // cudaFreeHost, its error ignored
};
}  // namespace detail

/// `bytes` of pinned host memory, freed with cudaFreeHost when the owner goes. Move-only; a
/// moved-from buffer is empty and frees nothing. Allocation throws Error(cuda) naming the size.
class PinnedBuffer {
 public:
  PinnedBuffer() noexcept = default;
  /// Allocates `bytes` (0: an empty buffer). `what` says what it is for, in the error message.
  explicit PinnedBuffer(std::size_t bytes, const char* what = "pinned host memory");

  [[nodiscard]] std::byte* data() const noexcept { return static_cast<std::byte*>(owner_.get().ptr); }
  [[nodiscard]] std::size_t size() const noexcept { return owner_.get().bytes; }
  [[nodiscard]] bool empty() const noexcept { return !owner_; }
  /// `count` values of T at the start of the buffer (callers check size()).
  template <class T>
  [[nodiscard]] T* as() const noexcept {
    return reinterpret_cast<T*>(data());
  }

 private:
  UniqueHandle<detail::PinnedTraits> owner_;
};

}  // namespace cuview::cuda
