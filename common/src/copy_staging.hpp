// Pinned host memory and a copy stream on one GPU, kept from call to call by the samplers that
// bring parts of frames to the host with the copy engine (ViewSampler's rows, BrickSampler's
// bricks): one per GPU their frames came from.
#pragma once

#ifdef CUVIEW_HAVE_CUDA
#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "cuview/cuda/device_guard.hpp"
#include "cuview/cuda/pinned_buffer.hpp"
#include "cuview/cuda/stream.hpp"

namespace cuview {

struct CopyStaging {
  /// `what` names the memory in an allocation's error ("the sampled rows of a view").
  CopyStaging(int gpu, const char* what) : device(gpu), what_(what) {
    cuda::DeviceGuard guard(device);
    stream = cuda::Stream::create();
  }
  CopyStaging(const CopyStaging&) = delete;
  CopyStaging& operator=(const CopyStaging&) = delete;
  ~CopyStaging() {
    // Released in the context they were made in, not whichever the thread has current.
    try {
      cuda::DeviceGuard guard(device);
      rows = cuda::PinnedBuffer();
      stream = cuda::Stream();
    } catch (...) {  // the driver is gone: the members free what they still can
    }
  }
  /// Pinned room for `bytes`; its contents are not kept when it grows.
  std::byte* reserve(std::size_t bytes) {
    if (bytes > rows.size()) {
      cuda::DeviceGuard guard(device);
      rows = cuda::PinnedBuffer();  // freed before the larger one is taken
      rows = cuda::PinnedBuffer(bytes, what_);
    }
    return rows.data();
  }
  int device;
  cuda::Stream stream;
  cuda::PinnedBuffer rows;

 private:
  const char* what_;
};

/// The staging of GPU `gpu` in `all` (a sampler's, one per GPU), made when first asked for.
template <class T>
T& staging_for(std::vector<std::unique_ptr<T>>& all, int gpu) {
  auto it = std::find_if(all.begin(), all.end(), [&](const auto& s) { return s->device == gpu; });
  if (it == all.end()) it = all.insert(all.end(), std::make_unique<T>(gpu));
  return **it;
}

}  // namespace cuview
#endif
