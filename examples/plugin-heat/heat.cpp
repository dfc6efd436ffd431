// A cuview plugin: the heat equation on a plate. The host loop is here; heat_cuda.cu has the
// kernel. cuview-compute loads it with --sim path/to/libheat.so.
#include "heat.hpp"

#include <cstring>
#include <stdexcept>
#include <vector>

#include "sims/plugin.hpp"

namespace heat {
using namespace cuview;
using namespace cuview::sim;

void initial_state(int w, int h, std::uint64_t seed, float* t) {
  std::memset(t, 0, sizeof(float) * static_cast<std::size_t>(w) * h);
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&] { return (s = s * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  for (int k = 0; k < 6; ++k) {
    const int cx = 1 + static_cast<int>(next() % static_cast<std::uint64_t>(w - 2));
    const int cy = 1 + static_cast<int>(next() % static_cast<std::uint64_t>(h - 2));
    const int r = 2 + std::min(w, h) / 12;
    for (int y = std::max(1, cy - r); y < std::min(h - 1, cy + r); ++y)
      for (int x = std::max(1, cx - r); x < std::min(w - 1, cx + r); ++x)
        if ((x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r) t[y * w + x] = 1.0f;
  }
}

namespace {
class HeatHost final : public Simulation {
 public:
  HeatHost(int w, int h) : w_(w), h_(h), t_(static_cast<std::size_t>(w) * h), next_(t_.size()) {}
  std::vector<FieldSpec> fields() const override { return {{"T", DType::float32, 1, "temperature"}}; }
  std::vector<ParamSpec> params() const override {
    return {{"alpha", 0.2, 0.0, 0.25, false, "diffusivity × time step (stable up to 0.25)"}};
  }
  std::vector<Preset> presets() const override { return {{"slow", {{"alpha", 0.05}}}, {"fast", {{"alpha", 0.25}}}}; }
  void reset(std::uint64_t seed) override { initial_state(w_, h_, seed, t_.data()); }
  void set_params(const std::map<std::string, double>& v) override { alpha_ = static_cast<float>(v.at("alpha")); }
  void step(std::uint32_t n) override {
    for (std::uint32_t s = 0; s < n; ++s) {
      for (int y = 0; y < h_; ++y)
        for (int x = 0; x < w_; ++x)
          next_[static_cast<std::size_t>(y) * w_ + x] = step_cell(t_.data(), x, y, w_, h_, alpha_);
      t_.swap(next_);
    }
  }
  // Checkpoints: the temperature is the whole state (cuview-ctl checkpoint, --restore).
  std::vector<StateSpec> state() const override {
    return {{"T", DType::float32, {static_cast<std::uint64_t>(h_), static_cast<std::uint64_t>(w_)}, "temperature"}};
  }
  void save_state(const std::vector<void*>& out) override { std::memcpy(out[0], t_.data(), t_.size() * sizeof(float)); }
  void load_state(const std::vector<const void*>& in) override {
    std::memcpy(t_.data(), in[0], t_.size() * sizeof(float));
  }
  void write_fields(const std::vector<FieldTarget>& targets) override {
    std::memcpy(targets[0].data, t_.data(), targets[0].bytes);
  }

 private:
  int w_, h_;
  float alpha_ = 0.2f;
  std::vector<float> t_, next_;
};

std::unique_ptr<Simulation> make(Executor& executor, const SimulationConfig& config) {
  if (!config.options.empty()) throw std::invalid_argument("heat takes no options");
  const int w = static_cast<int>(config.width), h = static_cast<int>(config.height);
  if (executor.kind() == Executor::Kind::cuda) {
#ifdef HEAT_HAVE_CUDA
    return make_cuda(executor, w, h);
#else
    throw std::runtime_error(
        "this build of the heat plugin has no CUDA kernel: rebuild it with nvcc, or run "
        "cuview-compute --backend host");
#endif
  }
  return std::make_unique<HeatHost>(w, h);
}
}  // namespace
}  // namespace heat

CUVIEW_SIMULATION_PLUGIN("heat", "the 2D heat equation on a plate with cold edges (example plugin)", heat::make)
