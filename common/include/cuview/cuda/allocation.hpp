// What the owners of CUDA allocations (DeviceBuffer, PinnedBuffer) hold: where and how large.
// Only built with CUDA (CUVIEW_HAVE_CUDA).
#pragma once

#include <cstddef>

namespace cuview::cuda::detail {

struct Allocation {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  // Written out, not defaulted: .cu files are compiled as C++17.
  friend constexpr bool operator==(const Allocation& a, const Allocation& b) noexcept {
    return a.ptr == b.ptr && a.bytes == b.bytes;
  }
};

// How each kind is freed (cudaFree, cudaFreeHost), errors ignored: a destructor cannot report them.
void free_device(void* ptr) noexcept;
void free_pinned(void* ptr) noexcept;

/// UniqueHandle traits of an allocation freed by `Free` (its status ignored: a destructor cannot
/// report it).
template <auto Free>
struct AllocationTraits {
  using handle_type = Allocation;
  static constexpr Allocation null() noexcept { return {}; }
  static void close(const Allocation& a) noexcept { (void)Free(a.ptr); }
};

}  // namespace cuview::cuda::detail
