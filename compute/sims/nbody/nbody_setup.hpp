// The N-body simulation's declarations, shared by the host loop and the CUDA kernels.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sims/nbody/nbody.hpp"
#include "sims/simulation.hpp"

namespace cuview::sim::nbody {

struct NbodyOptions {
  std::uint64_t bodies = 0;  ///< 0: the backend's default (CUDA 65536, host 1024)
  bool galaxies = false;     ///< setup=galaxies: two discs on a collision course (setup=disc: one)
};
NbodyOptions options_from(const std::map<std::string, std::string>& options);

/// Bodies as the kernels keep them: position and mass, velocity (w unused), acceleration.
struct State {
  std::vector<float> pos_mass, vel, acc;  // 4 floats per body each
};

[[nodiscard]] std::vector<FieldSpec> fields();
/// What a checkpoint holds: position and mass, velocity, acceleration, {bodies, 4} each.
[[nodiscard]] std::vector<StateSpec> state(std::uint64_t bodies);
[[nodiscard]] std::vector<ParticleSetSpec> particle_sets(std::uint64_t bodies, bool galaxies, int width, int height);
[[nodiscard]] std::vector<InputSpec> inputs();
/// Applies a stroke to the bodies: value 1 places a heavy body (mass kPlacedMass, at rest) at the
/// stroke's centre, taking a removed body's place (or the lightest body's); value 0 removes every
/// body inside the disc (mass 0, parked far away, at rest). Grid coordinates as the density field.
void draw(const Stroke& s, State& state, std::uint64_t bodies, bool galaxies, int width, int height);
inline constexpr float kPlacedMass = 0.05f;
[[nodiscard]] std::vector<ParamSpec> params();
[[nodiscard]] std::vector<Preset> presets();
[[nodiscard]] NbodyParams from(const std::map<std::string, double>& values);

/// A disc (a heavy centre and light bodies on circular orbits) or two of them approaching each
/// other, from `seed`: the same seed gives the same bodies everywhere. Total mass 1.
State initial_state(std::uint64_t bodies, bool galaxies, std::uint64_t seed);

/// The half-width of the square of space the density field shows (centred on the origin).
float view_half_width(bool galaxies);
/// Counts the bodies in each cell of a width × height grid over [-L, L]² (aspect kept) it falls in.
void splat(const float* pos_mass, std::uint64_t bodies, float half_width, int width, int height, float* density);

std::unique_ptr<Simulation> make_cuda(Executor& executor, int width, int height, const NbodyOptions& o);

}  // namespace cuview::sim::nbody
