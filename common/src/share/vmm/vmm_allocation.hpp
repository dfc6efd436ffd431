// VMM's object: device memory made with cuMemCreate and mapped into this process, or imported
// from another process's exported descriptor and mapped. The driver-API calls are reached through
// cudaGetDriverEntryPointByVersion, so the programs still load on machines without a driver.
// Only built with CUDA.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "cuview/posix.hpp"
#include "cuview/unique_handle.hpp"

namespace cuview::cuda {

namespace detail {
struct VmmTraits {
  struct handle_type {
    unsigned long long handle = 0;  // CUmemGenericAllocationHandle
    unsigned long long ptr = 0;     // CUdeviceptr of the mapping; 0 while unmapped
    std::size_t bytes = 0;
    int device = 0;
    friend bool operator==(const handle_type&, const handle_type&) = default;
  };
  static constexpr handle_type null() noexcept { return {}; }
  /// Unmaps, frees the address range and releases the allocation, in `device`'s context.
  static void close(const handle_type& h) noexcept;
};
}  // namespace detail

/// A mapped VMM allocation. Unmapped and released when the owner goes; move-only, a moved-from
/// allocation releases nothing. Throws Error(cuda) naming the call, Error(unsupported) where the
/// driver lacks the calls.
class VmmAllocation {
 public:
  VmmAllocation() noexcept = default;
  /// At least `bytes` on `device`, rounded up to the allocation granularity, exportable as a
  /// POSIX file descriptor.
  static VmmAllocation create(int device, std::size_t bytes);
  /// Maps the allocation behind `fd` (from export_fd() of another process) of `bytes` on `device`.
  static VmmAllocation import(int fd, std::size_t bytes, int device);
  [[nodiscard]] void* get() const noexcept { return reinterpret_cast<void*>(owner_.get().ptr); }
  [[nodiscard]] std::size_t size() const noexcept { return owner_.get().bytes; }
  /// A new descriptor for the allocation (the caller owns it).
  [[nodiscard]] UniqueFd export_fd() const;

 private:
  /// Maps the allocation `owner_` holds into a new address range of this process.
  void map();
  UniqueHandle<detail::VmmTraits> owner_;
};

/// Why VMM cannot share memory of `device` here, or nothing. Throws Error(cuda).
std::optional<std::string> vmm_unsupported(int device);

}  // namespace cuview::cuda
