// Choosing where to run: --backend auto|cuda|host for the daemon and the embedded publisher.

#include "cuview/error.hpp"
#include "executor/executor.hpp"
#include "publisher/publisher_log.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "cuview/cuda/probe.hpp"
#endif

namespace cuview {

#ifdef CUVIEW_HAVE_CUDA
int default_device() noexcept {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;  // no driver: probe(0) says why
  }
  if (cuda::probe(device).usable) return device;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) (void)cudaGetLastError();
  for (int d = 0; d < count; ++d)
    if (cuda::probe(d).usable) return d;
  return device;
}
#endif

std::unique_ptr<Executor> make_executor(const std::string& backend, int device) {
  if (backend == "host") {
    if (device >= 0)
      throw Error(Errc::bad_value, "GPU " + std::to_string(device) +
                                       " was asked for, but the host backend runs on the CPU; leave the device out, "
                                       "or use --backend cuda or auto");
    publisher_log().info("backend: host (asked for)");
    return make_host_executor();
  }
  if (backend != "auto" && backend != "cuda")
    throw Error(Errc::bad_value, "backend '" + backend + "' is not one of auto, cuda, host");
#ifdef CUVIEW_HAVE_CUDA
  const bool chosen = device >= 0;
  if (!chosen) device = default_device();
  if (backend == "cuda") return make_cuda_executor(device);
  const auto probe = cuda::probe(device);
  if (probe.usable) {
    publisher_log().info("backend: cuda on GPU {}, {} (auto: a CUDA device is usable)", device, probe.name);
    return make_cuda_executor(device);
  }
  // A GPU asked for by number is a GPU wanted: running on the CPU instead would hide the mistake.
  if (chosen) throw Error(Errc::cuda, "GPU " + std::to_string(device) + " cannot run the simulation: " + probe.reason);
  publisher_log().info("backend: host (auto: CUDA is not usable here: {})", probe.reason);
#else
  if (device >= 0)
    throw Error(Errc::cuda, "GPU " + std::to_string(device) +
                                " was asked for, but this cuview was built without the CUDA toolkit; rebuild it with "
                                "nvcc on PATH or leave the device out");
  if (backend == "cuda")
    throw Error(Errc::cuda,
                "backend cuda: this cuview was built without the CUDA toolkit; rebuild it with nvcc on PATH or use "
                "the host backend");
  publisher_log().info("backend: host (auto: this build has no CUDA backend)");
#endif
  return make_host_executor();
}

}  // namespace cuview
