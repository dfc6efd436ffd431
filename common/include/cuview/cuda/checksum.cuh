// Device helpers for kernels that add frame checksum terms while they write a field
// (Executor::sum_into) or sum a slot's words (the executor's seal, a client's Frame::verify): a
// block's terms become one atomic add, so a kernel over a whole frame costs a few thousand
// atomics, not one per warp.
#pragma once

#include <cstdint>

#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
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

/// The blocks of `threads` threads a grid-stride kernel over `items` items launches on a GPU of
/// `sms` multiprocessors: one item per thread, up to 8 blocks a multiprocessor; their threads
/// then stride. The executor's frame kernels and a client's checksum (Frame::verify) size so.
inline unsigned stride_blocks(std::size_t items, int threads, int sms) {
  const std::size_t wanted = (items + threads - 1) / threads, most = static_cast<std::size_t>(sms > 0 ? sms : 1) * 8;
  return static_cast<unsigned>(wanted < 1 ? 1 : wanted < most ? wanted : most);
}

/// Sums the frame checksum over `count` 32-bit words of a slot (`first_index`: the first word's
/// byte offset in the slot / 4) into `sum`, reading them once: the executor's for fields not
/// summed as they were written, a client's to verify a frame where it lies (Frame::verify).
template <int = 0>  // a template: defined in every file that includes this one, without a clash
__global__ void checksum_kernel(const std::uint32_t* __restrict__ words, std::size_t count, std::size_t first_index,
                                std::uint64_t* sum) {
  std::uint64_t partial = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    partial += checksum_term(words[i], first_index + i);
  add_checksum(partial, sum);
}

/// For a kernel of very many blocks (one thread per cell, as a simulation's step): each block adds
/// its terms into one of kChecksumSlots words, picked by its index (one word for every block would
/// serialise their atomics), and ChecksumSlots::add_into adds those words into the frame's
/// checksum once the kernel has run (ChecksumSlots::clear zeroes them before).
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
/// The kChecksumSlots words a simulation's frame-writing launches add their terms into: made at
/// the first frame, zeroed for each (clear), then added into the frame's checksum (add_into).
class ChecksumSlots {
 public:
  /// The words, zeroed on `stream`, for add_checksum_spread.
  std::uint64_t* clear(cudaStream_t stream) {
    if (words_.get() == nullptr) words_ = cuda::DeviceBuffer(kChecksumSlots * sizeof(std::uint64_t));
    cuda::check(cudaMemsetAsync(words_.get(), 0, kChecksumSlots * sizeof(std::uint64_t), stream),
                "clearing a frame's checksums");
    return static_cast<std::uint64_t*>(words_.get());
  }
  /// Adds the words into `sum` (the frame's checksum), queued on `stream` after the launches.
  void add_into(std::uint64_t* sum, cudaStream_t stream) const {
    add_checksum_slots_kernel<><<<1, 256, 0, stream>>>(static_cast<const std::uint64_t*>(words_.get()), sum);
    cuda::check(cudaGetLastError(), "launching the sum of a frame's checksums");
  }

 private:
  cuda::DeviceBuffer words_;
};

/// The checksum term of a float written at word `index` of the slot.
__device__ inline std::uint64_t float_term(float value, std::uint64_t index) {
  return checksum_term(__float_as_uint(value), index);
}

}  // namespace cuview
