// The CUDA executor: one device and one non-blocking stream. Steps, field writes, the seal and
// the slot's event are queued on that stream in order; at most two batches of steps stay queued.
#include <algorithm>

#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "cuview/cuda/event.hpp"
#include "cuview/cuda/pinned_buffer.hpp"
#include "cuview/cuda/probe.hpp"
#include "cuview/cuda/stream.hpp"
#include "cuview/error.hpp"
#include "executor/executor.hpp"

namespace cuview {
namespace {

/// Sums the frame checksum over one field's 32-bit words (index: the word's byte offset in the
/// slot / 4) into the trailer, reading the slot once.
__global__ void checksum_kernel(const std::uint32_t* __restrict__ words, std::size_t count, std::size_t first_index,
                                SlotTrailer* trailer) {
  std::uint64_t sum = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    sum += checksum_term(words[i], first_index + i);
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(reinterpret_cast<unsigned long long*>(&trailer->checksum), sum);
}

/// Writes seq and step, then the GPU's global timer (ns): the moment the frame was complete, for
/// latency figures. Runs after the checksum kernels on the same stream.
__global__ void trailer_kernel(SlotTrailer* trailer, std::uint64_t seq, std::uint64_t step) {
  trailer->seq = seq;
  trailer->step = step;
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  trailer->done_ns = t;
}

class CudaExecutor final : public Executor {
 public:
  explicit CudaExecutor(int device) {
    probe_ = cuda::probe(device);
    if (!probe_.usable) throw Error(Errc::cuda, "the CUDA executor cannot start: " + probe_.reason);
    cuda::DeviceGuard guard(probe_.device);
    cudaDeviceProp prop{};
    cuda::check(cudaGetDeviceProperties(&prop, probe_.device), "cudaGetDeviceProperties");
    sms_ = prop.multiProcessorCount;
    stream_ = cuda::Stream::create();
    for (auto& e : batch_done_) e = cuda::Event(cuda::EventKind::blocking_sync);
  }
  ~CudaExecutor() override {
    cuda::DeviceGuard guard(probe_.device);
    cudaStreamSynchronize(stream_.get());
  }

  Kind kind() const override { return Kind::cuda; }
  std::string device() const override {
    return "GPU " + std::to_string(probe_.device) + ": " + probe_.name + " (PCI " + probe_.pci_bus_id + ")";
  }
  int device_id() const override { return probe_.device; }
  cuda::StreamRef stream() const override { return stream_.ref(); }

  void end_batch() override {
    cuda::DeviceGuard guard(probe_.device);
    auto& done = batch_done_[batch_ & 1];
    cuda::check(cudaEventRecord(done.get(), stream_.get()), "cudaEventRecord (end of a batch of steps)");
    ++batch_;
    if (batch_ >= 2)
      cuda::check(cudaEventSynchronize(batch_done_[batch_ & 1].get()), "waiting for the previous batch of steps");
  }

  BufferLocation locate(const void* data) const override {
    cuda::DeviceGuard guard(probe_.device);
    cudaPointerAttributes a{};
    cuda::check(cudaPointerGetAttributes(&a, data), "cudaPointerGetAttributes");
    switch (a.type) {
      case cudaMemoryTypeDevice:
        return {false, true, a.device};
      case cudaMemoryTypeManaged:
        return {true, true, a.device};
      case cudaMemoryTypeHost:  // pinned: the GPU reads it too, through the mapping
        return {true, a.devicePointer != nullptr, -1};
      default:
        return {true, false, -1};
    }
  }

  void copy(void* dst, const void* src, std::size_t bytes, cuda::StreamRef stream) override {
    cuda::DeviceGuard guard(probe_.device);
    cuda::check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream.get()),
                "cudaMemcpyAsync of " + std::to_string(bytes) + " bytes into a ring slot");
  }

  void seal(void* slot, const SlotLayout& layout, std::uint64_t seq, std::uint64_t step,
            cuda::StreamRef stream_ref) override {
    cuda::DeviceGuard guard(probe_.device);
    const cudaStream_t stream = stream_ref.get();
    auto* base = static_cast<unsigned char*>(slot);
    auto* trailer = reinterpret_cast<SlotTrailer*>(base + layout.trailer_offset);
    const std::string what = " of frame " + std::to_string(seq);
    cuda::check(cudaMemsetAsync(&trailer->checksum, 0, sizeof trailer->checksum, stream),
                "clearing the checksum" + what);
    for (const auto& f : layout.fields) {
      const std::size_t words = f.bytes / 4;
      const int threads = 256;
      const int blocks = static_cast<int>(
          std::max<std::size_t>(1, std::min<std::size_t>((words + threads - 1) / threads, std::size_t(sms_) * 8)));
      checksum_kernel<<<blocks, threads, 0, stream>>>(reinterpret_cast<const std::uint32_t*>(base + f.offset), words,
                                                      f.offset / 4, trailer);
    }
    trailer_kernel<<<1, 1, 0, stream>>>(trailer, seq, step);
    cuda::check(cudaGetLastError(), "launching the checksum and trailer kernels" + what);
  }

  void finish() override {
    cuda::DeviceGuard guard(probe_.device);
    cuda::check(cudaStreamSynchronize(stream_.get()), "cudaStreamSynchronize (finishing queued work)");
  }

  std::shared_ptr<std::byte> host_memory(std::size_t bytes) const override {
    cuda::DeviceGuard guard(probe_.device);
    // The buffer owns the memory; the shared_ptr shares that owner (the aliasing constructor).
    auto pinned = std::make_shared<cuda::PinnedBuffer>(bytes, "a checkpoint's state");
    return {pinned, pinned->data()};
  }

 private:
  cuda::Probe probe_;
  int sms_ = 1;
  cuda::Stream stream_;
  cuda::Event batch_done_[2];
  std::uint64_t batch_ = 0;
};

}  // namespace

std::unique_ptr<Executor> make_cuda_executor(int device) {
  return std::make_unique<CudaExecutor>(device < 0 ? default_device() : device);
}

}  // namespace cuview
