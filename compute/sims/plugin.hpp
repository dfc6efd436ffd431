// Simulations from shared libraries: what a plugin exports, and the loader cuview-compute uses
// for `--sim path/to/libmysim.so`.
//
// A plugin implements sim::Simulation (sims/simulation.hpp) and exports one C function,
// `cuview_simulation_v1`, returning its PluginInfo; CUVIEW_SIMULATION_PLUGIN writes it:
//
//     CUVIEW_SIMULATION_PLUGIN("heat", "2D heat equation", make_heat)
//
// The number in the symbol is the plugin ABI: the Simulation and Executor classes cross the
// boundary as C++, so a plugin must be built against the same ABI (and a compatible C++ standard
// library) as the daemon that loads it. A plugin of another ABI exports another symbol and is
// refused with both numbers and what to do.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cuview/error.hpp"
#include "sims/simulation.hpp"

namespace cuview::sim {

/// The Simulation interface's version, in every plugin's PluginInfo (the entry point's name,
/// cuview_simulation_v1, changes only if PluginInfo itself does). 2: inputs/draw and checkpoint
/// state. 3: the Executor's streams are cuda::StreamRef (stream(), copy, seal), no longer void*.
/// 4: the Executor writes frames in one pass (begin_frame, copy summing the checksum, sum_into,
/// seal(seq, step)). 5: FieldTarget says whether a reader reads the field (`read`). 6: a frame
/// written in the simulation's own step (Simulation::step_and_write, writes_in_step; the
/// Executor's timed_steps and frame_holds_steps). 7: frames of every k-th cell (FieldTarget::every,
/// Simulation::writes_every). A plugin built against an earlier one is refused, naming both.
inline constexpr std::uint32_t kPluginAbi = 7;

struct PluginInfo {
  std::uint32_t abi;           ///< kPluginAbi when the plugin was built
  const char* name;            ///< the simulation's name (shown by describe and stats)
  const char* help;            ///< one line
  const char* cuview_version;  ///< CUVIEW_VERSION when the plugin was built
  std::unique_ptr<Simulation> (*make)(Executor& executor, const SimulationConfig& config);
};

/// What Plugin::make throws: the message names the simulation, the plugin file and the call, so
/// callers pass it on as it is.
struct PluginFailed : Error {
  using Error::Error;
};

/// A loaded plugin: the library stays mapped while this lives, so every Simulation it made must
/// be destroyed first. Move-only.
class Plugin {
 public:
  /// dlopen()s `path` and checks its entry point and ABI. Throws Error(bad_value) naming the
  /// file and what is wrong: missing, not a shared library, no cuview entry point, another ABI.
  static Plugin load(const std::string& path);
  Plugin(Plugin&& o) noexcept;
  Plugin& operator=(Plugin&& o) noexcept;
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;
  ~Plugin();  ///< dlclose

  [[nodiscard]] const PluginInfo& info() const { return *info_; }
  [[nodiscard]] const std::string& path() const { return path_; }
  /// The plugin's factory. A throw from it (or no simulation) is rethrown as PluginFailed naming
  /// the simulation, the plugin and the call.
  [[nodiscard]] std::unique_ptr<Simulation> make(Executor& executor, const SimulationConfig& config) const;

 private:
  Plugin(void* handle, const PluginInfo* info, std::string path)
      : handle_(handle), info_(info), path_(std::move(path)) {}
  void* handle_ = nullptr;
  const PluginInfo* info_ = nullptr;
  std::string path_;
};

}  // namespace cuview::sim

#ifndef CUVIEW_VERSION
#define CUVIEW_VERSION "unknown"
#endif
/// Exports the plugin entry point. MAKE: std::unique_ptr<Simulation>(Executor&, const SimulationConfig&).
#define CUVIEW_SIMULATION_PLUGIN(NAME, HELP, MAKE)                                                            \
  extern "C" __attribute__((visibility("default"))) const ::cuview::sim::PluginInfo* cuview_simulation_v1() { \
    static const ::cuview::sim::PluginInfo info{::cuview::sim::kPluginAbi, NAME, HELP, CUVIEW_VERSION, MAKE}; \
    return &info;                                                                                             \
  }
