// What runs: the interface every simulation implements, built-in or plugin. A simulation declares
// its fields, parameters and presets, advances its state on the executor it was made for, and
// writes its current fields into a ring slot when the publisher asks. It never sees the ring,
// the protocol or a viewer: the publisher decides when to step, when to publish and into which
// slot, and checksums and announces the frame itself.
//
// Threading: every call comes from the publisher's loop thread, one at a time.
// Errors: throw (cuview::Error or any std::exception); the publisher reports the simulation, the
// call and the message, tells attached clients, and stops cleanly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cuview/schema.hpp"
#include "executor/executor.hpp"
#include "sims/slab.hpp"

namespace cuview::sim {

using cuview::DType;
using cuview::FieldTarget;
using cuview::InputSpec;
using cuview::ParamSpec;
using cuview::Preset;
using cuview::size_of;
using cuview::Stroke;
using cuview::to_string;

/// One field on the grid: `components` values of `dtype` per cell (1 for a scalar, 2 to 4 for a
/// vector or an RGBA colour; more are refused when the daemon declares it), row-major, components
/// innermost.
struct FieldSpec {
  std::string name;
  DType dtype = DType::float32;
  std::uint32_t components = 1;
  std::string help;
};

/// A set of `count` particles (bodies, tracers, molecules): each attribute holds one value of
/// `dtype` (or `components` of them: a position, a velocity) per particle.
struct ParticleSetSpec {
  std::string name;
  std::uint64_t count = 0;
  std::vector<FieldSpec> attributes;  ///< e.g. position (float32 × 2), velocity, mass
  std::string help;
  std::vector<double> bounds;  ///< {x0, x1, y0, y1}: the position region the grid shows (optional)
};

/// One buffer of a simulation's state, as a checkpoint holds it: `shape` outermost first (e.g.
/// {height, width} for a grid, {9, height, width} for lattice-Boltzmann populations).
struct StateSpec {
  std::string name;
  DType dtype = DType::float32;
  std::vector<std::uint64_t> shape;
  std::string help;
  [[nodiscard]] std::size_t bytes() const {
    std::size_t n = size_of(dtype);
    for (auto d : shape) n *= d;
    return n;
  }
};

/// What a simulation is made with.
struct SimulationConfig {
  std::uint32_t width = 512, height = 512;
  /// Simulation-specific settings (e.g. Gray–Scott's "steps_per_launch"); unknown keys are refused.
  std::map<std::string, std::string> options;
  /// Built-in simulations decomposed over ranks: the rows this part owns (width × slab->rows
  /// cells), the global height and the halo. Null: the whole grid. Plugins are never given one
  /// (appended last, so plugins built before it read the members above unchanged).
  const Slab* slab = nullptr;
  /// Cells along z for a simulation of three axes (SimulationFactory::axes 3): the grid is width ×
  /// height × depth, x fastest. 1 for the others (appended last, as slab).
  std::uint32_t depth = 1;
};

class Simulation {
 public:
  virtual ~Simulation() = default;
  /// Fixed for the simulation's lifetime, in the order they are published.
  [[nodiscard]] virtual std::vector<FieldSpec> fields() const = 0;
  /// Fixed for the simulation's lifetime, published after the fields. Default: none.
  [[nodiscard]] virtual std::vector<ParticleSetSpec> particle_sets() const { return {}; }
  /// Fixed for the lifetime; the publisher validates every change against these ranges.
  [[nodiscard]] virtual std::vector<ParamSpec> params() const = 0;
  /// The first preset, if any, is the default.
  [[nodiscard]] virtual std::vector<Preset> presets() const { return {}; }
  /// Sets the initial state generated from `seed`: the same seed gives the same state everywhere.
  virtual void reset(std::uint64_t seed) = 0;
  /// Every parameter by name, each within its range. Takes effect from the next step().
  virtual void set_params(const std::map<std::string, double>& values) = 0;
  /// Advances `n` steps (queued on the executor's stream on CUDA; may return before they ran).
  virtual void step(std::uint32_t n) = 0;
  /// Simulated time one step advances (with the current parameters).
  [[nodiscard]] virtual double time_per_step() const { return 1.0; }
  /// Copies the current state into `targets`: one per field in fields() order, then one per
  /// attribute of each particle set in particle_sets() order; queued on the executor's stream
  /// after the steps so far.
  virtual void write_fields(const std::vector<FieldTarget>& targets) = 0;
  /// A frame written in the simulation's own step: steps `n` times, the last step also writing
  /// into `targets` what write_fields() would write after it, the same bits, so that no separate
  /// pass reads the state again (the flows write their moments from the collision, which holds
  /// them in registers). The daemon calls it, instead of step(n) then write_fields(), for a batch
  /// whose end publishes a frame, when writes_in_step() says so; it counts as the frame's cost only
  /// what the batch takes beyond as many plain steps (Executor::timed_steps). Default: step(n),
  /// write_fields().
  virtual void step_and_write(std::uint32_t n, const std::vector<FieldTarget>& targets) {
    step(n);
    write_fields(targets);
  }
  /// Whether step_and_write() is the cheaper way (overridden). Default: false.
  [[nodiscard]] virtual bool writes_in_step() const { return false; }
  /// What clients may draw into (obstacles, ...). Default: nothing.
  [[nodiscard]] virtual std::vector<InputSpec> inputs() const { return {}; }
  /// Applies a stroke the publisher validated (its input is one of inputs(), the disc's centre on
  /// the grid). Takes effect from the next step().
  virtual void draw(const Stroke& stroke) { (void)stroke; }

  // ---- checkpoints (docs/checkpoints.md) ----
  /// The buffers that hold the whole state between steps: with the step count, simulated time
  /// and parameters (which the daemon keeps), what continues the run bit for bit. Default: none,
  /// and checkpoints are refused naming the simulation.
  [[nodiscard]] virtual std::vector<StateSpec> state() const { return {}; }
  /// Bump it when the meaning or layout of state() changes: a checkpoint written by another
  /// version is refused.
  [[nodiscard]] virtual std::uint32_t state_version() const { return 1; }
  /// Copies the state into `out`, one host buffer per state() entry of its bytes() (pinned memory
  /// on CUDA), queued on the executor's stream after the steps so far: the caller waits for the
  /// stream before reading them.
  virtual void save_state(const std::vector<void*>& out) { (void)out; }
  /// Replaces the state with `in` (as save_state() wrote it, sizes checked by the caller); takes
  /// effect from the next step(). `in` may be freed when it returns.
  virtual void load_state(const std::vector<const void*>& in) { (void)in; }

  /// Whether write_fields() and step_and_write() write FieldTarget::every (frames of every k-th
  /// cell, for volume viewers, packed). Default: false, and every target is whole (plugin ABI 7).
  [[nodiscard]] virtual bool writes_every() const { return false; }
};

/// A built-in simulation: its name for `--sim`, one line of help, and how to make it.
struct SimulationFactory {
  std::string name;
  std::string help;
  std::unique_ptr<Simulation> (*make)(Executor& executor, const SimulationConfig& config);
  /// It runs decomposed over ranks (SimulationConfig::slab), bit for bit the whole grid's run.
  bool decomposable = false;
  /// Its grid's axes: 2 (--size WxH) or 3 (--size WxHxD, SimulationConfig::depth).
  std::uint32_t axes = 2;
};

/// Every simulation cuview-compute can run without a plugin.
[[nodiscard]] const std::vector<SimulationFactory>& builtin_simulations();

}  // namespace cuview::sim
