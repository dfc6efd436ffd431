#include "cuview/cuda_share.hpp"

#include <cuda.h>  // types and prototypes only: nothing links libcuda

#include <cstring>
#include <mutex>

#include "cuda_driver.hpp"
#include "cuview/cuda_ipc.hpp"
#include "cuview/error.hpp"

namespace cuview::cuda {
namespace {

CUmemAllocationProp vmm_props(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

std::size_t vmm_granularity(int device) {
  const auto prop = vmm_props(device);
  std::size_t g = 0;
  check_cu(complete_driver("VMM sharing").granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
           "cuMemGetAllocationGranularity on device " + std::to_string(device));
  return g;
}

/// Makes the runtime's primary context of `device` current on this thread (driver calls need
/// one) and restores the caller's device after.
class ContextGuard {
 public:
  explicit ContextGuard(int device) : guard_(device) {
    check(cudaFree(nullptr), "initialising the CUDA context of device " + std::to_string(device));
  }

 private:
  DeviceGuard guard_;
};

}  // namespace

std::optional<std::string> sharing_unsupported(const std::string& mechanism, int device) noexcept {
  try {
    auto attr = [&](cudaDeviceAttr a) {
      int v = 0;
      check(cudaDeviceGetAttribute(&v, a, device), "cudaDeviceGetAttribute");
      return v;
    };
    if (attr(cudaDevAttrIpcEventSupport) == 0)
      return "GPU " + std::to_string(device) + " does not support interprocess events (cudaDevAttrIpcEventSupport)";
    if (mechanism == "legacy") return std::nullopt;
    if (mechanism == "pool") {
      if (attr(cudaDevAttrMemoryPoolsSupported) == 0)
        return "GPU " + std::to_string(device) +
               " has no stream-ordered memory pools (cudaDevAttrMemoryPoolsSupported)";
      if ((attr(cudaDevAttrMemoryPoolSupportedHandleTypes) & cudaMemHandleTypePosixFileDescriptor) == 0)
        return "memory pools of GPU " + std::to_string(device) +
               " cannot be exported as POSIX file descriptors (cudaDevAttrMemoryPoolSupportedHandleTypes)";
      return std::nullopt;
    }
    if (mechanism == "vmm") {
      const Driver& d = driver();
      if (!d.missing.empty()) return d.missing;
      int v = 0;
      check_cu(d.device_get_attribute(&v, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device),
               "cuDeviceGetAttribute");
      if (v == 0)
        return "GPU " + std::to_string(device) +
               " has no virtual memory management (CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)";
      check_cu(d.device_get_attribute(&v, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, device),
               "cuDeviceGetAttribute");
      if (v == 0)
        return "GPU " + std::to_string(device) +
               " cannot export allocations as POSIX file descriptors "
               "(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED)";
      return std::nullopt;
    }
    return "'" + mechanism + "' is not a CUDA sharing mechanism";
  } catch (const std::exception& e) {
    return std::string("querying GPU ") + std::to_string(device) + " failed: " + e.what();
  }
}

// ---------------------------------------------------------------- VMM

VmmAllocation VmmAllocation::create(int device, std::size_t bytes) {
  const Driver& d = complete_driver("VMM sharing");
  ContextGuard context(device);
  const std::size_t g = vmm_granularity(device);
  VmmAllocation a;
  a.bytes_ = (bytes + g - 1) / g * g;
  const auto prop = vmm_props(device);
  CUmemGenericAllocationHandle h = 0;
  check_cu(d.create(&h, a.bytes_, &prop, 0),
           "cuMemCreate of " + std::to_string(a.bytes_) + " bytes on device " + std::to_string(device));
  a.handle_ = h;
  a.device_ = device;
  a.map(device);
  return a;
}

VmmAllocation VmmAllocation::import(int fd, std::size_t bytes, int device) {
  const Driver& d = complete_driver("VMM sharing");
  ContextGuard context(device);
  const std::size_t g = vmm_granularity(device);
  if (bytes == 0 || bytes % g != 0)
    throw Error(Errc::bad_message, "the daemon's VMM allocation of " + std::to_string(bytes) +
                                       " bytes is not a multiple of this GPU's granularity (" + std::to_string(g) +
                                       " bytes)");
  VmmAllocation a;
  a.bytes_ = bytes;
  CUmemGenericAllocationHandle h = 0;
  check_cu(d.import_handle(&h, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
           "cuMemImportFromShareableHandle (the daemon's ring, descriptor " + std::to_string(fd) + ")");
  a.handle_ = h;
  a.device_ = device;
  a.map(device);
  return a;
}

void VmmAllocation::map(int device) {
  const Driver& d = complete_driver("VMM sharing");
  CUdeviceptr p = 0;
  check_cu(d.reserve(&p, bytes_, 0, 0, 0), "cuMemAddressReserve of " + std::to_string(bytes_) + " bytes");
  ptr_ = p;
  check_cu(d.map(p, bytes_, 0, handle_, 0), "cuMemMap of " + std::to_string(bytes_) + " bytes");
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  try {
    check_cu(d.set_access(p, bytes_, &access, 1), "cuMemSetAccess for device " + std::to_string(device));
  } catch (...) {
    d.unmap(p, bytes_);
    d.address_free(p, bytes_);
    ptr_ = 0;
    throw;
  }
}

VmmAllocation::~VmmAllocation() {
  if (handle_ == 0) return;
  const Driver& d = driver();
  std::optional<ContextGuard> context;
  try {
    context.emplace(device_);
  } catch (...) {  // a broken context: unmapping may fail too, and the driver cleans up at exit
  }
  if (ptr_ != 0 && d.unmap) {
    d.unmap(ptr_, bytes_);
    d.address_free(ptr_, bytes_);
  }
  if (handle_ != 0 && d.release) d.release(handle_);
}

UniqueFd VmmAllocation::export_fd() const {
  int fd = -1;
  check_cu(complete_driver("VMM sharing").export_handle(&fd, handle_, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
           "cuMemExportToShareableHandle (POSIX file descriptor)");
  return UniqueFd(fd);
}

// ---------------------------------------------------------------- memory pools

MemPool MemPool::create_ipc(int device) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  MemPool p;
  check(cudaMemPoolCreate(&p.pool_, &props), "cudaMemPoolCreate (IPC, POSIX fd) on device " + std::to_string(device));
  return p;
}

MemPool MemPool::import(int fd) {
  MemPool p;
  check(cudaMemPoolImportFromShareableHandle(&p.pool_, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
                                             cudaMemHandleTypePosixFileDescriptor, 0),
        "cudaMemPoolImportFromShareableHandle (the daemon's pool, descriptor " + std::to_string(fd) + ")");
  return p;
}

MemPool::~MemPool() {
  if (pool_) cudaMemPoolDestroy(pool_);
}

UniqueFd MemPool::export_fd() const {
  int fd = -1;
  check(cudaMemPoolExportToShareableHandle(&fd, pool_, cudaMemHandleTypePosixFileDescriptor, 0),
        "cudaMemPoolExportToShareableHandle (POSIX file descriptor)");
  return UniqueFd(fd);
}

PoolAllocation PoolAllocation::allocate(const MemPool& pool, std::size_t bytes, cudaStream_t stream) {
  PoolAllocation a;
  check(cudaMallocFromPoolAsync(&a.ptr_, bytes, pool.get(), stream),
        "cudaMallocFromPoolAsync of " + std::to_string(bytes) + " bytes");
  return a;
}

PoolAllocation PoolAllocation::import(const MemPool& pool, const std::vector<char>& record) {
  cudaMemPoolPtrExportData data{};
  if (record.size() != sizeof data.reserved)
    throw Error(Errc::bad_message, "a pool export record is " + std::to_string(sizeof data.reserved) +
                                       " bytes; the daemon sent " + std::to_string(record.size()));
  std::memcpy(data.reserved, record.data(), sizeof data.reserved);
  PoolAllocation a;
  check(cudaMemPoolImportPointer(&a.ptr_, pool.get(), &data), "cudaMemPoolImportPointer (a ring slot of the daemon)");
  return a;
}

PoolAllocation::~PoolAllocation() {
  if (ptr_) cudaFree(ptr_);  // waits for work on it, as the pool's rules require before its owner frees
}

std::vector<char> PoolAllocation::export_record() const {
  cudaMemPoolPtrExportData data{};
  check(cudaMemPoolExportPointer(&data, ptr_), "cudaMemPoolExportPointer");
  return {data.reserved, data.reserved + sizeof data.reserved};
}

}  // namespace cuview::cuda
