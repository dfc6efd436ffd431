// The CUDA executor: one device and one non-blocking stream. Steps, field writes, the seal and
// the slot's event are queued on that stream in order; at most two batches of steps stay queued.
#include <algorithm>
#include <deque>
#include <limits>
#include <vector>

#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "cuview/cuda/event.hpp"
#include "cuview/cuda/pinned_buffer.hpp"
#include "cuview/cuda/probe.hpp"
#include "cuview/cuda/stream.hpp"
#include "cuview/error.hpp"
#include "cuview/cuda/checksum.cuh"
#include "executor/executor.hpp"

namespace cuview {
namespace {

/// Copies one field into the slot and adds its checksum terms: one read and one write per word.
/// `vec`: both pointers 16-byte aligned and the count a multiple of 4 (uint4 loads and stores).
__global__ void copy_sum_kernel(const std::uint32_t* __restrict__ src, std::uint32_t* __restrict__ dst,
                                std::size_t count, std::size_t first_index, bool vec, std::uint64_t* sum) {
  std::uint64_t partial = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t start = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (vec) {
    const auto* s4 = reinterpret_cast<const uint4*>(src);
    auto* d4 = reinterpret_cast<uint4*>(dst);
    for (std::size_t i = start; i < count / 4; i += stride) {
      const uint4 v = s4[i];
      d4[i] = v;
      const std::uint64_t w = first_index + 4 * i;
      partial += checksum_term(v.x, w) + checksum_term(v.y, w + 1) + checksum_term(v.z, w + 2) +
                 checksum_term(v.w, w + 3);
    }
  } else {
    for (std::size_t i = start; i < count; i += stride) {
      const std::uint32_t v = src[i];
      dst[i] = v;
      partial += checksum_term(v, first_index + i);
    }
  }
  add_checksum(partial, sum);
}

/// The 32-bit words of a load of type V (uint32_t, uint2 or uint4), and their checksum terms from word `index` on.
__device__ inline std::uint64_t terms(std::uint32_t v, std::uint64_t index) { return checksum_term(v, index); }
__device__ inline std::uint64_t terms(uint2 v, std::uint64_t index) {
  return checksum_term(v.x, index) + checksum_term(v.y, index + 1);
}
__device__ inline std::uint64_t terms(uint4 v, std::uint64_t index) {
  return checksum_term(v.x, index) + checksum_term(v.y, index + 1) + checksum_term(v.z, index + 2) +
         checksum_term(v.w, index + 3);
}

/// Copies a section (Section) into the slot, packed, and adds its checksum terms: one block per
/// row at a time, so a word's place needs no division; loads of V (4, 8 or 16 bytes), as wide as
/// the rows, pitches and pointers allow.
template <class V>
__global__ void copy_section_sum_kernel(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst,
                                        std::size_t row_loads, std::size_t rows, std::size_t total_rows,
                                        std::size_t row_pitch, std::size_t layer_pitch, std::size_t first_index,
                                        std::uint64_t* sum) {
  constexpr std::size_t words = sizeof(V) / 4;
  std::uint64_t partial = 0;
  for (std::size_t r = blockIdx.x; r < total_rows; r += gridDim.x) {
    const auto* in = reinterpret_cast<const V*>(src + (r / rows) * layer_pitch + (r % rows) * row_pitch);
    V* out = reinterpret_cast<V*>(dst) + r * row_loads;
    for (std::size_t i = threadIdx.x; i < row_loads; i += blockDim.x) {
      const V v = in[i];
      out[i] = v;
      partial += terms(v, first_index + (r * row_loads + i) * words);
    }
  }
  add_checksum(partial, sum);
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
    // A frame's cost is timed by events around its kernels: loaded at their first launch, they
    // would count the load as the first frame's cost (a program that embeds the publisher loads its
    // own kernels, docs/sdk.md; cuview-compute loads every kernel at start).
    cuda::load_kernels("the frame kernels (copies and checksums)", checksum_kernel<>, copy_sum_kernel,
                       copy_section_sum_kernel<uint4>, copy_section_sum_kernel<uint2>,
                       copy_section_sum_kernel<std::uint32_t>, trailer_kernel, add_checksum_slots_kernel<>);
    stream_ = cuda::Stream::create();
    for (auto& e : batch_done_) e = cuda::Event(cuda::EventKind::blocking_sync);
    timings_.resize(kTimedFrames);
    for (std::size_t i = 0; i < kTimedFrames; ++i) {
      timings_[i] = {cuda::Event(cuda::EventKind::timing), cuda::Event(cuda::EventKind::timing)};
      free_timings_.push_back(static_cast<int>(i));
    }
    step_events_ = {cuda::Event(cuda::EventKind::timing), cuda::Event(cuda::EventKind::timing)};
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
  std::size_t free_device_memory() const override {
    cuda::DeviceGuard guard(probe_.device);
    std::size_t free = 0, total = 0;
    cuda::check(cudaMemGetInfo(&free, &total), "asking GPU " + std::to_string(probe_.device) + " for its free memory");
    return free;
  }

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

  void begin_frame(void* slot, const SlotLayout& layout, cuda::StreamRef stream, std::uint64_t held) override {
    cuda::DeviceGuard guard(probe_.device);
    open_frame(slot, layout, held);
    timing_ = -1;
    if (!free_timings_.empty()) {
      timing_ = free_timings_.back();
      free_timings_.pop_back();
      cuda::check(cudaEventRecord(timings_[timing_].start.get(), stream.get()), "cudaEventRecord (a frame's start)");
    }
    cuda::check(cudaMemsetAsync(checksum_sink(), 0, sizeof(std::uint64_t), stream.get()),
                "clearing the checksum of a frame");
  }

  void copy(void* dst, const void* src, std::size_t bytes, cuda::StreamRef stream) override {
    cuda::DeviceGuard guard(probe_.device);
    const int f = held_field(dst, bytes);
    const BufferLocation from = f >= 0 ? locate(src) : BufferLocation{};
    if (f >= 0 && !from.host_accessible && from.device == probe_.device) {  // this GPU's own memory
      const std::size_t words = bytes / 4;
      const bool vec = (reinterpret_cast<std::uintptr_t>(src) | reinterpret_cast<std::uintptr_t>(dst)) % 16 == 0 &&
                       words % 4 == 0;
      copy_sum_kernel<<<blocks_for(vec ? words / 4 : words), kThreads, 0, stream.get()>>>(
          static_cast<const std::uint32_t*>(src), static_cast<std::uint32_t*>(dst), words,
          frame_.layout->fields[static_cast<std::size_t>(f)].offset / 4, vec, checksum_sink());
      cuda::check(cudaGetLastError(), "launching the copy of " + std::to_string(bytes) + " bytes into a ring slot");
      frame_.summed[static_cast<std::size_t>(f)] = 1;
      return;
    }
    cuda::check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream.get()),
                "cudaMemcpyAsync of " + std::to_string(bytes) + " bytes into a ring slot");
  }

  void copy_section(void* dst, const void* src, const Section& s, cuda::StreamRef stream) override {
    cuda::DeviceGuard guard(probe_.device);
    const std::size_t bytes = s.bytes();
    const int f = held_field(dst, bytes);
    const BufferLocation from = f >= 0 ? locate(src) : BufferLocation{};
    // The widest load every row start, pitch and row length allows (the slot's field is 256-aligned).
    const std::uintptr_t bits = reinterpret_cast<std::uintptr_t>(src) | s.row_bytes | s.row_pitch | s.layer_pitch;
    const std::size_t load = bits % 16 == 0 ? 16 : bits % 8 == 0 ? 8 : bits % 4 == 0 ? 4 : 0;
    if (f >= 0 && load != 0 && !from.host_accessible && from.device == probe_.device) {  // this GPU's own memory
      const std::size_t total_rows = s.rows * s.layers;
      const unsigned grid = static_cast<unsigned>(std::min<std::size_t>(total_rows, 65535));
      const auto first = frame_.layout->fields[static_cast<std::size_t>(f)].offset / 4;
      const auto* in = static_cast<const unsigned char*>(src);
      auto* out = static_cast<unsigned char*>(dst);
      if (load == 16)
        copy_section_sum_kernel<uint4><<<grid, kThreads, 0, stream.get()>>>(
            in, out, s.row_bytes / 16, s.rows, total_rows, s.row_pitch, s.layer_pitch, first, checksum_sink());
      else if (load == 8)
        copy_section_sum_kernel<uint2><<<grid, kThreads, 0, stream.get()>>>(
            in, out, s.row_bytes / 8, s.rows, total_rows, s.row_pitch, s.layer_pitch, first, checksum_sink());
      else
        copy_section_sum_kernel<std::uint32_t><<<grid, kThreads, 0, stream.get()>>>(
            in, out, s.row_bytes / 4, s.rows, total_rows, s.row_pitch, s.layer_pitch, first, checksum_sink());
      cuda::check(cudaGetLastError(), "launching the copy of a " + std::to_string(bytes) + "-byte section into a ring slot");
      frame_.summed[static_cast<std::size_t>(f)] = 1;
      return;
    }
    // Host memory, another GPU's, or rows not of whole words: the copy engine, then seal() sums.
    if (s.layers == 1 || s.layer_pitch % s.row_pitch == 0) {
      cudaMemcpy3DParms p{};
      p.srcPtr = make_cudaPitchedPtr(const_cast<void*>(src), s.row_pitch, s.row_bytes,
                                     s.layers == 1 ? s.rows : s.layer_pitch / s.row_pitch);
      p.dstPtr = make_cudaPitchedPtr(dst, s.row_bytes, s.row_bytes, s.rows);
      p.extent = make_cudaExtent(s.row_bytes, s.rows, s.layers);
      p.kind = cudaMemcpyDefault;
      cuda::check(cudaMemcpy3DAsync(&p, stream.get()),
                  "cudaMemcpy3DAsync of a " + std::to_string(bytes) + "-byte section into a ring slot");
      return;
    }
    for (std::size_t z = 0; z < s.layers; ++z)
      cuda::check(cudaMemcpy2DAsync(static_cast<std::byte*>(dst) + z * s.rows * s.row_bytes, s.row_bytes,
                                    static_cast<const std::byte*>(src) + z * s.layer_pitch, s.row_pitch, s.row_bytes,
                                    s.rows, cudaMemcpyDefault, stream.get()),
                  "cudaMemcpy2DAsync of layer " + std::to_string(z) + " of a section into a ring slot");
  }

  void seal(std::uint64_t seq, std::uint64_t step, cuda::StreamRef stream_ref) override {
    cuda::DeviceGuard guard(probe_.device);
    const cudaStream_t stream = stream_ref.get();
    const auto& layout = *frame_.layout;
    for (std::size_t i = 0; i < layout.fields.size(); ++i) {
      if (frame_.summed[i]) continue;
      const auto& f = layout.fields[i];
      const std::size_t words = f.bytes / 4;
      checksum_kernel<><<<blocks_for(words), kThreads, 0, stream>>>(
          reinterpret_cast<const std::uint32_t*>(frame_.base + f.offset), words, f.offset / 4, checksum_sink());
    }
    trailer_kernel<<<1, 1, 0, stream>>>(trailer(), seq, step);
    cuda::check(cudaGetLastError(), "launching the checksum and trailer kernels of frame " + std::to_string(seq));
    if (timing_ >= 0) {
      cuda::check(cudaEventRecord(timings_[timing_].end.get(), stream), "cudaEventRecord (a frame's end)");
      timings_[timing_].steps = frame_.steps;
    }
    in_flight_.push_back(timing_);
    frame_ = {};
  }

  void frame_step_begins(std::uint32_t steps, cuda::StreamRef stream) override {
    frame_.steps = steps;
    if (timing_ < 0) return;
    cuda::DeviceGuard guard(probe_.device);
    cuda::check(cudaEventRecord(timings_[timing_].start.get(), stream.get()), "cudaEventRecord (a frame's start)");
  }
  void timed_steps(std::uint32_t n, const std::function<void()>& steps) override {
    cuda::DeviceGuard guard(probe_.device);
    read_step_time();
    if (step_timing_ || n == 0) {  // the previous timing is still unread: these steps go untimed
      steps();
      return;
    }
    cuda::check(cudaEventRecord(step_events_.start.get(), stream_.get()), "cudaEventRecord (steps' start)");
    steps();
    cuda::check(cudaEventRecord(step_events_.end.get(), stream_.get()), "cudaEventRecord (steps' end)");
    step_events_.steps = n;
    step_timing_ = true;
  }

  std::vector<double> frame_costs() override {
    cuda::DeviceGuard guard(probe_.device);
    std::vector<double> costs;
    while (!in_flight_.empty()) {
      const int t = in_flight_.front();
      if (t >= 0) {
        const cudaError_t done = cudaEventQuery(timings_[t].end.get());
        if (done == cudaErrorNotReady) break;
        cuda::check(done, "cudaEventQuery (a frame's end)");
        float ms = 0;
        cuda::check(cudaEventElapsedTime(&ms, timings_[t].start.get(), timings_[t].end.get()),
                    "cudaEventElapsedTime (a frame's cost)");
        read_step_time();
        costs.push_back(std::max(0.0, static_cast<double>(ms) * 1e-3 - timings_[t].steps * step_s_));
        free_timings_.push_back(t);
      } else {
        costs.push_back(std::numeric_limits<double>::quiet_NaN());
      }
      in_flight_.pop_front();
    }
    return costs;
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
  static constexpr int kThreads = 256;
  [[nodiscard]] unsigned blocks_for(std::size_t items) const { return stride_blocks(items, kThreads, sms_); }
  [[nodiscard]] SlotTrailer* trailer() const {
    return reinterpret_cast<SlotTrailer*>(frame_.base + frame_.layout->trailer_offset);
  }
  std::uint64_t* checksum_sink() override {
    if (frame_.layout != nullptr) return &trailer()->checksum;
    return checksum_sink_for_nothing();
  }
  std::uint64_t* checksum_sink_for_nothing() override {
    if (scratch_.get() == nullptr) scratch_ = cuda::DeviceBuffer(sizeof(std::uint64_t));
    return static_cast<std::uint64_t*>(scratch_.get());
  }
  cuda::Probe probe_;
  cuda::DeviceBuffer scratch_;  // checksum terms of fields written outside a frame
  int sms_ = 1;
  cuda::Stream stream_;
  cuda::Event batch_done_[2];
  std::uint64_t batch_ = 0;
  // Each frame's cost: a pair of timing events around its work, kTimedFrames pairs reused.
  struct Timing {
    cuda::Event start, end;
    std::uint32_t steps = 0;  // the simulation's own steps inside the frame
  };
  /// The steps timed last (timed_steps), once their events have passed: step_s_, per step.
  void read_step_time() {
    if (!step_timing_) return;
    const cudaError_t done = cudaEventQuery(step_events_.end.get());
    if (done == cudaErrorNotReady) return;
    cuda::check(done, "cudaEventQuery (steps' end)");
    float ms = 0;
    cuda::check(cudaEventElapsedTime(&ms, step_events_.start.get(), step_events_.end.get()),
                "cudaEventElapsedTime (steps' time)");
    step_s_ = static_cast<double>(ms) * 1e-3 / step_events_.steps;
    step_timing_ = false;
  }
  Timing step_events_;
  bool step_timing_ = false;  // step_events_ recorded and not yet read
  double step_s_ = 0;         // the latest timed time per step
  std::vector<Timing> timings_;
  std::vector<int> free_timings_;
  std::deque<int> in_flight_;  // sealed frames not yet reported, oldest first (-1: not timed)
  int timing_ = -1;            // the frame being written's pair
};

}  // namespace

std::unique_ptr<Executor> make_cuda_executor(int device) {
  return std::make_unique<CudaExecutor>(device < 0 ? default_device() : device);
}

}  // namespace cuview
