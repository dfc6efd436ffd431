// A step of a slab-decomposed simulation on CUDA that hides its halo exchange: the two edge slabs
// (rows or layers) are stepped first; a high-priority stream then exchanges them with the
// neighbouring parts while the main stream steps the slabs between; the next step waits for the
// exchange. Shared by the 2-D and 3-D lattice-Boltzmann flows (lbm_cuda.cu, lbm3d_cuda.cu).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "cuview/cuda/check.hpp"
#include "cuview/unique_handle.hpp"

namespace cuview::sim {

class SlabOverlap {
 public:
  /// `what` names the simulation in errors ("the lattice-Boltzmann flow").
  explicit SlabOverlap(const std::string& what) : what_(what) {
    int least = 0, greatest = 0;
    cuda::check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "asking the GPU's stream priorities");
    cudaStream_t s = nullptr;
    // The neighbours wait for these slabs: their copies should not queue behind the inner ones.
    cuda::check(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest),
                "creating the halo stream of " + what_);
    stream_.reset(s);
    edges_done_ = event(), halo_done_ = event();
  }
  /// Queues one step on `main`: edges(main), then exchange(halo stream) beside inner(main).
  template <class Edges, class Exchange, class Inner>
  void step(cudaStream_t main, Edges&& edges, Exchange&& exchange, Inner&& inner) {
    edges(main);
    cuda::check(cudaEventRecord(edges_done_.get(), main), "recording the edge step of " + what_);
    cuda::check(cudaStreamWaitEvent(stream_.get(), edges_done_.get(), 0), "ordering the halo of " + what_);
    exchange(stream_.get());
    cuda::check(cudaEventRecord(halo_done_.get(), stream_.get()), "recording the halo exchange of " + what_);
    inner(main);
    // The next step reads the ghost slabs, and overwrites what the halo stream no longer reads.
    cuda::check(cudaStreamWaitEvent(main, halo_done_.get(), 0), "ordering the next step of " + what_);
  }

 private:
  using OwnedStream = UniqueHandle<PointerTraits<cudaStream_t, &cudaStreamDestroy>>;
  using OwnedEvent = UniqueHandle<PointerTraits<cudaEvent_t, &cudaEventDestroy>>;
  /// An event only for ordering streams: timing disabled, the cheapest kind to record and wait on.
  OwnedEvent event() {
    cudaEvent_t e = nullptr;
    cuda::check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "creating the halo events of " + what_);
    return OwnedEvent(e);
  }
  std::string what_;
  OwnedStream stream_;
  OwnedEvent edges_done_, halo_done_;
};

}  // namespace cuview::sim
