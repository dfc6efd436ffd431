// N-body on the CUDA executor: bodies as float4 (position, mass), velocities and accelerations on
// the device. The force kernel is the classic all-pairs tiling: each thread owns two bodies (one
// shared-memory load feeds two independent interactions; 64 × 4, best in a standalone probe, was
// 2-4 points slower here on an H100, docs/benchmarks.md); a block stages a tile of bodies in
// shared memory and every thread sums their pulls (interact(), nbody.hpp), unrolled; small N
// splits the sources across grid rows so every SM has work (their pulls summed in order, so every
// run gives the same bits). Compiled with flush-to-zero,
// so rsqrtf is the bare hardware instruction. Leapfrog kicks and drifts are two small kernels.
#include <algorithm>
#include <vector>

#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "cuview/error.hpp"
#include "sims/nbody/nbody_setup.hpp"

namespace cuview::sim::nbody {
namespace {

constexpr int kThreads = 128, kPer = 2, kTile = kPer * kThreads;  // a block owns kTile bodies, kPer per thread

/// Pulls on the block's kTile bodies from bodies [j0, j1) (whole tiles; the last may run past n),
/// stored in row blockIdx.y of `acc` (n bodies per row): one row per split of the sources.
__global__ void __launch_bounds__(kThreads)
    accel_kernel(const float4* __restrict__ pm, float4* __restrict__ acc, int n, int chunk, float eps2) {
  __shared__ float4 tile[kTile];
  float4 me[kPer];
  float ax[kPer] = {}, ay[kPer] = {}, az[kPer] = {};
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int i = blockIdx.x * kTile + k * kThreads + threadIdx.x;
    me[k] = i < n ? pm[i] : make_float4(0, 0, 0, 0);
  }
  const int j0 = blockIdx.y * chunk, j1 = min(n, j0 + chunk);
  for (int base = j0; base < j1; base += kTile) {
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int j = base + k * kThreads + threadIdx.x;
      tile[k * kThreads + threadIdx.x] = j < j1 ? pm[j] : make_float4(0, 0, 0, 0);  // mass 0: no pull
    }
    __syncthreads();
#pragma unroll 16
    for (int t = 0; t < kTile; ++t) {
      const float4 s = tile[t];
#pragma unroll
      for (int k = 0; k < kPer; ++k) interact(me[k].x, me[k].y, me[k].z, s.x, s.y, s.z, s.w, eps2, ax[k], ay[k], az[k]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int i = blockIdx.x * kTile + k * kThreads + threadIdx.x;
    if (i < n) acc[static_cast<std::size_t>(blockIdx.y) * n + i] = make_float4(ax[k], ay[k], az[k], 0);
  }
}

/// Sums the splits' rows in their order (never atomically: the same bits on every run, which
/// checkpoints and the host comparison rely on).
__global__ void sum_splits_kernel(const float4* __restrict__ part, float4* __restrict__ acc, int n, int splits) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 a = part[i];
  for (int s = 1; s < splits; ++s) {
    const float4 b = part[static_cast<std::size_t>(s) * n + i];
    a.x += b.x, a.y += b.y, a.z += b.z;
  }
  acc[i] = a;
}

__global__ void kick_drift_kernel(float4* pm, float4* vel, const float4* acc, int n, float half_dt, float dt) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 v = vel[i], p = pm[i];
  const float4 a = acc[i];
  v.x += half_dt * a.x, v.y += half_dt * a.y, v.z += half_dt * a.z;
  p.x += dt * v.x, p.y += dt * v.y, p.z += dt * v.z;
  vel[i] = v, pm[i] = p;
}

__global__ void kick_kernel(float4* vel, const float4* acc, int n, float half_dt) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 v = vel[i];
  const float4 a = acc[i];
  v.x += half_dt * a.x, v.y += half_dt * a.y, v.z += half_dt * a.z;
  vel[i] = v;
}

__global__ void publish_kernel(const float4* __restrict__ pm, const float4* __restrict__ vel, int n, float half_width,
                               int width, int height, float* density, float* pos, float* v3, float* mass) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 p = pm[i], v = vel[i];
  pos[3 * i] = p.x, pos[3 * i + 1] = p.y, pos[3 * i + 2] = p.z;
  v3[3 * i] = v.x, v3[3 * i + 1] = v.y, v3[3 * i + 2] = v.z;
  mass[i] = p.w;
  const float cell = 2.0f * half_width / static_cast<float>(min(width, height));
  const int gx = static_cast<int>(floorf(p.x / cell + 0.5f * width));
  const int gy = static_cast<int>(floorf(p.y / cell + 0.5f * height));
  if (gx >= 0 && gx < width && gy >= 0 && gy < height)
    atomicAdd(density + static_cast<std::size_t>(gy) * width + gx, 1.0f);
}

class NbodyCuda final : public Simulation {
 public:
  NbodyCuda(Executor& executor, int width, int height, const NbodyOptions& o)
      : device_(executor.device_id()),
        stream_(executor.stream().get()),
        w_(width),
        h_(height),
        o_(o),
        n_(static_cast<int>(o.bodies)) {
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device_), "counting the GPU's SMs");
    pm_ = cuda::DeviceBuffer(sizeof(float4) * o.bodies);
    vel_ = cuda::DeviceBuffer(sizeof(float4) * o.bodies);
    acc_ = cuda::DeviceBuffer(sizeof(float4) * o.bodies);
    if (const int rows = split().rows; rows > 1) part_ = cuda::DeviceBuffer(sizeof(float4) * o.bodies * rows);
  }
  std::vector<FieldSpec> fields() const override { return nbody::fields(); }
  std::vector<ParticleSetSpec> particle_sets() const override {
    return nbody::particle_sets(o_.bodies, o_.galaxies, w_, h_);
  }
  std::vector<InputSpec> inputs() const override { return nbody::inputs(); }
  void draw(const Stroke& s) override {  // rare: bring the bodies over, edit, send them back
    cuda::DeviceGuard guard(device_);
    State st;
    st.pos_mass.resize(4 * o_.bodies), st.vel.resize(4 * o_.bodies);
    const std::size_t bytes = sizeof(float4) * o_.bodies;
    cuda::check(cudaMemcpyAsync(st.pos_mass.data(), pm_.get(), bytes, cudaMemcpyDeviceToHost, stream_),
                "reading the bodies for a stroke");
    cuda::check(cudaMemcpyAsync(st.vel.data(), vel_.get(), bytes, cudaMemcpyDeviceToHost, stream_),
                "reading the velocities for a stroke");
    cuda::check(cudaStreamSynchronize(stream_), "waiting for the bodies");
    nbody::draw(s, st, o_.bodies, o_.galaxies, w_, h_);
    cuda::check(cudaMemcpyAsync(pm_.get(), st.pos_mass.data(), bytes, cudaMemcpyHostToDevice, stream_),
                "writing the bodies back");
    cuda::check(cudaMemcpyAsync(vel_.get(), st.vel.data(), bytes, cudaMemcpyHostToDevice, stream_),
                "writing the velocities back");
    accelerations();
    cuda::check(cudaStreamSynchronize(stream_), "applying a stroke to the bodies");
  }
  std::vector<ParamSpec> params() const override { return nbody::params(); }
  std::vector<Preset> presets() const override { return nbody::presets(); }
  void set_params(const std::map<std::string, double>& values) override { p_ = from(values); }
  double time_per_step() const override { return p_.dt; }

  void reset(std::uint64_t seed) override {
    cuda::DeviceGuard guard(device_);
    const State s = initial_state(o_.bodies, o_.galaxies, seed);
    const std::size_t bytes = sizeof(float4) * o_.bodies;
    cuda::check(cudaMemcpyAsync(pm_.get(), s.pos_mass.data(), bytes, cudaMemcpyHostToDevice, stream_),
                "uploading the bodies");
    cuda::check(cudaMemcpyAsync(vel_.get(), s.vel.data(), bytes, cudaMemcpyHostToDevice, stream_),
                "uploading the velocities");
    accelerations();
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after reset");
  }

  void step(std::uint32_t steps) override {
    cuda::DeviceGuard guard(device_);
    const int blocks = (n_ + 255) / 256;
    for (std::uint32_t s = 0; s < steps; ++s) {
      kick_drift_kernel<<<blocks, 256, 0, stream_>>>(pm(), vel(), acc(), n_, 0.5f * p_.dt, p_.dt);
      accelerations();
      kick_kernel<<<blocks, 256, 0, stream_>>>(vel(), acc(), n_, 0.5f * p_.dt);
    }
    cuda::check(cudaGetLastError(), "launching the N-body kernels");
  }

  std::vector<StateSpec> state() const override { return nbody::state(o_.bodies); }
  void save_state(const std::vector<void*>& out) override {
    cuda::DeviceGuard guard(device_);
    const std::size_t bytes = sizeof(float4) * o_.bodies;
    cuda::check(cudaMemcpyAsync(out[0], pm_.get(), bytes, cudaMemcpyDeviceToHost, stream_), "saving the bodies");
    cuda::check(cudaMemcpyAsync(out[1], vel_.get(), bytes, cudaMemcpyDeviceToHost, stream_), "saving the velocities");
    cuda::check(cudaMemcpyAsync(out[2], acc_.get(), bytes, cudaMemcpyDeviceToHost, stream_),
                "saving the accelerations");
  }
  void load_state(const std::vector<const void*>& in) override {
    cuda::DeviceGuard guard(device_);
    const std::size_t bytes = sizeof(float4) * o_.bodies;
    cuda::check(cudaMemcpyAsync(pm_.get(), in[0], bytes, cudaMemcpyHostToDevice, stream_), "restoring the bodies");
    cuda::check(cudaMemcpyAsync(vel_.get(), in[1], bytes, cudaMemcpyHostToDevice, stream_), "restoring the velocities");
    cuda::check(cudaMemcpyAsync(acc_.get(), in[2], bytes, cudaMemcpyHostToDevice, stream_),
                "restoring the accelerations");
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after restoring the state");
  }

  void write_fields(const std::vector<FieldTarget>& t) override {
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaMemsetAsync(t[0].data, 0, t[0].bytes, stream_), "clearing the density field");
    publish_kernel<<<(n_ + 255) / 256, 256, 0, stream_>>>(
        pm(), vel(), n_, view_half_width(o_.galaxies), w_, h_, static_cast<float*>(t[0].data),
        static_cast<float*>(t[1].data), static_cast<float*>(t[2].data), static_cast<float*>(t[3].data));
    cuda::check(cudaGetLastError(), "launching the N-body publish kernel");
  }

 private:
  /// Below a few hundred thousand bodies there are too few blocks of kTile bodies to fill the GPU:
  /// then the sources are split into chunks, one grid row each, whose pulls are summed after.
  struct Split {
    int chunk, rows;  // sources per row (whole tiles), rows of the grid
  };
  [[nodiscard]] Split split() const {
    const int blocks = (n_ + kTile - 1) / kTile;  // also the number of source tiles
    const int splits = std::max(1, std::min(blocks, (4 * sms_ + blocks - 1) / blocks));
    const int chunk = (blocks + splits - 1) / splits * kTile;
    return {chunk, (n_ + chunk - 1) / chunk};
  }
  void accelerations() {
    const int blocks = (n_ + kTile - 1) / kTile;
    const auto [chunk, rows] = split();
    const float eps2 = p_.softening * p_.softening;
    if (rows == 1) {
      accel_kernel<<<dim3(blocks, 1), kThreads, 0, stream_>>>(pm(), acc(), n_, n_, eps2);
    } else {
      auto* part = static_cast<float4*>(part_.get());
      accel_kernel<<<dim3(blocks, rows), kThreads, 0, stream_>>>(pm(), part, n_, chunk, eps2);
      sum_splits_kernel<<<(n_ + 255) / 256, 256, 0, stream_>>>(part, acc(), n_, rows);
    }
  }
  float4* pm() const { return static_cast<float4*>(pm_.get()); }
  float4* vel() const { return static_cast<float4*>(vel_.get()); }
  float4* acc() const { return static_cast<float4*>(acc_.get()); }
  int device_;
  cudaStream_t stream_;
  int w_, h_;
  NbodyOptions o_;
  int n_;
  int sms_ = 1;
  NbodyParams p_;
  cuda::DeviceBuffer pm_, vel_, acc_, part_;  // part_: one row of pulls per split of the sources
};

}  // namespace

std::unique_ptr<Simulation> make_cuda(Executor& executor, int width, int height, const NbodyOptions& o) {
  return std::make_unique<NbodyCuda>(executor, width, height, o);
}

}  // namespace cuview::sim::nbody
