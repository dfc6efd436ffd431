#include <cuda_runtime_api.h>

#include <string>

#include "cuview/cuda/pinned_buffer.hpp"
#include "cuview/cuda_ipc.hpp"  // check

namespace cuview::cuda {

void detail::PinnedTraits::close(const handle_type& h) noexcept { (void)cudaFreeHost(h.ptr); }

PinnedBuffer::PinnedBuffer(std::size_t bytes, const char* what) {
  if (bytes == 0) return;
  void* ptr = nullptr;
  check(cudaHostAlloc(&ptr, bytes, cudaHostAllocDefault),
        "cudaHostAlloc of " + std::to_string(bytes) + " bytes for " + what);
  owner_.reset({ptr, bytes});
}

}  // namespace cuview::cuda
