// The lattice-Boltzmann simulation's declarations, shared by the host loop and the CUDA kernels:
// fields, parameters, presets, options, the obstacle mask and the initial state.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sims/lbm/lbm.hpp"
#include "sims/simulation.hpp"

namespace cuview::sim::lbm {

/// What `--sim-option` (SimulationConfig::options) can change.
struct LbmOptions {
  bool periodic = false;  ///< flow=periodic: x wraps, driven by the body force (flow=channel: inflow/outflow)
  bool cylinder = true;   ///< obstacle=cylinder (default) or none
};
/// Throws Error(bad_value) naming an unknown option or value and the ones there are.
LbmOptions options_from(const std::map<std::string, std::string>& options);

[[nodiscard]] std::vector<FieldSpec> fields();
/// What a checkpoint holds: the populations {9, height, width} (stored shifted by their weights)
/// and the obstacle mask {height, width}; the flags follow from the mask.
[[nodiscard]] std::vector<StateSpec> state(int width, int height);
[[nodiscard]] std::vector<ParamSpec> params();
[[nodiscard]] std::vector<Preset> presets();
[[nodiscard]] LbmParams from(const std::map<std::string, double>& values, const LbmOptions& o);

/// Walls on the top and bottom rows and, with `cylinder`, a disc of radius height/10 centred at
/// (width/5, height/2 + 1) — one cell off the axis, so that the wake sheds vortices.
std::vector<std::uint8_t> obstacle_mask(int width, int height, const LbmOptions& o);
/// The flags of cell (x, y) for a mask `solid` and the x boundary (`periodic` or not): what
/// cell_flags() computes for every cell, on the host or on the GPU.
CUVIEW_HD inline std::uint16_t flags_of_cell(const std::uint8_t* solid, int x, int y, int width, int height,
                                             bool periodic) {
  const std::size_t here = static_cast<std::size_t>(y) * width + x;
  std::uint16_t fl = solid[here] ? kSolidBit : 0;
  for (int i = 0; i < kQ; ++i) {
    int sx = x - cx(i);
    const int sy = y - cy(i);
    bool bounce = sy < 0 || sy >= height;
    if (!bounce) {
      if (sx < 0 || sx >= width) sx = periodic ? (sx < 0 ? width - 1 : 0) : (sx < 0 ? -1 : width - 1);
      bounce = sx >= 0 && solid[static_cast<std::size_t>(sy) * width + sx];
    }
    if (bounce) fl |= static_cast<std::uint16_t>(1u << i);
  }
  return fl;
}
/// The per-cell flags lbm_cell reads (lbm.hpp) for a mask and the x boundary of `o`.
std::vector<std::uint16_t> cell_flags(const std::vector<std::uint8_t>& solid, int width, int height,
                                      const LbmOptions& o);
/// Recomputes the flags of the cells in rows [y0, y1) and columns [x0, x1) (clamped to the grid).
void update_flags(const std::vector<std::uint8_t>& solid, std::vector<std::uint16_t>& flags, int width, int height,
                  const LbmOptions& o, int x0, int y0, int x1, int y1);

/// The obstacle input: drawing makes cells solid, erasing makes them fluid (at rest); the channel's
/// top and bottom walls stay. Applies `s` to `solid` and the flags around it; returns the rows and
/// columns touched as [x0, x1) × [y0, y1).
struct Touched {
  int x0, y0, x1, y1;
};
[[nodiscard]] std::vector<InputSpec> inputs();
Touched draw(const Stroke& s, std::vector<std::uint8_t>& solid, std::vector<std::uint16_t>& flags, int width,
             int height, const LbmOptions& o);
/// Equilibrium at density 1 and velocity (u0, 0) in the fluid, at rest in solid cells (stored
/// shifted by the weights, as lbm.hpp keeps them).
void initial_state(int width, int height, const std::vector<std::uint8_t>& solid, float u0, float* f);

std::unique_ptr<Simulation> make_cuda(Executor& executor, int width, int height, const LbmOptions& o);

}  // namespace cuview::sim::lbm
