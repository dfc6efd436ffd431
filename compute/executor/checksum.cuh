// Device helpers for kernels that add frame checksum terms while they write a field
// (Executor::sum_into): a block's terms become one atomic add, so a kernel that writes a whole
// frame costs a few thousand atomics, not one per warp.
#pragma once

#include <cstdint>

#include "cuview/frame_layout.hpp"

namespace cuview {

/// Adds every thread's `partial` of the block into `*sum`. Every thread of the block must call it
/// (it synchronises the block); blockDim.x * blockDim.y * blockDim.z a multiple of 32, at most 1024.
__device__ inline void add_checksum(std::uint64_t partial, std::uint64_t* sum) {
  __shared__ std::uint64_t warp_sums[32];
  for (int offset = 16; offset > 0; offset /= 2) partial += __shfl_down_sync(0xffffffffu, partial, offset);
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned warps = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
  if ((thread & 31) == 0) warp_sums[thread / 32] = partial;
  __syncthreads();
  if (thread < 32) {
    std::uint64_t v = thread < warps ? warp_sums[thread] : 0;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (thread == 0 && v != 0) atomicAdd(reinterpret_cast<unsigned long long*>(sum), static_cast<unsigned long long>(v));
  }
}

/// For a kernel of very many blocks (one thread per cell, as a simulation's step): each block adds
/// its terms into one of kChecksumSlots words, picked by its index (one word for every block would
/// serialise their atomics), and add_checksum_slots adds those words into the frame's checksum
/// once the kernel has run. `slots` must be zeroed before (cudaMemsetAsync).
inline constexpr int kChecksumSlots = 1024;
__device__ inline void add_checksum_spread(std::uint64_t partial, std::uint64_t* slots) {
  add_checksum(partial, slots + (blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)) % kChecksumSlots);
}
template <int = 0>  // a template: defined in every file that includes this one, without a clash
__global__ void add_checksum_slots_kernel(const std::uint64_t* __restrict__ slots, std::uint64_t* sum) {
  std::uint64_t partial = 0;
  for (int k = threadIdx.x; k < kChecksumSlots; k += blockDim.x) partial += slots[k];
  add_checksum(partial, sum);
}
/// Adds the kChecksumSlots words at `slots` into `sum`, queued on `stream`.
inline void add_checksum_slots(const std::uint64_t* slots, std::uint64_t* sum, cudaStream_t stream) {
  add_checksum_slots_kernel<><<<1, 256, 0, stream>>>(slots, sum);
}

/// The checksum term of a float written at word `index` of the slot.
__device__ inline std::uint64_t float_term(float value, std::uint64_t index) {
  return checksum_term(__float_as_uint(value), index);
}

}  // namespace cuview
