// A simulation's steerable parameters as the publisher keeps them: the declared specs and
// presets, the current values, and the one place every change is validated.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cuview/protocol.hpp"
#include "sims/simulation.hpp"

namespace cuview {

/// The publisher's own parameter, listed after the simulation's.
inline constexpr const char* kStepsPerFrame = "steps_per_frame";
/// A simulation's parameters followed by the publisher's own (steps_per_frame).
[[nodiscard]] std::vector<sim::ParamSpec> with_publisher_params(std::vector<sim::ParamSpec> specs);

class ParameterSet {
 public:
  /// Starts at every spec's default, then the first preset (if any). Throws Error(bad_value)
  /// when the specs themselves are inconsistent (a duplicate name, a default outside its range).
  ParameterSet(std::vector<sim::ParamSpec> specs, std::vector<sim::Preset> presets);

  /// The values `preset` (if given) and then `values` would give, each name and range checked
  /// first. Throws Error(bad_value | out_of_range) naming the parameter, its value and its range;
  /// the current values never change here.
  [[nodiscard]] std::map<std::string, double> apply(const std::optional<std::string>& preset,
                                                    const std::map<std::string, double>& values) const;
  /// Replaces the current values with a result of apply().
  void assign(std::map<std::string, double> values) { values_ = std::move(values); }

  [[nodiscard]] const std::map<std::string, double>& values() const { return values_; }
  [[nodiscard]] double value(const std::string& name) const { return values_.at(name); }
  [[nodiscard]] const std::vector<sim::ParamSpec>& specs() const { return specs_; }
  [[nodiscard]] std::vector<proto::ParamDesc> describe() const;
  [[nodiscard]] std::vector<proto::PresetDesc> presets() const;

 private:
  std::vector<sim::ParamSpec> specs_;
  std::vector<sim::Preset> presets_;
  std::map<std::string, double> values_;
};

}  // namespace cuview
