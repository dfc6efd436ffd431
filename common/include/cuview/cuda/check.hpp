// Turning a CUDA runtime status into cuview's error: every failing call throws Error(cuda) naming
// the call, the object and CUDA's words for the failure. Only built with CUDA (CUVIEW_HAVE_CUDA).
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace cuview::cuda {

/// Throws Error(cuda): "<what>: <cudaGetErrorString> (<cudaGetErrorName>)" unless rc == cudaSuccess.
void check(cudaError_t rc, const std::string& what);

}  // namespace cuview::cuda
