#include "cuda/driver.hpp"

#include <cuda_runtime_api.h>

#include <mutex>

#include "cuview/error.hpp"

namespace cuview::cuda {
namespace {
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
}  // namespace

const Driver& driver() {
  static Driver d;
  static std::once_flag once;
  std::call_once(once, [] {
    lookup(d.get_error_string, "cuGetErrorString", d.missing);
    lookup(d.device_get_attribute, "cuDeviceGetAttribute", d.missing);
    lookup(d.device_get, "cuDeviceGet", d.missing);
    lookup(d.primary_retain, "cuDevicePrimaryCtxRetain", d.missing);
    lookup(d.primary_release, "cuDevicePrimaryCtxRelease", d.missing);
    lookup(d.push_current, "cuCtxPushCurrent", d.missing);
    lookup(d.pop_current, "cuCtxPopCurrent", d.missing);
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

const Driver& complete_driver(const std::string& feature) {
  const Driver& d = driver();
  if (!d.missing.empty()) throw Error(Errc::unsupported, feature + " is not available: " + d.missing);
  return d;
}

void check_cu(CUresult rc, const std::string& what) {
  if (rc == CUDA_SUCCESS) return;
  const char* text = nullptr;
  if (driver().get_error_string) driver().get_error_string(rc, &text);
  throw Error(Errc::cuda, what + ": " + (text ? text : "CUDA driver error") + " (CUresult " + std::to_string(rc) + ")");
}

}  // namespace cuview::cuda
