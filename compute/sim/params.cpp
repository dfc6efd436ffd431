#include "sim/params.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "cuview/error.hpp"

namespace cuview::sim {

const std::vector<ParamSpec>& param_specs() {
  // Forward Euler with the 5-point Laplacian is stable while 4·D·dt ≤ 1: the ranges of Du, Dv
  // and dt keep every combination inside that bound (0.2 · 1.25 · 4 = 1).
  static const std::vector<ParamSpec> specs{
      {"F", 0.0, 0.1, false, "feed rate of u", [](const SimParams& p) -> double { return p.gs.F; },
       [](SimParams& p, double x) { p.gs.F = static_cast<float>(x); }},
      {"k", 0.0, 0.1, false, "kill rate of v", [](const SimParams& p) -> double { return p.gs.k; },
       [](SimParams& p, double x) { p.gs.k = static_cast<float>(x); }},
      {"Du", 0.0, 0.2, false, "diffusion rate of u", [](const SimParams& p) -> double { return p.gs.Du; },
       [](SimParams& p, double x) { p.gs.Du = static_cast<float>(x); }},
      {"Dv", 0.0, 0.2, false, "diffusion rate of v", [](const SimParams& p) -> double { return p.gs.Dv; },
       [](SimParams& p, double x) { p.gs.Dv = static_cast<float>(x); }},
      {"dt", 0.01, 1.25, false, "time step", [](const SimParams& p) -> double { return p.gs.dt; },
       [](SimParams& p, double x) { p.gs.dt = static_cast<float>(x); }},
      {"steps_per_frame", 1, 10000, true, "simulation steps between published frames",
       [](const SimParams& p) -> double { return p.steps_per_frame; },
       [](SimParams& p, double x) { p.steps_per_frame = static_cast<std::uint32_t>(x); }},
  };
  return specs;
}

const std::vector<proto::PresetDesc>& presets() {
  static const std::vector<proto::PresetDesc> list{
      {"coral", {{"F", 0.0545}, {"k", 0.062}}},
      {"mitosis", {{"F", 0.0367}, {"k", 0.0649}}},
      {"maze", {{"F", 0.029}, {"k", 0.057}}},
      {"spots", {{"F", 0.025}, {"k", 0.06}}},
      {"waves", {{"F", 0.014}, {"k", 0.045}}},
  };
  return list;
}

static std::string fmt_float(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", x);
  return buf;
}

static std::string fmt(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

SimParams apply(const SimParams& current, const std::optional<std::string>& preset,
                const std::map<std::string, double>& values) {
  SimParams next = current;
  std::map<std::string, double> all;
  if (preset) {
    const auto& list = presets();
    auto it = std::find_if(list.begin(), list.end(), [&](const auto& p) { return p.name == *preset; });
    if (it == list.end()) {
      std::string names;
      for (const auto& p : list) names += (names.empty() ? "" : ", ") + p.name;
      throw Error(Errc::bad_value, "unknown preset '" + *preset + "'; presets: " + names);
    }
    all = it->values;
  }
  for (const auto& [k, v] : values) all[k] = v;
  const auto& specs = param_specs();
  for (const auto& [name, value] : all) {
    auto it = std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& s) { return name == s.name; });
    if (it == specs.end()) {
      std::string names;
      for (const auto& s : specs) names += (names.empty() ? "" : ", ") + std::string(s.name);
      throw Error(Errc::bad_value, "unknown parameter '" + name + "'; parameters: " + names);
    }
    if (!std::isfinite(value) || value < it->min || value > it->max)
      throw Error(Errc::out_of_range, "parameter " + name + "=" + fmt(value) + " is out of range [" + fmt(it->min) +
                                          ", " + fmt(it->max) + "]");
    if (it->integer && value != std::floor(value))
      throw Error(Errc::bad_value, "parameter " + name + "=" + fmt(value) + " must be a whole number");
    it->set(next, value);
  }
  return next;
}

// Parameters are stored as float for the kernels; report the decimal a user typed (0.16, not
// 0.1599999964), which float's 7 significant digits round-trip exactly.
static double reported(const ParamSpec& s, const SimParams& p) { return std::stod(fmt_float(s.get(p))); }

std::vector<proto::ParamDesc> describe(const SimParams& p) {
  std::vector<proto::ParamDesc> out;
  for (const auto& s : param_specs()) out.push_back({s.name, reported(s, p), s.min, s.max, s.integer, s.help});
  return out;
}

std::map<std::string, double> values(const SimParams& p) {
  std::map<std::string, double> out;
  for (const auto& s : param_specs()) out[s.name] = reported(s, p);
  return out;
}

namespace {
std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace

void initial_state(int width, int height, std::uint64_t seed, float* u, float* v) {
  const std::size_t cells = static_cast<std::size_t>(width) * height;
  std::fill(u, u + cells, 1.0f);
  std::fill(v, v + cells, 0.0f);
  std::uint64_t rng = seed;
  const int side = std::max(4, std::min(width, height) / 16);
  const int squares = std::max(1, width * height / (128 * 128));
  for (int s = 0; s < squares; ++s) {
    const int x0 = static_cast<int>(splitmix64(rng) % static_cast<std::uint64_t>(width));
    const int y0 = static_cast<int>(splitmix64(rng) % static_cast<std::uint64_t>(height));
    for (int dy = 0; dy < side; ++dy) {
      for (int dx = 0; dx < side; ++dx) {
        const std::size_t i = static_cast<std::size_t>((y0 + dy) % height) * width + (x0 + dx) % width;
        const float noise = static_cast<float>(splitmix64(rng) % 2001) * 1e-5f - 0.01f;
        u[i] = 0.5f + noise;
        v[i] = 0.25f - noise;
      }
    }
  }
}

}  // namespace cuview::sim
