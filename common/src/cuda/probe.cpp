#include "cuview/cuda/probe.hpp"

#include <cuda_runtime_api.h>

namespace cuview::cuda {

void init_driver() noexcept {
  int count = 0;
  (void)cudaGetDeviceCount(&count);
  (void)cudaGetLastError();
}

Probe probe(int device) noexcept {
  Probe p;
  cudaDriverGetVersion(&p.driver_version);
  cudaRuntimeGetVersion(&p.runtime_version);
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    p.reason = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(rc) + " (" + cudaGetErrorName(rc) + ")";
    if (rc == cudaErrorInsufficientDriver && p.driver_version == 0)
      p.reason += "; no NVIDIA driver is installed on this machine";
    (void)cudaGetLastError();
    return p;
  }
  if (count == 0) {
    p.reason = "no CUDA device is visible (check CUDA_VISIBLE_DEVICES and nvidia-smi)";
    return p;
  }
  if (device < 0 || device >= count) {
    std::string gpus;
    for (int d = 0; d < count; ++d) {
      cudaDeviceProp prop{};
      char pci[32] = {};
      if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) (void)cudaGetLastError();
      if (cudaDeviceGetPCIBusId(pci, sizeof pci, d) != cudaSuccess) (void)cudaGetLastError();
      gpus += (gpus.empty() ? "" : ", ") + std::to_string(d) + " (" + prop.name + ", PCI " + pci + ")";
    }
    p.reason = "there is no GPU " + std::to_string(device) + " here; the " + std::to_string(count) +
               " visible (CUDA_VISIBLE_DEVICES numbers them) are: " + gpus;
    return p;
  }
  const int dev = device;
  cudaDeviceProp prop{};
  if ((rc = cudaGetDeviceProperties(&prop, dev)) != cudaSuccess) {
    p.reason = std::string("cudaGetDeviceProperties failed: ") + cudaGetErrorString(rc);
    (void)cudaGetLastError();
    return p;
  }
  char pci[32] = {};
  cudaDeviceGetPCIBusId(pci, sizeof pci, dev);
  p.device = dev;
  p.name = prop.name;
  p.pci_bus_id = pci;
  p.usable = true;
  return p;
}

}  // namespace cuview::cuda
