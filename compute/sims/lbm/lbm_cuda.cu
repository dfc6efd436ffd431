// The lattice-Boltzmann flow on the CUDA executor: populations double-buffered on the device, one
// thread per cell running lbm_cell (lbm.hpp) per step; the published fields are computed by a
// second kernel straight into the ring slot.
#include <cstring>
#include <vector>

#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "cuview/error.hpp"
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

__global__ void lbm_observe_kernel(const float* __restrict__ f, const std::uint16_t* __restrict__ flags, int width,
                                   int height, float force, float* velocity, float* speed, float* vorticity,
                                   float* density) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) lbm_observe(f, flags, x, y, width, height, force, velocity, speed, vorticity, density);
}

class LbmCuda final : public Simulation {
 public:
  LbmCuda(Executor& executor, int width, int height, const LbmOptions& o)
      : device_(executor.device_id()),
        stream_(executor.stream().get()),
        w_(width),
        h_(height),
        o_(o) {
    cuda::DeviceGuard guard(device_);
    mask_ = obstacle_mask(w_, h_, o_);
    flags_host_ = cell_flags(mask_, w_, h_, o_);
    const auto& flags = flags_host_;
    flags_ = cuda::DeviceBuffer(cells() * sizeof(std::uint16_t));
    f_[0] = cuda::DeviceBuffer(cells() * kQ * sizeof(float));
    f_[1] = cuda::DeviceBuffer(cells() * kQ * sizeof(float));
    cuda::check(
        cudaMemcpyAsync(flags_.get(), flags.data(), cells() * sizeof(std::uint16_t), cudaMemcpyHostToDevice, stream_),
        "uploading the obstacle flags");
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after uploading the mask");
  }
  std::vector<FieldSpec> fields() const override { return lbm::fields(); }
  std::vector<ParamSpec> params() const override { return lbm::params(); }
  std::vector<Preset> presets() const override { return lbm::presets(); }
  void set_params(const std::map<std::string, double>& values) override { p_ = from(values, o_); }

  void reset(std::uint64_t) override {
    cuda::DeviceGuard guard(device_);
    std::vector<float> f(cells() * kQ);
    initial_state(w_, h_, mask_, o_.periodic ? 0.0f : p_.u_in, f.data());
    cur_ = 0;
    cuda::check(cudaMemcpyAsync(f_[0].get(), f.data(), f.size() * sizeof(float), cudaMemcpyHostToDevice, stream_),
                "uploading the initial populations");
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
    flags_host_ = cell_flags(mask_, w_, h_, o_);
    cur_ = 0;
    cuda::check(cudaMemcpyAsync(f_[0].get(), in[0], cells() * kQ * sizeof(float), cudaMemcpyHostToDevice, stream_),
                "restoring the populations");
    cuda::check(cudaMemcpyAsync(flags_.get(), flags_host_.data(), cells() * sizeof(std::uint16_t),
                                cudaMemcpyHostToDevice, stream_),
                "restoring the obstacle flags");
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after restoring the state");
  }

  void write_fields(const std::vector<FieldTarget>& t) override {
    cuda::DeviceGuard guard(device_);
    const dim3 block(32, 8), grid((w_ + 31) / 32, (h_ + 7) / 8);
    lbm_observe_kernel<<<grid, block, 0, stream_>>>(static_cast<const float*>(f_[cur_].get()),
                                                    static_cast<const std::uint16_t*>(flags_.get()), w_, h_, p_.force,
                                                    static_cast<float*>(t[0].data), static_cast<float*>(t[1].data),
                                                    static_cast<float*>(t[2].data), static_cast<float*>(t[3].data));
    cuda::check(cudaGetLastError(), "launching the lattice-Boltzmann field kernel");
  }

 private:
  [[nodiscard]] std::size_t cells() const { return static_cast<std::size_t>(w_) * h_; }
  int device_;
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
