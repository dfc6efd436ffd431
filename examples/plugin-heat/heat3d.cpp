// A cuview plugin of three axes: the heat equation in a box (heat.cpp's plate, one axis more). The
// host loop is here; heat3d_cuda.cu has the kernel. cuview-compute loads it with
// --sim path/to/libheat3d.so --size WxHxD.
#include "heat3d.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "sims/plugin.hpp"

namespace heat3d {
using namespace cuview;
using namespace cuview::sim;

void initial_state(int w, int h, int d, std::uint64_t seed, float* t) {
  std::memset(t, 0, sizeof(float) * static_cast<std::size_t>(w) * h * d);
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&] { return (s = s * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  for (int k = 0; k < 6; ++k) {
    const int cx = 1 + static_cast<int>(next() % static_cast<std::uint64_t>(w - 2));
    const int cy = 1 + static_cast<int>(next() % static_cast<std::uint64_t>(h - 2));
    const int cz = 1 + static_cast<int>(next() % static_cast<std::uint64_t>(d - 2));
    const int r = 2 + std::min({w, h, d}) / 8;
    for (int z = std::max(1, cz - r); z < std::min(d - 1, cz + r); ++z)
      for (int y = std::max(1, cy - r); y < std::min(h - 1, cy + r); ++y)
        for (int x = std::max(1, cx - r); x < std::min(w - 1, cx + r); ++x)
          if ((x - cx) * (x - cx) + (y - cy) * (y - cy) + (z - cz) * (z - cz) <= r * r)
            t[(static_cast<std::size_t>(z) * h + y) * w + x] = 1.0f;
  }
}

namespace {
class Heat3dHost final : public Simulation {
 public:
  Heat3dHost(int w, int h, int d)
      : w_(w), h_(h), d_(d), t_(static_cast<std::size_t>(w) * h * d), next_(t_.size()) {}
  // A field of a 3-axis plugin holds width × height × depth cells, x fastest (describe: dims [d, h, w]).
  std::vector<FieldSpec> fields() const override { return {{"T", DType::float32, 1, "temperature"}}; }
  std::vector<ParamSpec> params() const override {
    return {{"alpha", 0.15, 0.0, 0.16, false, "diffusivity × time step (stable up to 1/6)"}};
  }
  std::vector<Preset> presets() const override { return {{"slow", {{"alpha", 0.05}}}, {"fast", {{"alpha", 0.16}}}}; }
  void reset(std::uint64_t seed) override { initial_state(w_, h_, d_, seed, t_.data()); }
  void set_params(const std::map<std::string, double>& v) override { alpha_ = static_cast<float>(v.at("alpha")); }
  void step(std::uint32_t n) override {
    for (std::uint32_t s = 0; s < n; ++s) {
      for (int z = 0; z < d_; ++z)
        for (int y = 0; y < h_; ++y)
          for (int x = 0; x < w_; ++x)
            next_[(static_cast<std::size_t>(z) * h_ + y) * w_ + x] = step_cell(t_.data(), x, y, z, w_, h_, d_, alpha_);
      t_.swap(next_);
    }
  }
  // Checkpoints: the temperature is the whole state (cuview-ctl checkpoint, --restore).
  std::vector<StateSpec> state() const override {
    return {{"T",
             DType::float32,
             {static_cast<std::uint64_t>(d_), static_cast<std::uint64_t>(h_), static_cast<std::uint64_t>(w_)},
             "temperature"}};
  }
  void save_state(const std::vector<void*>& out) override { std::memcpy(out[0], t_.data(), t_.size() * sizeof(float)); }
  void load_state(const std::vector<const void*>& in) override {
    std::memcpy(t_.data(), in[0], t_.size() * sizeof(float));
  }
  void write_fields(const std::vector<FieldTarget>& targets) override {
    std::memcpy(targets[0].data, t_.data(), targets[0].bytes);
  }

 private:
  int w_, h_, d_;
  float alpha_ = 0.15f;
  std::vector<float> t_, next_;
};

std::unique_ptr<Simulation> make(Executor& executor, const SimulationConfig& config) {
  if (!config.options.empty()) throw std::invalid_argument("heat3d takes no options");
  const int w = static_cast<int>(config.width), h = static_cast<int>(config.height);
  const int d = static_cast<int>(config.depth);  // --size WxHxD: this plugin declares 3 axes, below
  if (executor.kind() == Executor::Kind::cuda) {
#ifdef HEAT_HAVE_CUDA
    return make_cuda(executor, w, h, d);
#else
    throw std::runtime_error(
        "this build of the heat3d plugin has no CUDA kernel: rebuild it with nvcc, or run "
        "cuview-compute --backend host");
#endif
  }
  return std::make_unique<Heat3dHost>(w, h, d);
}
}  // namespace
}  // namespace heat3d

// 3 axes: cuview-compute takes --size WxHxD and gives the plugin SimulationConfig::depth.
CUVIEW_SIMULATION_PLUGIN_AXES("heat3d", "the 3D heat equation in a box with cold faces (example plugin)", heat3d::make,
                              3)
