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

/// The checksum term of a float written at word `index` of the slot.
__device__ inline std::uint64_t float_term(float value, std::uint64_t index) {
  return checksum_term(__float_as_uint(value), index);
}

}  // namespace cuview
