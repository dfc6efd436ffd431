// The simulation's steerable parameters: names, ranges, presets, and the initial state.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cuview/protocol.hpp"
#include "sim/grayscott.hpp"

namespace cuview::sim {

/// Everything a client can set with `set`.
struct SimParams {
  GrayScottParams gs;
  std::uint32_t steps_per_frame = 16;  ///< simulation steps between two frames
};

struct ParamSpec {
  const char* name;
  double min, max;
  bool integer;
  const char* help;
  double (*get)(const SimParams&);
  void (*set)(SimParams&, double);
};

/// The parameter table, in the order clients show it.
const std::vector<ParamSpec>& param_specs();
/// Named parameter sets; the first is the default.
const std::vector<proto::PresetDesc>& presets();

/// Applies a preset and then `values` to a copy of `current`, checking every name and range
/// first: on any error nothing changes. Throws Error(bad_value | out_of_range) naming the
/// parameter, its value and its range.
SimParams apply(const SimParams& current, const std::optional<std::string>& preset,
                const std::map<std::string, double>& values);

std::vector<proto::ParamDesc> describe(const SimParams& p);
std::map<std::string, double> values(const SimParams& p);

/// u = 1, v = 0 with a few seeded squares (u = 0.5, v = 0.25, plus ±0.01 noise), placed by a
/// generator seeded with `seed`: the same seed gives the same state on both backends.
void initial_state(int width, int height, std::uint64_t seed, float* u, float* v);

}  // namespace cuview::sim
