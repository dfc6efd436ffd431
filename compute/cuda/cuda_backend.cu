// The CUDA backend: state double-buffered on the GPU, one cudaMalloc per ring slot exported
// with cudaIpcGetMemHandle, one interprocess event per slot recorded after each frame's copy.
#include <algorithm>
#include <vector>

#include "backend.hpp"
#include "cuview/cuda_ipc.hpp"
#include "cuview/error.hpp"
#include "sim/params.hpp"

namespace cuview {
namespace {

// One step per launch. Each thread owns one column of kRows cells and marches down it, keeping
// the rows above, at and below in registers: per cell it loads one new row of u and v plus the
// left and right neighbours (which its warp has just loaded: L1 hits). Periodic wrap is resolved
// once per column.
constexpr int kBlockX = 32, kBlockY = 8, kRows = 16;

__global__ void __launch_bounds__(kBlockX * kBlockY)
    grayscott_step_kernel(const float* __restrict__ u, const float* __restrict__ v, float* __restrict__ uo,
                          float* __restrict__ vo, int width, int height, sim::GrayScottParams p) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y0 = (blockIdx.y * kBlockY + threadIdx.y) * kRows;
  if (x >= width || y0 >= height) return;
  const int xl = x == 0 ? width - 1 : x - 1;
  const int xr = x == width - 1 ? 0 : x + 1;
  const std::size_t w = static_cast<std::size_t>(width);
  std::size_t row = static_cast<std::size_t>(y0) * w;
  const std::size_t up = static_cast<std::size_t>(y0 == 0 ? height - 1 : y0 - 1) * w;
  float u_up = __ldg(u + up + x), v_up = __ldg(v + up + x);
  float uc = __ldg(u + row + x), vc = __ldg(v + row + x);
  const int rows = min(kRows, height - y0);
  for (int r = 0; r < rows; ++r) {
    const int y = y0 + r;
    const std::size_t down = static_cast<std::size_t>(y == height - 1 ? 0 : y + 1) * w;
    const float u_down = __ldg(u + down + x), v_down = __ldg(v + down + x);
    const float lap_u = sim::laplacian5(__ldg(u + row + xl), __ldg(u + row + xr), u_up, u_down, uc);
    const float lap_v = sim::laplacian5(__ldg(v + row + xl), __ldg(v + row + xr), v_up, v_down, vc);
    sim::grayscott_update(uc, vc, lap_u, lap_v, p, uo[row + x], vo[row + x]);
    u_up = uc, v_up = vc;
    uc = u_down, vc = v_down;
    row = down;
  }
}

// K steps per launch (temporal blocking): a block loads a tile of kTileX x kTileY cells plus a
// halo of K cells into shared memory, runs K-1 steps there (each shrinking the valid region by
// one cell per side) and writes the K-th step's tile. Memory traffic per step drops by ~K at
// the price of recomputing the halo. Within a step each thread marches down one column segment
// with the rows above, at and below in registers (6 shared-memory loads per cell, not 10). The
// arithmetic is grayscott_update on laplacian5, as in the one-step kernel: the same bits.
constexpr int kTileX = 64, kTileY = 32, kTileThreads = 256;
constexpr int kMaxFused = 4;  // 2 x 2 fields x (64+8) x (32+8) floats = 46 KB of shared memory

__device__ __forceinline__ int wrap(int i, int n) { return ((i % n) + n) % n; }

/// One step over the region [S, SW-S) x [S, SH-S) of a tile of row stride SW, from (iu, iv) into
/// shared (ou, ov) with the same layout, or, on the last step, into the global grid.
template <int SW, int SH, int S, bool Last>
__device__ __forceinline__ void tile_step(const float* iu, const float* iv, float* ou, float* ov, int x0, int y0,
                                          int width, int height, const sim::GrayScottParams& p) {
  constexpr int w = SW - 2 * S, h = SH - 2 * S;
  constexpr int segments = kTileThreads / w > 0 ? kTileThreads / w : 1;  // column segments per column
  constexpr int len = (h + segments - 1) / segments;
  for (int item = threadIdx.x; item < w * segments; item += kTileThreads) {
    const int col = S + item % w;
    const int r0 = S + (item / w) * len;
    const int r1 = min(r0 + len, SH - S);
    if (r0 >= r1) continue;
    float u_up = iu[(r0 - 1) * SW + col], v_up = iv[(r0 - 1) * SW + col];
    float uc = iu[r0 * SW + col], vc = iv[r0 * SW + col];
    for (int r = r0; r < r1; ++r) {
      const float u_down = iu[(r + 1) * SW + col], v_down = iv[(r + 1) * SW + col];
      const float lap_u = sim::laplacian5(iu[r * SW + col - 1], iu[r * SW + col + 1], u_up, u_down, uc);
      const float lap_v = sim::laplacian5(iv[r * SW + col - 1], iv[r * SW + col + 1], v_up, v_down, vc);
      if constexpr (Last) {
        const int gx = x0 + col, gy = y0 + r;
        if (gx < width && gy < height) {
          const std::size_t g = static_cast<std::size_t>(gy) * width + gx;
          sim::grayscott_update(uc, vc, lap_u, lap_v, p, ou[g], ov[g]);
        }
      } else {
        sim::grayscott_update(uc, vc, lap_u, lap_v, p, ou[r * SW + col], ov[r * SW + col]);
      }
      u_up = uc, v_up = vc;
      uc = u_down, vc = v_down;
    }
  }
}

template <int SW, int SH, int K, int S>
__device__ __forceinline__ void tile_steps(float (*su)[SH * SW], float (*sv)[SH * SW], float* uo, float* vo, int x0,
                                           int y0, int width, int height, const sim::GrayScottParams& p) {
  constexpr int a = (S - 1) & 1, b = S & 1;
  if constexpr (S == K) {
    tile_step<SW, SH, S, true>(su[a], sv[a], uo, vo, x0, y0, width, height, p);
  } else {
    tile_step<SW, SH, S, false>(su[a], sv[a], su[b], sv[b], x0, y0, width, height, p);
    __syncthreads();
    tile_steps<SW, SH, K, S + 1>(su, sv, uo, vo, x0, y0, width, height, p);
  }
}

template <int K>
__global__ void __launch_bounds__(kTileThreads)
    grayscott_fused_kernel(const float* __restrict__ u, const float* __restrict__ v, float* __restrict__ uo,
                           float* __restrict__ vo, int width, int height, sim::GrayScottParams p) {
  static_assert(K >= 2 && K <= kMaxFused);
  constexpr int SW = kTileX + 2 * K, SH = kTileY + 2 * K;
  __shared__ float su[2][SH * SW], sv[2][SH * SW];
  const int x0 = blockIdx.x * kTileX - K, y0 = blockIdx.y * kTileY - K;  // global cell of tile cell 0
  const bool inside = x0 >= 0 && y0 >= 0 && x0 + SW <= width && y0 + SH <= height;
  for (int i = threadIdx.x; i < SW * SH; i += kTileThreads) {
    const int ly = i / SW, lx = i - ly * SW;
    const int gx = inside ? x0 + lx : wrap(x0 + lx, width);
    const int gy = inside ? y0 + ly : wrap(y0 + ly, height);
    const std::size_t g = static_cast<std::size_t>(gy) * width + gx;
    su[0][i] = __ldg(u + g);
    sv[0][i] = __ldg(v + g);
  }
  __syncthreads();
  tile_steps<SW, SH, K, 1>(su, sv, uo, vo, x0, y0, width, height, p);
}

/// Writes the GPU's global timer into the trailer once the frame's copy is done (it runs after
/// publish_kernel on the same stream): the moment the frame was complete, for latency figures.
__global__ void stamp_kernel(SlotTrailer* trailer) {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  trailer->done_ns = t;
}

/// Copies both fields into a slot and sums the frame checksum in the same pass, so the
/// checksum costs no extra trip through memory. The trailer's checksum word is zeroed first.
__global__ void publish_kernel(const float* __restrict__ u, const float* __restrict__ v, unsigned char* slot,
                               std::size_t cells, std::size_t field_stride, std::size_t trailer_offset,
                               std::uint64_t seq, std::uint64_t step) {
  const auto* su = reinterpret_cast<const std::uint32_t*>(u);
  const auto* sv = reinterpret_cast<const std::uint32_t*>(v);
  auto* du = reinterpret_cast<std::uint32_t*>(slot);
  auto* dv = reinterpret_cast<std::uint32_t*>(slot + field_stride);
  std::uint64_t sum = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < cells;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t a = su[i];
    const std::uint32_t b = sv[i];
    du[i] = a;
    dv[i] = b;
    sum += checksum_term(a, i) + checksum_term(b, cells + i);
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  auto* trailer = reinterpret_cast<SlotTrailer*>(slot + trailer_offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(reinterpret_cast<unsigned long long*>(&trailer->checksum), sum);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    trailer->seq = seq;
    trailer->step = step;
  }
}

class CudaBackend final : public SimBackend {
 public:
  explicit CudaBackend(const BackendConfig& cfg)
      : w_(static_cast<int>(cfg.width)), h_(static_cast<int>(cfg.height)), fused_(cfg.steps_per_launch) {
    if (fused_ < 1 || fused_ > kMaxFused)
      throw Error(Errc::out_of_range, "steps per launch must be 1 to " + std::to_string(kMaxFused) + ", not " +
                                          std::to_string(fused_));
    probe_ = cuda::probe();
    if (!probe_.usable) throw Error(Errc::cuda, "the CUDA backend cannot start: " + probe_.reason);
    cuda::check(cudaSetDevice(probe_.device), "cudaSetDevice(" + std::to_string(probe_.device) + ")");
    cudaDeviceProp prop{};
    cuda::check(cudaGetDeviceProperties(&prop, probe_.device), "cudaGetDeviceProperties");
    sms_ = prop.multiProcessorCount;
    layout_ = SlotLayout::make(cfg.width, cfg.height, sim::kFieldCount);
    const std::size_t bytes = layout_.cells * sizeof(float);
    for (int i = 0; i < 2; ++i) {
      u_[i] = cuda::DeviceBuffer(bytes);
      v_[i] = cuda::DeviceBuffer(bytes);
    }
    stream_ = cuda::Stream::create();
    for (std::uint32_t s = 0; s < cfg.slots; ++s) {
      slots_.emplace_back(layout_.slot_bytes);
      cuda::check(cudaMemset(slots_.back().get(), 0, layout_.slot_bytes), "cudaMemset of ring slot");
      events_.emplace_back(cuda::EventKind::interprocess);
      // Record once so that a client waiting on a never-written slot's event does not block.
      cuda::check(cudaEventRecord(events_.back().get(), stream_.get()), "cudaEventRecord (initial)");
    }
    for (auto& e : batch_done_) e = cuda::Event(cuda::EventKind::blocking_sync);
    cuda::check(cudaStreamSynchronize(stream_.get()), "cudaStreamSynchronize after allocating the ring");
  }

  ~CudaBackend() override { cudaStreamSynchronize(stream_.get()); }

  std::string kind() const override { return "cuda"; }
  std::string device() const override { return probe_.name + " (PCI " + probe_.pci_bus_id + ")"; }

  void reset(std::uint64_t seed) override {
    std::vector<float> u(layout_.cells), v(layout_.cells);
    sim::initial_state(w_, h_, seed, u.data(), v.data());
    cur_ = 0;
    const std::size_t bytes = layout_.cells * sizeof(float);
    cuda::check(cudaMemcpyAsync(u_[0].get(), u.data(), bytes, cudaMemcpyHostToDevice, stream_.get()),
                "uploading the initial u");
    cuda::check(cudaMemcpyAsync(v_[0].get(), v.data(), bytes, cudaMemcpyHostToDevice, stream_.get()),
                "uploading the initial v");
    cuda::check(cudaStreamSynchronize(stream_.get()), "cudaStreamSynchronize after reset");
  }

  void advance(std::uint32_t steps, const sim::GrayScottParams& p) override {
    std::uint32_t s = 0;
    if (fused_ >= 2) {
      const dim3 grid((w_ + kTileX - 1) / kTileX, (h_ + kTileY - 1) / kTileY);
      for (; s + fused_ <= steps; s += fused_) {
        const auto* u = static_cast<const float*>(u_[cur_].get());
        const auto* v = static_cast<const float*>(v_[cur_].get());
        auto* uo = static_cast<float*>(u_[1 - cur_].get());
        auto* vo = static_cast<float*>(v_[1 - cur_].get());
        switch (fused_) {
          case 2: grayscott_fused_kernel<2><<<grid, kTileThreads, 0, stream_.get()>>>(u, v, uo, vo, w_, h_, p); break;
          case 3: grayscott_fused_kernel<3><<<grid, kTileThreads, 0, stream_.get()>>>(u, v, uo, vo, w_, h_, p); break;
          default: grayscott_fused_kernel<4><<<grid, kTileThreads, 0, stream_.get()>>>(u, v, uo, vo, w_, h_, p); break;
        }
        cur_ = 1 - cur_;
      }
    }
    const dim3 block(kBlockX, kBlockY);
    const int rows_per_block = kBlockY * kRows;
    const dim3 grid((w_ + kBlockX - 1) / kBlockX, (h_ + rows_per_block - 1) / rows_per_block);
    for (; s < steps; ++s) {  // what fused launches leave over, one step at a time
      grayscott_step_kernel<<<grid, block, 0, stream_.get()>>>(
          static_cast<const float*>(u_[cur_].get()), static_cast<const float*>(v_[cur_].get()),
          static_cast<float*>(u_[1 - cur_].get()), static_cast<float*>(v_[1 - cur_].get()), w_, h_, p);
      cur_ = 1 - cur_;
    }
    cuda::check(cudaGetLastError(), "launching the Gray–Scott step kernels");
    // Keep at most two batches queued, so the loop stays responsive and never runs far ahead.
    auto& done = batch_done_[batch_ & 1];
    cuda::check(cudaEventRecord(done.get(), stream_.get()), "cudaEventRecord (batch)");
    ++batch_;
    if (batch_ >= 2)
      cuda::check(cudaEventSynchronize(batch_done_[batch_ & 1].get()), "waiting for the previous batch of steps");
  }

  void publish(std::uint32_t slot, std::uint64_t seq, std::uint64_t step) override {
    auto* base = static_cast<unsigned char*>(slots_[slot].get());
    auto* trailer = reinterpret_cast<SlotTrailer*>(base + layout_.trailer_offset);
    cuda::check(cudaMemsetAsync(&trailer->checksum, 0, sizeof trailer->checksum, stream_.get()),
                "clearing the checksum of slot " + std::to_string(slot));
    const int threads = 256;
    const int blocks = static_cast<int>(
        std::min<std::size_t>((layout_.cells + threads - 1) / threads, static_cast<std::size_t>(sms_) * 8));
    publish_kernel<<<blocks, threads, 0, stream_.get()>>>(
        static_cast<const float*>(u_[cur_].get()), static_cast<const float*>(v_[cur_].get()), base, layout_.cells,
        layout_.field_stride, layout_.trailer_offset, seq, step);
    cuda::check(cudaGetLastError(), "launching publish_kernel for slot " + std::to_string(slot));
    stamp_kernel<<<1, 1, 0, stream_.get()>>>(trailer);
    cuda::check(cudaGetLastError(), "launching stamp_kernel for slot " + std::to_string(slot));
    cuda::check(cudaEventRecord(events_[slot].get(), stream_.get()),
                "recording the interprocess event of slot " + std::to_string(slot));
  }

  void finish() override { cuda::check(cudaStreamSynchronize(stream_.get()), "cudaStreamSynchronize at exit"); }

  DeviceSlot device_slot(std::uint32_t slot) const override { return {slots_.at(slot).get(), stream_.get()}; }

  void fill_handles(proto::HandlesResult& h) const override {
    h.device_pci = probe_.pci_bus_id;
    h.slots.clear();
    for (std::size_t s = 0; s < slots_.size(); ++s)
      h.slots.push_back({cuda::to_bytes(slots_[s].ipc_handle()), cuda::to_bytes(events_[s].ipc_handle()), 0});
  }

 private:
  int w_, h_;
  std::uint32_t fused_;  // steps per launch of the fused kernel; 1 = the one-step kernel only
  int sms_ = 1;
  cuda::Probe probe_;
  cuda::DeviceBuffer u_[2], v_[2];
  int cur_ = 0;
  cuda::Stream stream_;
  std::vector<cuda::DeviceBuffer> slots_;
  std::vector<cuda::Event> events_;
  cuda::Event batch_done_[2];
  std::uint64_t batch_ = 0;
};

}  // namespace

std::unique_ptr<SimBackend> make_cuda_backend(const BackendConfig& cfg) { return std::make_unique<CudaBackend>(cfg); }

}  // namespace cuview
