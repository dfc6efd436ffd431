// The 3D heat equation, dT/dt = alpha ∇²T, forward Euler with the 7-point Laplacian, the faces held
// at 0: heat.hpp's plate as a box. One per-cell function serves the host loop and the CUDA kernel.
#pragma once

#include <cstdint>
#include <memory>

#include "sims/simulation.hpp"

#if defined(__CUDACC__)
#define HEAT3D_HD __host__ __device__
#else
#define HEAT3D_HD
#endif

namespace heat3d {

/// T at (x, y, z) after one step; cells on a face stay 0. Stable while alpha ≤ 1/6.
HEAT3D_HD inline float step_cell(const float* t, int x, int y, int z, int w, int h, int d, float alpha) {
  if (x == 0 || y == 0 || z == 0 || x == w - 1 || y == h - 1 || z == d - 1) return 0.0f;
  const long long plane = static_cast<long long>(w) * h;
  const long long i = z * plane + static_cast<long long>(y) * w + x;
  return t[i] + alpha * (t[i - 1] + t[i + 1] + t[i - w] + t[i + w] + t[i - plane] + t[i + plane] - 6.0f * t[i]);
}

/// A few hot balls placed by `seed` in a cold box.
void initial_state(int w, int h, int d, std::uint64_t seed, float* t);

std::unique_ptr<cuview::sim::Simulation> make_cuda(cuview::Executor& executor, int w, int h, int d);

}  // namespace heat3d
