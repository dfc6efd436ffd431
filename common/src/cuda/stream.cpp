#include "cuview/cuda/stream.hpp"

#include "cuview/cuda/check.hpp"

namespace cuview::cuda {

Stream Stream::create(Priority priority) {
  cudaStream_t s = nullptr;
  if (priority == Priority::lowest) {
    int least = 0, greatest = 0;
    check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
    check(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, least), "cudaStreamCreateWithPriority (lowest)");
  } else {
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  }
  Stream stream;
  stream.owner_.reset(s);
  return stream;
}

}  // namespace cuview::cuda
