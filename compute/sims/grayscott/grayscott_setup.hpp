// Gray–Scott's declarations for the Simulation interface: fields, parameters (names, ranges,
// help), presets, how the parameter map becomes the kernels' struct, and the initial state.
// Shared by the host loop and the CUDA kernels.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cuview/host_device.hpp"
#include "sims/grayscott/grayscott.hpp"
#include "sims/simulation.hpp"

namespace cuview::sim::grayscott {

[[nodiscard]] std::vector<FieldSpec> fields();
/// What a checkpoint holds: u and v, {height, width} each.
[[nodiscard]] std::vector<StateSpec> state(int width, int height);
/// Forward Euler with the 5-point Laplacian is stable while 4·D·dt ≤ 1: the ranges of Du, Dv and
/// dt keep every allowed combination inside that bound.
[[nodiscard]] std::vector<ParamSpec> params();
[[nodiscard]] std::vector<Preset> presets();
/// The kernels' parameters from a validated map (missing names keep their defaults).
[[nodiscard]] GrayScottParams from(const std::map<std::string, double>& values);

/// u = 1, v = 0 with a few seeded squares (u = 0.5, v = 0.25, plus ±0.01 noise), placed by a
/// generator seeded with `seed`: the same seed gives the same state on every executor.
void initial_state(int width, int height, std::uint64_t seed, float* u, float* v);

/// The initial state's generator, SplitMix64: its output number `k` (from 0) for `seed`. Each
/// output depends only on k, so the GPU makes the state in parallel with the host's bits.
CUVIEW_HD inline std::uint64_t splitmix64_at(std::uint64_t seed, std::uint64_t k) {
  std::uint64_t z = seed + (k + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
/// The squares of initial_state(): how many, their side, and where square s begins among the
/// generator's outputs (its x0, y0, then one noise value per cell, row by row).
struct Squares {
  int count, side;
  [[nodiscard]] CUVIEW_HD std::uint64_t first_output(int s) const {
    return static_cast<std::uint64_t>(s) * (2 + static_cast<std::uint64_t>(side) * side);
  }
};
[[nodiscard]] Squares squares_of(int width, int height);
/// The noise of a square's cell from its generator output (the same float operations everywhere).
CUVIEW_HD inline float noise_of(std::uint64_t r) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(__fmul_rn(static_cast<float>(r % 2001), 1e-5f), 0.01f);  // never contracted to an FMA
#else
  return static_cast<float>(r % 2001) * 1e-5f - 0.01f;
#endif
}

/// The CUDA implementation (grayscott_cuda.cu); `steps_per_launch` 1 to 4.
std::unique_ptr<Simulation> make_cuda(Executor& executor, int width, int height, std::uint32_t steps_per_launch);
inline constexpr std::uint32_t kDefaultStepsPerLaunch = 4;
inline constexpr std::uint32_t kMaxStepsPerLaunch = 4;

}  // namespace cuview::sim::grayscott
