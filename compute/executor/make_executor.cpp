// Choosing where to run: --backend auto|cuda|host for the daemon and the embedded publisher.
#include <spdlog/spdlog.h>

#include "cuview/error.hpp"
#include "executor/executor.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include "cuview/cuda_ipc.hpp"
#endif

namespace cuview {

std::unique_ptr<Executor> make_executor(const std::string& backend, int device) {
  if (backend == "host") {
    spdlog::info("backend: host (asked for)");
    return make_host_executor();
  }
  if (backend != "auto" && backend != "cuda")
    throw Error(Errc::bad_value, "backend '" + backend + "' is not one of auto, cuda, host");
#ifdef CUVIEW_HAVE_CUDA
  if (backend == "cuda") return make_cuda_executor(device);
  if (device < 0 && cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    device = 0;
  }
  const auto probe = cuda::probe(device);
  if (probe.usable) {
    spdlog::info("backend: cuda on {} (auto: a CUDA device is usable)", probe.name);
    return make_cuda_executor(device);
  }
  spdlog::info("backend: host (auto: CUDA is not usable here: {})", probe.reason);
#else
  if (backend == "cuda")
    throw Error(Errc::cuda,
                "backend cuda: this cuview was built without the CUDA toolkit; rebuild it with nvcc on PATH or use "
                "the host backend");
  spdlog::info("backend: host (auto: this build has no CUDA backend)");
#endif
  return make_host_executor();
}

}  // namespace cuview
