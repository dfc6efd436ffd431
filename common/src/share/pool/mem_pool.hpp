// The pool mechanism's objects: a memory pool other processes can import, and its allocations.
// Only built with CUDA.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cuview/cuda/stream_ref.hpp"
#include "cuview/posix.hpp"
#include "cuview/unique_handle.hpp"

namespace cuview::cuda {

/// A memory pool whose allocations other processes can import: created with POSIX-fd handles
/// (exporter), or imported from such a descriptor (importer). Destroyed with its owner; move-only,
/// a moved-from pool destroys nothing. Throws Error(cuda) naming the call.
class MemPool {
 public:
  MemPool() noexcept = default;
  static MemPool create_ipc(int device);
  static MemPool import(int fd);
  [[nodiscard]] cudaMemPool_t get() const noexcept { return owner_.get(); }
  [[nodiscard]] UniqueFd export_fd() const;

 private:
  UniqueHandle<PointerTraits<cudaMemPool_t, &cudaMemPoolDestroy>> owner_;
};

/// One allocation from a MemPool (cudaMallocFromPoolAsync), or another process's allocation
/// imported from its export record (cudaMemPoolImportPointer). Freed with its owner; an imported
/// one must go before its pool. Move-only; a moved-from allocation frees nothing.
class PoolAllocation {
 public:
  PoolAllocation() noexcept = default;
  static PoolAllocation allocate(const MemPool& pool, std::size_t bytes, StreamRef stream);
  static PoolAllocation import(const MemPool& pool, const std::vector<char>& export_record);
  [[nodiscard]] void* get() const noexcept { return owner_.get(); }
  /// The 64-byte record another process passes to import().
  [[nodiscard]] std::vector<char> export_record() const;

 private:
  // cudaFree waits for work on it, as the pool's rules require before its owner frees.
  UniqueHandle<PointerTraits<void*, &cudaFree>> owner_;
};

/// Why IPC memory pools cannot share memory of `device` here, or nothing. Throws Error(cuda).
std::optional<std::string> pool_unsupported(int device);

}  // namespace cuview::cuda
