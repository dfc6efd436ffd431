#include "share/vmm/vmm_allocation.hpp"

#include <cuda.h>  // types and prototypes only: nothing links libcuda
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/driver.hpp"
#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_guard.hpp"
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
/// one, initialised) and restores the caller's after.
class ContextGuard {
 public:
  explicit ContextGuard(int device) : guard_(device) {
    check(cudaFree(nullptr), "initialising the CUDA context of device " + std::to_string(device));
  }

 private:
  DeviceGuard guard_;
};

}  // namespace

void detail::VmmTraits::close(const handle_type& h) noexcept {
  const Driver& d = driver();
  std::optional<ContextGuard> context;
  try {
    context.emplace(h.device);
  } catch (...) {  // a broken context: unmapping may fail too, and the driver cleans up at exit
  }
  if (h.ptr != 0 && d.unmap) {
    d.unmap(h.ptr, h.bytes);
    d.address_free(h.ptr, h.bytes);
  }
  if (h.handle != 0 && d.release) d.release(h.handle);
}

std::optional<std::string> vmm_unsupported(int device) {
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

VmmAllocation VmmAllocation::create(int device, std::size_t bytes) {
  const Driver& d = complete_driver("VMM sharing");
  ContextGuard context(device);
  const std::size_t g = vmm_granularity(device);
  const std::size_t rounded = (bytes + g - 1) / g * g;
  const auto prop = vmm_props(device);
  CUmemGenericAllocationHandle h = 0;
  check_cu(d.create(&h, rounded, &prop, 0),
           "cuMemCreate of " + std::to_string(rounded) + " bytes on device " + std::to_string(device));
  VmmAllocation a;
  a.owner_.reset({h, 0, rounded, device});
  a.map();
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
  CUmemGenericAllocationHandle h = 0;
  check_cu(d.import_handle(&h, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
           "cuMemImportFromShareableHandle (the daemon's ring, descriptor " + std::to_string(fd) + ")");
  VmmAllocation a;
  a.owner_.reset({h, 0, bytes, device});
  a.map();
  return a;
}

void VmmAllocation::map() {
  const Driver& d = complete_driver("VMM sharing");
  auto h = owner_.release();
  CUdeviceptr p = 0;
  const CUresult reserved = d.reserve(&p, h.bytes, 0, 0, 0);
  if (reserved == CUDA_SUCCESS) h.ptr = p;  // from here the owner frees the range too
  owner_.reset(h);
  check_cu(reserved, "cuMemAddressReserve of " + std::to_string(h.bytes) + " bytes");
  check_cu(d.map(p, h.bytes, 0, h.handle, 0), "cuMemMap of " + std::to_string(h.bytes) + " bytes");
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = h.device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  check_cu(d.set_access(p, h.bytes, &access, 1), "cuMemSetAccess for device " + std::to_string(h.device));
}

UniqueFd VmmAllocation::export_fd() const {
  int fd = -1;
  check_cu(complete_driver("VMM sharing")
               .export_handle(&fd, owner_.get().handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
           "cuMemExportToShareableHandle (POSIX file descriptor)");
  return UniqueFd(fd);
}

}  // namespace cuview::cuda
