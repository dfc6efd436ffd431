#include "client/device_checksum.hpp"

#include "cuview/cuda/check.hpp"
#include "cuview/cuda/checksum.cuh"

namespace cuview::detail {

std::uint64_t device_checksum(const std::byte* slot, const std::vector<SlotLayout::Field>& fields, cudaStream_t stream,
                              std::uint64_t* total, const std::string& what) {
  constexpr int kThreads = 256;
  int device = 0, sms = 0;
  cuda::check(cudaGetDevice(&device), "cudaGetDevice, verifying " + what);
  cuda::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
              "reading GPU " + std::to_string(device) + "'s multiprocessor count, verifying " + what);
  cuda::check(cudaMemsetAsync(total, 0, sizeof(std::uint64_t), stream), "clearing the checksum of " + what);
  for (const auto& f : fields) {
    const std::size_t words = f.bytes / 4;
    if (words == 0) continue;
    checksum_kernel<><<<stride_blocks(words, kThreads, sms), kThreads, 0, stream>>>(
        reinterpret_cast<const std::uint32_t*>(slot + f.offset), words, f.offset / 4, total);
    cuda::check(cudaGetLastError(), "launching the checksum of " + what + " on GPU " + std::to_string(device));
  }
  std::uint64_t result = 0;
  cuda::check(cudaMemcpyAsync(&result, total, sizeof result, cudaMemcpyDeviceToHost, stream),
              "copying the checksum of " + what + " to the host");
  cuda::check(cudaStreamSynchronize(stream), "summing the checksum of " + what + " on GPU " + std::to_string(device));
  return result;
}

}  // namespace cuview::detail
