// The 2D wave equation u_tt = c² ∇²u with light damping, advanced in place by symplectic Euler:
// first every cell's velocity from its neighbours' displacement, then every displacement from its
// own velocity. In place means the buffers never move, so the publisher reads the same two
// pointers for the whole run. Rain drops (Gaussian bumps) keep it moving. The edges are held at 0.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>

#include "cuview/cuda/stream_ref.hpp"  // the publisher takes it; a cudaStream_t converts

#if defined(__CUDACC__)
#define WAVE_HD __host__ __device__
#else
#define WAVE_HD
#endif

namespace wave {

struct Params {
  float c = 0.5f;          ///< wave speed × dt / dx: stable up to 1/√2
  float damping = 0.002f;  ///< fraction of the velocity lost per step
  float rain = 2.0f;       ///< drops per 1000 steps
};

/// The velocity at (x, y) after one step (edge cells: 0).
WAVE_HD inline float velocity_cell(const float* u, const float* v, int x, int y, int w, int h, Params p) {
  if (x == 0 || y == 0 || x == w - 1 || y == h - 1) return 0.0f;
  const int i = y * w + x;
  const float laplacian = u[i - 1] + u[i + 1] + u[i - w] + u[i + w] - 4.0f * u[i];
  return (1.0f - p.damping) * v[i] + p.c * p.c * laplacian;
}

/// A drop of height `amp` and radius `r` cells centred at (cx, cy), added to u at (x, y).
WAVE_HD inline float drop_cell(int x, int y, float cx, float cy, float r, float amp) {
  const float dx = static_cast<float>(x) - cx, dy = static_cast<float>(y) - cy;
  const float d2 = (dx * dx + dy * dy) / (r * r);
  return d2 < 9.0f ? amp * expf(-d2) : 0.0f;
}

/// The simulation's state and its stepping, on the host or one CUDA device.
class Wave {
 public:
  virtual ~Wave() = default;
  /// Displacement and velocity, width × height float32 each; device pointers on CUDA.
  [[nodiscard]] virtual const float* u() const = 0;
  [[nodiscard]] virtual const float* v() const = 0;
  /// Still water with one drop in the middle.
  virtual void reset() = 0;
  virtual void step(int n, Params p) = 0;
  virtual void drop(float cx, float cy, float r, float amp) = 0;
  /// The CUDA stream everything is queued on; the default stream (unused) on the host.
  [[nodiscard]] virtual cuview::cuda::StreamRef stream() const { return {}; }
  /// Waits for the queued steps (CUDA); keeps the loop from running ahead of the GPU.
  virtual void sync() {}
};

std::unique_ptr<Wave> make_host(int w, int h);
#ifdef WAVE_HAVE_CUDA
std::unique_ptr<Wave> make_cuda(int w, int h);
#endif

}  // namespace wave
