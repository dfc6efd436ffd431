#include "cuview/cuda_share.hpp"

#include <cuda.h>  // types and prototypes only: nothing links libcuda

#include <cstring>
#include <mutex>

#include "cuview/cuda_ipc.hpp"
#include "cuview/error.hpp"

namespace cuview::cuda {
namespace {

/// The driver-API functions VMM needs, looked up once through the runtime.
struct Driver {
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&::cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&::cuMemCreate) create = nullptr;
  decltype(&::cuMemRelease) release = nullptr;
  decltype(&::cuMemAddressReserve) reserve = nullptr;
  decltype(&::cuMemAddressFree) address_free = nullptr;
  decltype(&::cuMemMap) map = nullptr;
  decltype(&::cuMemUnmap) unmap = nullptr;
  decltype(&::cuMemSetAccess) set_access = nullptr;
  decltype(&::cuMemExportToShareableHandle) export_handle = nullptr;
  decltype(&::cuMemImportFromShareableHandle) import_handle = nullptr;
  std::string missing;  // why the table is incomplete; empty when complete
};

template <class Fn>
void lookup(Fn& fn, const char* symbol, std::string& missing) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult status{};
  const cudaError_t rc = cudaGetDriverEntryPointByVersion(symbol, &p, 12000, cudaEnableDefault, &status);
  if (rc != cudaSuccess || status != cudaDriverEntryPointSuccess || p == nullptr) {
    (void)cudaGetLastError();
    if (missing.empty())
      missing = std::string("the driver offers no ") + symbol + " (cudaGetDriverEntryPointByVersion: " +
                (rc != cudaSuccess ? cudaGetErrorString(rc) : "symbol not found") + ")";
    return;
  }
  fn = reinterpret_cast<Fn>(p);
}

const Driver& driver() {
  static Driver d;
  static std::once_flag once;
  std::call_once(once, [] {
    lookup(d.get_error_string, "cuGetErrorString", d.missing);
    lookup(d.device_get_attribute, "cuDeviceGetAttribute", d.missing);
    lookup(d.granularity, "cuMemGetAllocationGranularity", d.missing);
    lookup(d.create, "cuMemCreate", d.missing);
    lookup(d.release, "cuMemRelease", d.missing);
    lookup(d.reserve, "cuMemAddressReserve", d.missing);
    lookup(d.address_free, "cuMemAddressFree", d.missing);
    lookup(d.map, "cuMemMap", d.missing);
    lookup(d.unmap, "cuMemUnmap", d.missing);
    lookup(d.set_access, "cuMemSetAccess", d.missing);
    lookup(d.export_handle, "cuMemExportToShareableHandle", d.missing);
    lookup(d.import_handle, "cuMemImportFromShareableHandle", d.missing);
  });
  return d;
}

const Driver& vmm_driver() {
  const Driver& d = driver();
  if (!d.missing.empty()) throw Error(Errc::unsupported, "VMM sharing is not available: " + d.missing);
  return d;
}

void check_cu(CUresult rc, const std::string& what) {
  if (rc == CUDA_SUCCESS) return;
  const char* text = nullptr;
  if (driver().get_error_string) driver().get_error_string(rc, &text);
  throw Error(Errc::cuda, what + ": " + (text ? text : "CUDA driver error") + " (CUresult " + std::to_string(rc) + ")");
}

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
  check_cu(vmm_driver().granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
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
  const Driver& d = vmm_driver();
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
  const Driver& d = vmm_driver();
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
  const Driver& d = vmm_driver();
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
  check_cu(vmm_driver().export_handle(&fd, handle_, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
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
