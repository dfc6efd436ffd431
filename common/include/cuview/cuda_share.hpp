// The two CUDA sharing mechanisms that travel as file descriptors: virtual-memory-management
// allocations (cuMemCreate, exported as a POSIX fd) and IPC-enabled memory pools
// (cudaMemPoolCreate with POSIX-fd handles, plus one export record per pointer). Legacy IPC is in
// cuda_ipc.hpp. Driver-API calls are reached through cudaGetDriverEntryPointByVersion, so the
// programs still load on machines without a driver. Only built with CUDA (CUVIEW_HAVE_CUDA).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cuview/posix.hpp"

namespace cuview::cuda {

/// Why `mechanism` ("legacy", "vmm" or "pool") cannot share memory of `device` here — a sentence
/// naming the missing capability — or nothing when it can. Never throws.
std::optional<std::string> sharing_unsupported(const std::string& mechanism, int device) noexcept;

/// Device memory made with cuMemCreate and mapped into this process, or imported from another
/// process's exported descriptor and mapped. Unmapped and released on destruction.
class VmmAllocation {
 public:
  VmmAllocation() noexcept = default;
  /// At least `bytes` on `device`, rounded up to the allocation granularity, exportable as a
  /// POSIX file descriptor. Throws Error(cuda) or Error(unsupported).
  static VmmAllocation create(int device, std::size_t bytes);
  /// Maps the allocation behind `fd` (from export_fd() of another process) of `bytes` on `device`.
  static VmmAllocation import(int fd, std::size_t bytes, int device);
  VmmAllocation(VmmAllocation&& o) noexcept { swap(o); }
  VmmAllocation& operator=(VmmAllocation&& o) noexcept {
    VmmAllocation(std::move(o)).swap(*this);
    return *this;
  }
  VmmAllocation(const VmmAllocation&) = delete;
  VmmAllocation& operator=(const VmmAllocation&) = delete;
  ~VmmAllocation();
  [[nodiscard]] void* get() const noexcept { return reinterpret_cast<void*>(ptr_); }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }
  /// A new descriptor for the allocation (the caller owns it).
  [[nodiscard]] UniqueFd export_fd() const;

 private:
  void swap(VmmAllocation& o) noexcept {
    std::swap(handle_, o.handle_), std::swap(ptr_, o.ptr_), std::swap(bytes_, o.bytes_), std::swap(device_, o.device_);
  }
  void map(int device);
  unsigned long long handle_ = 0;  // CUmemGenericAllocationHandle
  unsigned long long ptr_ = 0;     // CUdeviceptr
  std::size_t bytes_ = 0;
  int device_ = 0;
};

/// A memory pool whose allocations other processes can import: created with POSIX-fd handles
/// (exporter), or imported from such a descriptor (importer). Destroyed on destruction.
class MemPool {
 public:
  MemPool() noexcept = default;
  static MemPool create_ipc(int device);
  static MemPool import(int fd);
  MemPool(MemPool&& o) noexcept : pool_(std::exchange(o.pool_, nullptr)) {}
  MemPool& operator=(MemPool&& o) noexcept {
    MemPool(std::move(o)).swap(*this);
    return *this;
  }
  MemPool(const MemPool&) = delete;
  MemPool& operator=(const MemPool&) = delete;
  ~MemPool();
  [[nodiscard]] cudaMemPool_t get() const noexcept { return pool_; }
  [[nodiscard]] UniqueFd export_fd() const;

 private:
  void swap(MemPool& o) noexcept { std::swap(pool_, o.pool_); }
  cudaMemPool_t pool_ = nullptr;
};

/// One allocation from a MemPool (cudaMallocFromPoolAsync), or another process's allocation
/// imported from its export record (cudaMemPoolImportPointer). Freed on destruction; an
/// imported one must go before its pool.
class PoolAllocation {
 public:
  PoolAllocation() noexcept = default;
  static PoolAllocation allocate(const MemPool& pool, std::size_t bytes, cudaStream_t stream);
  static PoolAllocation import(const MemPool& pool, const std::vector<char>& export_record);
  PoolAllocation(PoolAllocation&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)) {}
  PoolAllocation& operator=(PoolAllocation&& o) noexcept {
    PoolAllocation(std::move(o)).swap(*this);
    return *this;
  }
  PoolAllocation(const PoolAllocation&) = delete;
  PoolAllocation& operator=(const PoolAllocation&) = delete;
  ~PoolAllocation();
  [[nodiscard]] void* get() const noexcept { return ptr_; }
  /// The 64-byte record another process passes to import().
  [[nodiscard]] std::vector<char> export_record() const;

 private:
  void swap(PoolAllocation& o) noexcept { std::swap(ptr_, o.ptr_); }
  void* ptr_ = nullptr;
};

}  // namespace cuview::cuda
