#include "cuview/cuda/device_buffer.hpp"

#include <cuda_runtime_api.h>

#include <string>

#include "cuview/cuda/check.hpp"

namespace cuview::cuda {

void detail::free_device(void* ptr) noexcept { (void)cudaFree(ptr); }

DeviceBuffer::DeviceBuffer(std::size_t bytes) {
  void* ptr = nullptr;
  check(cudaMalloc(&ptr, bytes), "cudaMalloc of " + std::to_string(bytes) + " bytes");
  owner_.reset({ptr, bytes});
}

}  // namespace cuview::cuda
