#include "share/pool/mem_pool.hpp"

#include <cstdint>
#include <cstring>

#include "cuview/cuda/check.hpp"
#include "cuview/error.hpp"
#include "share/cuda_slots.hpp"  // device_attribute

namespace cuview::cuda {

std::optional<std::string> pool_unsupported(int device) {
  if (share::device_attribute(cudaDevAttrMemoryPoolsSupported, device) == 0)
    return "GPU " + std::to_string(device) + " has no stream-ordered memory pools (cudaDevAttrMemoryPoolsSupported)";
  if ((share::device_attribute(cudaDevAttrMemoryPoolSupportedHandleTypes, device) &
       cudaMemHandleTypePosixFileDescriptor) == 0)
    return "memory pools of GPU " + std::to_string(device) +
           " cannot be exported as POSIX file descriptors (cudaDevAttrMemoryPoolSupportedHandleTypes)";
  return std::nullopt;
}

MemPool MemPool::create_ipc(int device) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  check(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate (IPC, POSIX fd) on device " + std::to_string(device));
  MemPool p;
  p.owner_.reset(pool);
  return p;
}

MemPool MemPool::import(int fd) {
  cudaMemPool_t pool = nullptr;
  check(cudaMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
                                             cudaMemHandleTypePosixFileDescriptor, 0),
        "cudaMemPoolImportFromShareableHandle (the daemon's pool, descriptor " + std::to_string(fd) + ")");
  MemPool p;
  p.owner_.reset(pool);
  return p;
}

UniqueFd MemPool::export_fd() const {
  int fd = -1;
  check(cudaMemPoolExportToShareableHandle(&fd, get(), cudaMemHandleTypePosixFileDescriptor, 0),
        "cudaMemPoolExportToShareableHandle (POSIX file descriptor)");
  return UniqueFd(fd);
}

PoolAllocation PoolAllocation::allocate(const MemPool& pool, std::size_t bytes, StreamRef stream) {
  void* ptr = nullptr;
  check(cudaMallocFromPoolAsync(&ptr, bytes, pool.get(), stream.get()),
        "cudaMallocFromPoolAsync of " + std::to_string(bytes) + " bytes");
  PoolAllocation a;
  a.owner_.reset(ptr);
  return a;
}

PoolAllocation PoolAllocation::import(const MemPool& pool, const std::vector<char>& record) {
  cudaMemPoolPtrExportData data{};
  if (record.size() != sizeof data.reserved)
    throw Error(Errc::bad_message, "a pool export record is " + std::to_string(sizeof data.reserved) +
                                       " bytes; the daemon sent " + std::to_string(record.size()));
  std::memcpy(data.reserved, record.data(), sizeof data.reserved);
  void* ptr = nullptr;
  check(cudaMemPoolImportPointer(&ptr, pool.get(), &data), "cudaMemPoolImportPointer (a ring slot of the daemon)");
  PoolAllocation a;
  a.owner_.reset(ptr);
  return a;
}

std::vector<char> PoolAllocation::export_record() const {
  cudaMemPoolPtrExportData data{};
  check(cudaMemPoolExportPointer(&data, get()), "cudaMemPoolExportPointer");
  return {data.reserved, data.reserved + sizeof data.reserved};
}

}  // namespace cuview::cuda
