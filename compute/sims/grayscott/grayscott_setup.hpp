// Gray–Scott's declarations for the Simulation interface: fields, parameters (names, ranges,
// help), presets, how the parameter map becomes the kernels' struct, and the initial state.
// Shared by the host loop and the CUDA kernels.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

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

/// The CUDA implementation (grayscott_cuda.cu); `steps_per_launch` 1 to 4.
std::unique_ptr<Simulation> make_cuda(Executor& executor, int width, int height, std::uint32_t steps_per_launch);
inline constexpr std::uint32_t kDefaultStepsPerLaunch = 4;
inline constexpr std::uint32_t kMaxStepsPerLaunch = 4;

}  // namespace cuview::sim::grayscott
