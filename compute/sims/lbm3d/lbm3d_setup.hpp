// The 3-D lattice-Boltzmann flow's declarations, shared by the host loop and the CUDA kernels:
// fields, parameters, presets, options, the obstacle mask, strokes and the halo of a z-slab.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sims/lbm3d/lbm3d.hpp"
#include "sims/simulation.hpp"

namespace cuview::sim::lbm3d {

/// What `--sim-option` can change.
struct Options {
  bool periodic = false;  ///< flow=periodic: x wraps, driven by the body force (flow=channel: inlet/outlet)
  bool sphere = true;     ///< obstacle=sphere (default) or none
  /// overlap=on (default): on CUDA, a part of a decomposed grid exchanges its edge layers while it
  /// computes its inner ones; off: one launch, then the exchange (the same results either way).
  bool overlap = true;
  /// storage=fp32 (default): the populations as float32; fp16s: as binary16 of (f − w)·2^15, half
  /// the memory and traffic (lbm3d.hpp encode; the arithmetic is float32 either way).
  bool fp16s = false;
  [[nodiscard]] std::size_t population_bytes() const { return fp16s ? 2 : 4; }
};
/// Throws Error(bad_value) naming an unknown option or value and the ones there are.
Options options_from(const std::map<std::string, std::string>& options);

[[nodiscard]] std::vector<FieldSpec> fields();
/// What a checkpoint holds: the populations {19, layers, height, width} as stored (float32 f − w,
/// or float16 (f − w)·2^15 with storage=fp16s) and the obstacle mask {layers, height, width} of the
/// owned layers.
[[nodiscard]] std::vector<StateSpec> state(const Window& g, const Options& o);
[[nodiscard]] std::vector<ParamSpec> params();
[[nodiscard]] std::vector<Preset> presets();
[[nodiscard]] Params from(const std::map<std::string, double>& values, const Options& o);
[[nodiscard]] std::vector<InputSpec> inputs();

/// The obstacle mask of `g`'s stored cells (1: solid): walls on the grid's y and z faces (and the
/// ghost layers beyond them) and, with `sphere`, a ball of radius min(height, depth)/10 centred at
/// (width/5, height/2 + 1, depth/2): one cell off the axis, so that the wake sheds vortices.
std::vector<std::uint8_t> obstacle_mask(const Window& g, const Options& o);
/// The flags (lbm3d.hpp flags_of) of stored layers [lz0, lz1) from `solid`, on the host's threads.
void compute_flags(const std::uint8_t* solid, std::uint8_t* flags, const Window& g, const Options& o, int lz0,
                   int lz1);

/// The obstacle input: a ball of the stroke's radius at (x, y, z) in global cells, made solid
/// (value 1) or fluid (0); the duct's walls stay. Every part is given every stroke: applies it to
/// the stored layers of `solid` (ghost layers included). Returns the stored layers whose flags
/// must be recomputed, [lz0, lz1) (empty where the stroke misses the part), and in `changed` the
/// stored cells that turned solid or fluid: their populations start again at rest (zeros), as a
/// solid cell's are, so that the step after a stroke does not depend on how populations are laid
/// out.
struct Layers {
  int lz0, lz1;
};
Layers draw(const Stroke& s, std::vector<std::uint8_t>& solid, const Window& g, std::vector<std::size_t>& changed);

/// Equilibrium at density 1 and velocity (u0, 0, 0) in the fluid, at rest in solid cells (shifted),
/// in every stored cell of `g`.
template <class T>
void initial_state(const Window& g, const std::vector<std::uint8_t>& solid, float u0, T* f, std::size_t plane) {
  T eq[kQ];
  for (int i = 0; i < kQ; ++i) eq[i] = encode<T>(shifted_equilibrium(i, 0.0f, 1.0f, u0, 0.0f, 0.0f));
  const std::size_t cells = g.cells();
  for (int i = 0; i < kQ; ++i)
    for (std::size_t c = 0; c < cells; ++c) f[i * plane + c] = solid[c] ? T{} : eq[i];
}
/// Refreshes the ghost layers of the mask from the neighbouring parts (after a restore). Nothing
/// without a halo.
void exchange_mask_ghosts(Halo* halo, const Window& g, std::vector<std::uint8_t>& solid);

/// Throws Error(out_of_range) when `g` does not fit: `need` bytes at `per_cell` bytes a cell
/// (`layout` says of what) against `available` bytes in `place` ("GPU 0", "this host"; 0: not
/// known, no check), naming the storage that needs less and the cube that fits.
void refuse_unless_fits(const Window& g, const Options& o, double per_cell, const char* layout, double need,
                        double available, const std::string& place);

std::unique_ptr<Simulation> make_cuda(Executor& executor, const Window& g, Halo* halo, const Options& o);

}  // namespace cuview::sim::lbm3d
