// Turning a CUDA runtime status into cuview's error: every failing call throws Error(cuda) naming
// the call, the object and CUDA's words for the failure. Only built with CUDA (CUVIEW_HAVE_CUDA).
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace cuview::cuda {

/// Throws Error(cuda): "<what>: <cudaGetErrorString> (<cudaGetErrorName>)" unless rc == cudaSuccess.
void check(cudaError_t rc, const std::string& what);

/// Loads `kernels` on the current GPU now rather than at their first launch (CUDA's lazy loading,
/// where a build without code for this GPU also compiles them then). Work that is timed by events
/// around its launches — a frame's cost, a picture's — would otherwise count the load, and the
/// budget would hold the next frames back for it (docs/benchmarks.md: a picture's load held the
/// frames back for half a minute, a frame's for 20 s).
template <class... Kernel>
void load_kernels(const std::string& what, Kernel*... kernels) {
  cudaFuncAttributes attributes{};
  (check(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(kernels)), "loading " + what), ...);
}

}  // namespace cuview::cuda
