// The lattice-Boltzmann simulation's declarations, shared by the host loop and the CUDA kernels:
// fields, parameters, presets, options, the obstacle mask and the initial state.
#pragma once

#include <cstddef>
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
  bool periodic = false;  ///< flow=periodic: x wraps, driven by the body force (flow=channel: inlet/outlet)
  bool cylinder = true;   ///< obstacle=cylinder (default) or none
  /// overlap=on (default): on CUDA, a part of a decomposed grid exchanges its edge rows while it
  /// computes its inner ones; off: one launch, then the exchange (the same results either way).
  bool overlap = true;
  /// storage=fp32 (default): the populations as float32; fp16s: as binary16 of (f − w)·2^15, half
  /// the memory and bandwidth (sims/fp16s.hpp), float32 arithmetic either way.
  bool fp16s = false;
};
/// Throws Error(bad_value) naming an unknown option or value and the ones there are.
LbmOptions options_from(const std::map<std::string, std::string>& options);

/// The rows a simulation stores: the `rows` it owns, global rows [first_row, first_row + rows) of
/// a grid `width` × `global_height`, between two ghost rows. Stored row ly (0 … rows + 1) is
/// global row first_row − 1 + ly: row 0 copies the part above's last row, row rows + 1 the part
/// below's first (sims/slab.hpp); the whole grid is {width, 0, height, height}, its ghost rows
/// beyond the top and bottom walls (never read: the walls bounce back what would come from there).
struct Window {
  int width = 0, first_row = 0, rows = 0, global_height = 0;
  [[nodiscard]] CUVIEW_HD int stored_rows() const { return rows + 2; }
  /// Cells of one stored population plane (its stride), ghost rows included.
  [[nodiscard]] CUVIEW_HD std::size_t cells() const { return static_cast<std::size_t>(width) * stored_rows(); }
  [[nodiscard]] CUVIEW_HD std::size_t owned_cells() const { return static_cast<std::size_t>(width) * rows; }
  /// The global row of stored row `ly`.
  [[nodiscard]] CUVIEW_HD int global_row(int ly) const { return first_row - 1 + ly; }
};

[[nodiscard]] std::vector<FieldSpec> fields();
/// What a checkpoint holds: the populations {9, rows, width} as stored (f − w as float32, or
/// float16 (f − w)·2^15 with storage=fp16s) and the obstacle mask {rows, width} of the owned rows;
/// the flags follow from the mask.
[[nodiscard]] std::vector<StateSpec> state(int width, int rows, const LbmOptions& o);
[[nodiscard]] std::vector<ParamSpec> params();
[[nodiscard]] std::vector<Preset> presets();
[[nodiscard]] LbmParams from(const std::map<std::string, double>& values, const LbmOptions& o);

/// The obstacle mask of `g`'s stored rows (1: solid): walls on the global grid's top and bottom
/// rows and, with `cylinder`, a disc of radius global_height/10 centred at (width/5,
/// global_height/2 + 1) — one cell off the axis, so that the wake sheds vortices. Stored rows
/// beyond the grid are solid.
std::vector<std::uint8_t> obstacle_mask(const Window& g, const LbmOptions& o);
/// The flags of cell (x, y) (y a global row, `height` the global grid's) for a mask `solid` whose
/// first row is global row `first` and the x boundary (`periodic` or not). Reads the mask rows
/// y − 1 … y + 1 that lie in the grid.
CUVIEW_HD inline std::uint16_t flags_of_cell(const std::uint8_t* solid, int first, int x, int y, int width, int height,
                                             bool periodic) {
  const std::size_t here = static_cast<std::size_t>(y - first) * width + x;
  std::uint16_t fl = solid[here] ? kSolidBit : 0;
  for (int i = 0; i < kQ; ++i) {
    int sx = x - cx(i);
    const int sy = y - cy(i);
    bool bounce = sy < 0 || sy >= height;
    if (!bounce) {
      if (sx < 0 || sx >= width) {
        if (!periodic) continue;  // a channel's edge columns gather nothing (lbm.hpp open_edge)
        sx = sx < 0 ? width - 1 : 0;
      }
      bounce = solid[static_cast<std::size_t>(sy - first) * width + sx] != 0;
    }
    if (bounce) fl |= static_cast<std::uint16_t>(1u << i);
  }
  return fl;
}
/// The flags of stored cell (x, ly) of `g` for its mask `solid` (obstacle_mask's rows): an owned
/// row's are flags_of_cell's; a ghost row's only say whether it is solid (no update reads more:
/// lbm_cell runs on owned rows, and observe_cell reads its neighbours' densities and velocities).
CUVIEW_HD inline std::uint16_t stored_flags(const std::uint8_t* solid, const Window& g, int x, int ly, bool periodic) {
  if (ly == 0 || ly == g.rows + 1)
    return solid[static_cast<std::size_t>(ly) * g.width + x] ? kSolidBit : std::uint16_t{0};
  return flags_of_cell(solid, g.global_row(0), x, g.global_row(ly), g.width, g.global_height, periodic);
}
/// The per-cell flags lbm_cell reads (lbm.hpp) for every stored row of `g`.
std::vector<std::uint16_t> cell_flags(const std::vector<std::uint8_t>& solid, const Window& g, const LbmOptions& o);
/// Recomputes the flags of the stored cells in rows [y0, y1) and columns [x0, x1) (clamped to
/// the stored rows).
void update_flags(const std::vector<std::uint8_t>& solid, std::vector<std::uint16_t>& flags, const Window& g,
                  const LbmOptions& o, int x0, int y0, int x1, int y1);

/// The obstacle input: drawing makes cells solid, erasing makes them fluid (at rest); the channel's
/// top and bottom walls stay. Applies `s` (global cell coordinates: every part is given every
/// stroke) to the stored rows of `solid` and to the flags around it; returns the stored rows and
/// the columns whose flags it recomputed as [x0, x1) × [y0, y1) (empty where the stroke misses
/// the part). Exchanges nothing: the ghost rows' mask follows from the same strokes.
struct Touched {
  int x0, y0, x1, y1;
};
[[nodiscard]] std::vector<InputSpec> inputs();
Touched draw(const Stroke& s, std::vector<std::uint8_t>& solid, std::vector<std::uint16_t>& flags, const Window& g,
             const LbmOptions& o);
/// Equilibrium at density 1 and velocity (u0, 0) in the fluid, at rest in solid cells (stored
/// shifted by the weights, as lbm.hpp keeps them, as T), in every stored row of `g`.
template <class T>
void initial_state(const Window& g, const std::vector<std::uint8_t>& solid, float u0, T* f, std::size_t plane) {
  const std::size_t cells = g.cells();
  for (std::size_t c = 0; c < cells; ++c)
    for (int i = 0; i < kQ; ++i) f[i * plane + c] = encode<T>(solid[c] ? 0.0f : shifted_equilibrium(i, 0.0f, 1.0f, u0, 0.0f));
}
/// Refreshes the ghost rows of the mask `solid` (host memory) from the neighbouring parts: after
/// a restore, where each part loaded its own rows only. Nothing without a halo.
void exchange_mask_ghosts(Halo* halo, const Window& g, std::vector<std::uint8_t>& solid);

/// The instruction sets the host loop is built for that this CPU has, widest first ("avx512f",
/// "avx2", "sse2" on x86-64; "generic" elsewhere). The host loop takes the first, or the one
/// CUVIEW_HOST_ISA names (tests run each; an unknown or missing one is an error naming these).
/// All give the same bits: the same operations per cell, none fused (-ffp-contract=off).
[[nodiscard]] std::vector<std::string> host_isas();

std::unique_ptr<Simulation> make_cuda(Executor& executor, const Window& g, Halo* halo, const LbmOptions& o);

}  // namespace cuview::sim::lbm
