#include "sims/grayscott/grayscott_setup.hpp"

#include <algorithm>

namespace cuview::sim::grayscott {

std::vector<StateSpec> state(int width, int height) {
  const std::vector<std::uint64_t> shape{static_cast<std::uint64_t>(height), static_cast<std::uint64_t>(width)};
  return {{"u", DType::float32, shape, "activator concentration"},
          {"v", DType::float32, shape, "inhibitor concentration"}};
}

std::vector<FieldSpec> fields() {
  return {{"u", DType::float32, 1, "activator concentration"}, {"v", DType::float32, 1, "inhibitor concentration"}};
}

std::vector<ParamSpec> params() {
  // The defaults are GrayScottParams' own, written as the decimals a user would type.
  return {
      {"F", 0.0545, 0.0, 0.1, false, "feed rate of u"},     {"k", 0.062, 0.0, 0.1, false, "kill rate of v"},
      {"Du", 0.16, 0.0, 0.2, false, "diffusion rate of u"}, {"Dv", 0.08, 0.0, 0.2, false, "diffusion rate of v"},
      {"dt", 1.0, 0.01, 1.25, false, "time step"},
  };
}

std::vector<Preset> presets() {
  return {
      {"coral", {{"F", 0.0545}, {"k", 0.062}}}, {"mitosis", {{"F", 0.0367}, {"k", 0.0649}}},
      {"maze", {{"F", 0.029}, {"k", 0.057}}},   {"spots", {{"F", 0.025}, {"k", 0.06}}},
      {"waves", {{"F", 0.014}, {"k", 0.045}}},
  };
}

GrayScottParams from(const std::map<std::string, double>& values) {
  GrayScottParams p;
  auto take = [&](const char* name, float& out) {
    if (auto it = values.find(name); it != values.end()) out = static_cast<float>(it->second);
  };
  take("F", p.F);
  take("k", p.k);
  take("Du", p.Du);
  take("Dv", p.Dv);
  take("dt", p.dt);
  return p;
}

Squares squares_of(int width, int height) {
  return {std::max(1, width * height / (128 * 128)), std::max(4, std::min(width, height) / 16)};
}

void initial_state(int width, int height, std::uint64_t seed, float* u, float* v) {
  const std::size_t cells = static_cast<std::size_t>(width) * height;
  std::fill(u, u + cells, 1.0f);
  std::fill(v, v + cells, 0.0f);
  const Squares sq = squares_of(width, height);
  for (int s = 0; s < sq.count; ++s) {  // in order: a later square overwrites an earlier one
    std::uint64_t k = sq.first_output(s);
    const int x0 = static_cast<int>(splitmix64_at(seed, k++) % static_cast<std::uint64_t>(width));
    const int y0 = static_cast<int>(splitmix64_at(seed, k++) % static_cast<std::uint64_t>(height));
    for (int dy = 0; dy < sq.side; ++dy) {
      for (int dx = 0; dx < sq.side; ++dx) {
        const std::size_t i = static_cast<std::size_t>((y0 + dy) % height) * width + (x0 + dx) % width;
        const float noise = noise_of(splitmix64_at(seed, k++));
        u[i] = 0.5f + noise;
        v[i] = 0.25f - noise;
      }
    }
  }
}

}  // namespace cuview::sim::grayscott
