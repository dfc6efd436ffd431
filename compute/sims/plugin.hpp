// Simulations from shared libraries: what a plugin exports, and the loader cuview-compute uses
// for `--sim path/to/libmysim.so`.
//
// A plugin implements sim::Simulation (sims/simulation.hpp) and exports one C function,
// `cuview_simulation_v1`, returning its PluginInfo; CUVIEW_SIMULATION_PLUGIN writes it for a
// simulation on a plane (--size WxH), CUVIEW_SIMULATION_PLUGIN_AXES for one in a volume (--size
// WxHxD, SimulationConfig::depth):
//
//     CUVIEW_SIMULATION_PLUGIN("heat", "2D heat equation", make_heat)
//     CUVIEW_SIMULATION_PLUGIN_AXES("heat3d", "3D heat equation", make_heat3d, 3)
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
/// Simulation::writes_every). 8: PluginInfo::axes, a plugin of 3 axes (Simulation as in 7; the
/// Executor's virtual functions as in 7, Executor::copy_section after them). A plugin built
/// against an earlier one than kOldestPluginAbi is refused, naming both.
inline constexpr std::uint32_t kPluginAbi = 8;
/// The oldest ABI still loaded: a plugin of ABI 7 has every member of PluginInfo but `axes`, and
/// runs on a plane (2 axes).
inline constexpr std::uint32_t kOldestPluginAbi = 7;

struct PluginInfo {
  std::uint32_t abi;           ///< kPluginAbi when the plugin was built
  const char* name;            ///< the simulation's name (shown by describe and stats)
  const char* help;            ///< one line
  const char* cuview_version;  ///< CUVIEW_VERSION when the plugin was built
  std::unique_ptr<Simulation> (*make)(Executor& executor, const SimulationConfig& config);
  /// Its grid's axes: 1 (--size W), 2 (--size WxH) or 3 (--size WxHxD, SimulationConfig::depth). Since ABI 8
  /// (appended, so that a plugin of ABI 7, which lacks it, reads the members above unchanged).
  std::uint32_t axes;
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
  /// Its grid's axes, 1 to 3 (a plugin of ABI 7: 2).
  [[nodiscard]] std::uint32_t axes() const { return info_->abi >= 8 ? info_->axes : 2; }
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
/// Exports the plugin entry point of a simulation on a plane (2 axes, --size WxH).
/// MAKE: std::unique_ptr<Simulation>(Executor&, const SimulationConfig&).
#define CUVIEW_SIMULATION_PLUGIN(NAME, HELP, MAKE) CUVIEW_SIMULATION_PLUGIN_AXES(NAME, HELP, MAKE, 2)
/// Exports the plugin entry point of a simulation of AXES axes: 1 (a line, --size W: its fields
/// SimulationConfig::width cells; height and depth are 1), 2 (a plane, --size WxH) or 3 (a volume,
/// --size WxHxD: SimulationConfig::depth cells along z, its fields width × height × depth cells, x
/// fastest).
#define CUVIEW_SIMULATION_PLUGIN_AXES(NAME, HELP, MAKE, AXES)                                                 \
  static_assert((AXES) >= 1 && (AXES) <= 3, "a cuview plugin's grid has 1 to 3 axes (W, WxH or WxHxD)");    \
  extern "C" __attribute__((visibility("default"))) const ::cuview::sim::PluginInfo* cuview_simulation_v1() { \
    static const ::cuview::sim::PluginInfo info{::cuview::sim::kPluginAbi, NAME, HELP, CUVIEW_VERSION, MAKE,   \
                                                (AXES)};                                                      \
    return &info;                                                                                             \
  }
