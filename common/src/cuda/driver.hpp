// The CUDA driver-API functions cuview uses, looked up once through the runtime
// (cudaGetDriverEntryPointByVersion), so that nothing links libcuda and the programs still load
// on machines without a driver. Internal to the common library; only built with CUDA.
#pragma once

#include <cuda.h>  // types and prototypes only: nothing links libcuda

#include <string>

namespace cuview::cuda {

struct Driver {
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;
  // contexts: a library call works in the device's primary context without moving the caller's
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primary_retain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) primary_release = nullptr;
  decltype(&::cuCtxPushCurrent) push_current = nullptr;
  decltype(&::cuCtxPopCurrent) pop_current = nullptr;
  // virtual memory management
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

/// The table, filled on first use; never throws (an incomplete table says why in `missing`).
const Driver& driver();
/// The table, or Error(unsupported) naming `feature` and the missing function.
const Driver& complete_driver(const std::string& feature);
/// Throws Error(cuda): "<what>: <cuGetErrorString> (CUresult N)" unless rc == CUDA_SUCCESS.
void check_cu(CUresult rc, const std::string& what);

}  // namespace cuview::cuda
