#include "publisher/parameter_set.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "cuview/error.hpp"

namespace cuview {
namespace {
std::string fmt(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}
}  // namespace

std::vector<sim::ParamSpec> with_publisher_params(std::vector<sim::ParamSpec> specs) {
  specs.push_back({kStepsPerFrame, 16, 1, 10000, true, "simulation steps between published frames"});
  return specs;
}

ParameterSet::ParameterSet(std::vector<sim::ParamSpec> specs, std::vector<sim::Preset> presets)
    : specs_(std::move(specs)), presets_(std::move(presets)) {
  std::set<std::string> seen;
  for (const auto& s : specs_) {
    if (s.name.empty() || !seen.insert(s.name).second)
      throw Error(Errc::bad_value, "the simulation declares parameter '" + s.name + "' twice (or with no name)");
    if (!(s.min <= s.value && s.value <= s.max))
      throw Error(Errc::bad_value, "the simulation declares parameter '" + s.name + "' with default " + fmt(s.value) +
                                       " outside its range [" + fmt(s.min) + ", " + fmt(s.max) + "]");
    values_[s.name] = s.value;
  }
  if (!presets_.empty()) values_ = apply(presets_.front().name, {});
}

std::map<std::string, double> ParameterSet::apply(const std::optional<std::string>& preset,
                                                  const std::map<std::string, double>& values) const {
  std::map<std::string, double> all;
  if (preset) {
    auto it = std::find_if(presets_.begin(), presets_.end(), [&](const auto& p) { return p.name == *preset; });
    if (it == presets_.end()) {
      std::string names;
      for (const auto& p : presets_) names += (names.empty() ? "" : ", ") + p.name;
      throw Error(Errc::bad_value, "unknown preset '" + *preset + "'; presets: " + (names.empty() ? "none" : names));
    }
    all = it->values;
  }
  for (const auto& [k, v] : values) all[k] = v;
  auto next = values_;
  for (const auto& [name, value] : all) {
    auto it = std::find_if(specs_.begin(), specs_.end(), [&](const auto& s) { return name == s.name; });
    if (it == specs_.end()) {
      std::string names;
      for (const auto& s : specs_) names += (names.empty() ? "" : ", ") + s.name;
      throw Error(Errc::bad_value, "unknown parameter '" + name + "'; parameters: " + names);
    }
    if (!std::isfinite(value) || value < it->min || value > it->max)
      throw Error(Errc::out_of_range, "parameter " + name + "=" + fmt(value) + " is out of range [" + fmt(it->min) +
                                          ", " + fmt(it->max) + "]");
    if (it->integer && value != std::floor(value))
      throw Error(Errc::bad_value, "parameter " + name + "=" + fmt(value) + " must be a whole number");
    next[name] = value;
  }
  return next;
}

std::vector<proto::ParamDesc> ParameterSet::describe() const {
  std::vector<proto::ParamDesc> out;
  for (const auto& s : specs_) out.push_back({s.name, values_.at(s.name), s.min, s.max, s.integer, s.help});
  return out;
}

std::vector<proto::PresetDesc> ParameterSet::presets() const {
  std::vector<proto::PresetDesc> out;
  for (const auto& p : presets_) out.push_back({p.name, p.values});
  return out;
}

}  // namespace cuview
