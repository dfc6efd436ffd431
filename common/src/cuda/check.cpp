#include "cuview/cuda/check.hpp"

#include "cuview/error.hpp"

namespace cuview::cuda {

void check(cudaError_t rc, const std::string& what) {
  if (rc == cudaSuccess) return;
  (void)cudaGetLastError();  // clear the sticky-free error so later calls are not blamed
  throw Error(Errc::cuda, what + ": " + cudaGetErrorString(rc) + " (" + cudaGetErrorName(rc) + ")");
}

}  // namespace cuview::cuda
