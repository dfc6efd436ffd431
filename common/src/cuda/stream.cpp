#include "cuview/cuda/stream.hpp"

#include "cuview/cuda/check.hpp"

namespace cuview::cuda {

Stream Stream::create() {
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  Stream stream;
  stream.owner_.reset(s);
  return stream;
}

}  // namespace cuview::cuda
