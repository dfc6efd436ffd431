// The 2D heat equation, dT/dt = alpha ∇²T, forward Euler with the 5-point Laplacian, the edges held
// at 0. One per-cell function serves the host loop and the CUDA kernel.
#pragma once

#include <cstdint>
#include <memory>

#include "sims/simulation.hpp"

#if defined(__CUDACC__)
#define HEAT_HD __host__ __device__
#else
#define HEAT_HD
#endif

namespace heat {

/// T at (x, y) after one step; cells on the edge stay 0. Stable while alpha ≤ 0.25.
HEAT_HD inline float step_cell(const float* t, int x, int y, int w, int h, float alpha) {
  if (x == 0 || y == 0 || x == w - 1 || y == h - 1) return 0.0f;
  const int i = y * w + x;
  return t[i] + alpha * (t[i - 1] + t[i + 1] + t[i - w] + t[i + w] - 4.0f * t[i]);
}

/// A few hot discs placed by `seed` on a cold plate.
void initial_state(int w, int h, std::uint64_t seed, float* t);

std::unique_ptr<cuview::sim::Simulation> make_cuda(cuview::Executor& executor, int w, int h);

}  // namespace heat
