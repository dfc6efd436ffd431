// The lattice-Boltzmann flow on the CUDA executor: populations double-buffered on the device, one
// thread per cell running lbm_cell (lbm.hpp) per step; the published fields are computed by a
// second kernel straight into the ring slot.
#include <algorithm>
#include <cstring>
#include <vector>

#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "cuview/error.hpp"
#include "executor/checksum.cuh"
#include "executor/executor.hpp"
#include "sims/lbm/lbm_setup.hpp"

namespace cuview::sim::lbm {
namespace {

constexpr int kBlockX = 256, kBlockY = 1;

__global__ void __launch_bounds__(kBlockX* kBlockY)
    lbm_step_kernel(const float* __restrict__ f, float* __restrict__ fo, const std::uint16_t* __restrict__ flags,
                    int width, int height, LbmParams p) {
  const int x = blockIdx.x * kBlockX + threadIdx.x, y = blockIdx.y * kBlockY + threadIdx.y;
  if (x < width && y < height) lbm_cell(f, fo, flags, x, y, width, height, p);
}

/// Every cell's flags from the mask (flags_of_cell, as the host computes them).
__global__ void lbm_flags_kernel(const std::uint8_t* __restrict__ solid, std::uint16_t* __restrict__ flags, int width,
                                 int height, bool periodic) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height)
    flags[static_cast<std::size_t>(y) * width + x] = flags_of_cell(solid, x, y, width, height, periodic);
}

struct Equilibrium {
  float f[kQ];
};
/// The initial populations: `eq` (computed on the host, so both backends start from the same bits)
/// in fluid cells, 0 in solid ones.
__global__ void lbm_initial_kernel(const std::uint16_t* __restrict__ flags, std::size_t cells, Equilibrium eq,
                                   float* __restrict__ f) {
  for (std::size_t c = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; c < cells;
       c += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const bool solid = (flags[c] & kSolidBit) != 0;
    for (int i = 0; i < kQ; ++i) f[i * cells + c] = solid ? 0.0f : eq.f[i];
  }
}

/// The published fields, written straight into the ring slot, their checksum terms added as they
/// are written (Executor::sum_into): a fixed grid of blocks walks 32×8 tiles, so each block adds
/// its sum with one atomic.
struct ObserveTargets {
  float *velocity, *speed, *vorticity, *density;
  std::uint64_t w_velocity, w_speed, w_vorticity, w_density;  // first words in the slot
  std::uint64_t* sum;
};
constexpr int kTileW = 32, kTileH = 8;

__global__ void __launch_bounds__(kTileW* kTileH)
    lbm_observe_kernel(const float* __restrict__ f, const std::uint16_t* __restrict__ flags, int width, int height,
                       float force, ObserveTargets t) {
  const int tiles_x = (width + kTileW - 1) / kTileW, tiles = tiles_x * ((height + kTileH - 1) / kTileH);
  std::uint64_t partial = 0;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int x = (tile % tiles_x) * kTileW + threadIdx.x, y = (tile / tiles_x) * kTileH + threadIdx.y;
    if (x >= width || y >= height) continue;
    const std::size_t at = static_cast<std::size_t>(y) * width + x;
    const Observed o = lbm_observe(f, flags, x, y, width, height, force, t.velocity, t.speed, t.vorticity, t.density);
    partial += float_term(o.ux, t.w_velocity + 2 * at) + float_term(o.uy, t.w_velocity + 2 * at + 1) +
               float_term(o.speed, t.w_speed + at) + float_term(o.vorticity, t.w_vorticity + at) +
               float_term(o.rho, t.w_density + at);
  }
  add_checksum(partial, t.sum);
}

class LbmCuda final : public Simulation {
 public:
  LbmCuda(Executor& executor, int width, int height, const LbmOptions& o)
      : executor_(executor),
        device_(executor.device_id()),
        stream_(executor.stream().get()),
        w_(width),
        h_(height),
        o_(o) {
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device_), "counting the GPU's SMs");
    mask_ = obstacle_mask(w_, h_, o_);
    flags_ = cuda::DeviceBuffer(cells() * sizeof(std::uint16_t));
    f_[0] = cuda::DeviceBuffer(cells() * kQ * sizeof(float));
    f_[1] = cuda::DeviceBuffer(cells() * kQ * sizeof(float));
    upload_mask();
  }
  std::vector<FieldSpec> fields() const override { return lbm::fields(); }
  std::vector<ParamSpec> params() const override { return lbm::params(); }
  std::vector<Preset> presets() const override { return lbm::presets(); }
  void set_params(const std::map<std::string, double>& values) override { p_ = from(values, o_); }

  void reset(std::uint64_t) override {
    cuda::DeviceGuard guard(device_);
    Equilibrium eq{};
    for (int i = 0; i < kQ; ++i) eq.f[i] = shifted_equilibrium(i, 0.0f, 1.0f, o_.periodic ? 0.0f : p_.u_in, 0.0f);
    cur_ = 0;
    lbm_initial_kernel<<<std::max(1, 8 * sms_), 256, 0, stream_>>>(static_cast<const std::uint16_t*>(flags_.get()),
                                                                   cells(), eq, static_cast<float*>(f_[0].get()));
    cuda::check(cudaGetLastError(), "launching the lattice-Boltzmann initial-state kernel");
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after reset");
  }

  void step(std::uint32_t steps) override {
    cuda::DeviceGuard guard(device_);
    const dim3 block(kBlockX, kBlockY), grid((w_ + kBlockX - 1) / kBlockX, (h_ + kBlockY - 1) / kBlockY);
    for (std::uint32_t s = 0; s < steps; ++s) {
      lbm_step_kernel<<<grid, block, 0, stream_>>>(static_cast<const float*>(f_[cur_].get()),
                                                   static_cast<float*>(f_[1 - cur_].get()),
                                                   static_cast<const std::uint16_t*>(flags_.get()), w_, h_, p_);
      cur_ = 1 - cur_;
    }
    cuda::check(cudaGetLastError(), "launching the lattice-Boltzmann step kernel");
  }

  std::vector<InputSpec> inputs() const override { return lbm::inputs(); }
  void draw(const Stroke& s) override {
    cuda::DeviceGuard guard(device_);
    // The previous upload reads flags_host_ (pageable memory): let it finish before changing it.
    cuda::check(cudaStreamSynchronize(stream_), "waiting before an obstacle edit");
    if (flags_host_.empty()) {  // made on the GPU at the start: fetched at the first edit
      flags_host_.resize(cells());
      cuda::check(cudaMemcpy(flags_host_.data(), flags_.get(), cells() * sizeof(std::uint16_t), cudaMemcpyDeviceToHost),
                  "fetching the obstacle flags");
    }
    const Touched t = lbm::draw(s, mask_, flags_host_, w_, h_, o_);
    const std::size_t pitch = static_cast<std::size_t>(w_) * sizeof(std::uint16_t);
    const std::size_t first = static_cast<std::size_t>(t.y0) * w_ + t.x0;
    cuda::check(cudaMemcpy2DAsync(static_cast<std::uint16_t*>(flags_.get()) + first, pitch, flags_host_.data() + first,
                                  pitch, static_cast<std::size_t>(t.x1 - t.x0) * sizeof(std::uint16_t),
                                  static_cast<std::size_t>(t.y1 - t.y0), cudaMemcpyHostToDevice, stream_),
                "uploading an obstacle edit");
  }

  std::vector<StateSpec> state() const override { return lbm::state(w_, h_); }
  void save_state(const std::vector<void*>& out) override {
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaMemcpyAsync(out[0], f_[cur_].get(), cells() * kQ * sizeof(float), cudaMemcpyDeviceToHost, stream_),
                "saving the populations");
    std::memcpy(out[1], mask_.data(), mask_.size());  // the host copy is the truth (draw() keeps it)
  }
  void load_state(const std::vector<const void*>& in) override {
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaStreamSynchronize(stream_), "waiting before restoring the state");  // flags_host_ may be in flight
    std::memcpy(mask_.data(), in[1], mask_.size());
    upload_mask();
    cur_ = 0;
    cuda::check(cudaMemcpyAsync(f_[0].get(), in[0], cells() * kQ * sizeof(float), cudaMemcpyHostToDevice, stream_),
                "restoring the populations");
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after restoring the state");
  }

  void write_fields(const std::vector<FieldTarget>& t) override {
    cuda::DeviceGuard guard(device_);
    const FieldChecksum v = executor_.sum_into(t[0]), s = executor_.sum_into(t[1]), w = executor_.sum_into(t[2]),
                        d = executor_.sum_into(t[3]);
    const ObserveTargets targets{static_cast<float*>(t[0].data), static_cast<float*>(t[1].data),
                                 static_cast<float*>(t[2].data), static_cast<float*>(t[3].data),
                                 v.first_word, s.first_word, w.first_word, d.first_word, v.sum};
    const int tiles = ((w_ + kTileW - 1) / kTileW) * ((h_ + kTileH - 1) / kTileH);
    lbm_observe_kernel<<<std::min(tiles, 8 * sms_), dim3(kTileW, kTileH), 0, stream_>>>(
        static_cast<const float*>(f_[cur_].get()), static_cast<const std::uint16_t*>(flags_.get()), w_, h_, p_.force,
        targets);
    cuda::check(cudaGetLastError(), "launching the lattice-Boltzmann field kernel");
  }

 private:
  [[nodiscard]] std::size_t cells() const { return static_cast<std::size_t>(w_) * h_; }
  /// The device flags from mask_, computed on the GPU; the host copy is made again at the next edit.
  void upload_mask() {
    cuda::DeviceBuffer solid(cells());
    cuda::check(cudaMemcpyAsync(solid.get(), mask_.data(), cells(), cudaMemcpyHostToDevice, stream_),
                "uploading the obstacle mask");
    const dim3 block(32, 8), grid((w_ + 31) / 32, (h_ + 7) / 8);
    lbm_flags_kernel<<<grid, block, 0, stream_>>>(static_cast<const std::uint8_t*>(solid.get()),
                                                  static_cast<std::uint16_t*>(flags_.get()), w_, h_, o_.periodic);
    cuda::check(cudaGetLastError(), "launching the obstacle-flags kernel");
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after computing the obstacle flags");
    flags_host_.clear();
    flags_host_.shrink_to_fit();
  }
  Executor& executor_;
  int device_, sms_ = 1;
  cudaStream_t stream_;
  int w_, h_;
  LbmOptions o_;
  LbmParams p_;
  std::vector<std::uint8_t> mask_;
  std::vector<std::uint16_t> flags_host_;
  cuda::DeviceBuffer flags_, f_[2];
  int cur_ = 0;
};

}  // namespace

std::unique_ptr<Simulation> make_cuda(Executor& executor, int width, int height, const LbmOptions& o) {
  return std::make_unique<LbmCuda>(executor, width, height, o);
}

}  // namespace cuview::sim::lbm
