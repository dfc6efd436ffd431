// Simulation plugins for the daemon's plugin tests, one shared library per behaviour, chosen at
// build time by CUVIEW_TEST_FAULT, CUVIEW_TEST_ABI and CUVIEW_TEST_AXES: a good one ("ramp": a
// field that counts its steps, with one steerable parameter), the same built against ABI 7, one
// of 3 axes ("layers", with checkpoints), and the broken kinds a user might write. Host executor
// only.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "sims/plugin.hpp"

// Declared and never defined, as a kernel launcher in a .cu file that CMake did not compile is:
// the plugin that calls it cannot be loaded (Fault::undefined_symbol).
namespace advect {
struct Params {
  float speed = 1;
};
namespace gpu {
void fill_flow(int steps, float* flow, const Params& params, void* stream);
}  // namespace gpu
}  // namespace advect

namespace {
using namespace cuview;
using namespace cuview::sim;

enum class Fault { none, reset_throws, step_throws, make_throws, undefined_symbol };

constexpr std::uint64_t kWalkers = 100;

class Ramp final : public Simulation {
 public:
  Ramp(const SimulationConfig& c, Fault fault) : cells_(std::size_t{c.width} * c.height), fault_(fault) {}
  std::vector<FieldSpec> fields() const override {
    return {{"ramp", DType::float32, 1, "step × rate + cell index / cells"},
            {"cell", DType::int32, 1, "the cell's index"}};
  }
  std::vector<ParticleSetSpec> particle_sets() const override {
    return {{"walkers",
             kWalkers,
             {{"position", DType::float32, 2, "x, y in cells"}, {"id", DType::int32, 1, "the walker's number"}},
             "walkers moving right by `rate` per step",
             {}}};
  }
  std::vector<ParamSpec> params() const override { return {{"rate", 1.0, 0.0, 10.0, false, "growth per step"}}; }
  std::vector<Preset> presets() const override { return {{"slow", {{"rate", 0.5}}}, {"fast", {{"rate", 4}}}}; }
  void reset(std::uint64_t) override {
    if (fault_ == Fault::reset_throws) throw std::runtime_error("the initial state needs a file that is not there");
    t_ = 0;
  }
  void set_params(const std::map<std::string, double>& values) override { rate_ = values.at("rate"); }
  void step(std::uint32_t n) override {
    if (fault_ == Fault::step_throws && t_ > 20) throw std::runtime_error("the solver diverged after t = 20");
    t_ += n * rate_;
  }
  void write_fields(const std::vector<FieldTarget>& targets) override {
    std::vector<float> ramp(cells_);
    std::vector<std::int32_t> cell(cells_);
    for (std::size_t i = 0; i < cells_; ++i) {
      ramp[i] = static_cast<float>(t_ + static_cast<double>(i) / cells_);
      cell[i] = static_cast<std::int32_t>(i);
    }
    std::memcpy(targets[0].data, ramp.data(), targets[0].bytes);
    std::memcpy(targets[1].data, cell.data(), targets[1].bytes);
    std::vector<float> position(2 * kWalkers);
    std::vector<std::int32_t> id(kWalkers);
    for (std::uint64_t w = 0; w < kWalkers; ++w) {
      position[2 * w] = static_cast<float>(t_), position[2 * w + 1] = static_cast<float>(w);
      id[w] = static_cast<std::int32_t>(w);
    }
    std::memcpy(targets[2].data, position.data(), targets[2].bytes);
    std::memcpy(targets[3].data, id.data(), targets[3].bytes);
  }

 private:
  std::size_t cells_;
  Fault fault_;
  double rate_ = 1, t_ = 0;
};

/// A plugin of 3 axes (or, built with CUVIEW_TEST_AXES 1, of one: a line of `width` cells): one
/// int32 field, `count`, whose cell (x, y, z) is seed + its index ((z × height + y) × width + x) +
/// step × (z + 1): a reader can tell every cell's place and the step, and a restored run's cells
/// come from its checkpoint, not from its seed.
class Layers final : public Simulation {
 public:
  explicit Layers(const SimulationConfig& c)
      : width_(c.width), height_(c.height), depth_(c.depth), count_(std::size_t{c.width} * c.height * c.depth) {}
  std::vector<FieldSpec> fields() const override {
    return {{"count", DType::int32, 1, "seed + cell index + step × (z + 1)"}};
  }
  std::vector<ParamSpec> params() const override { return {}; }
  void reset(std::uint64_t seed) override {
    for (std::size_t i = 0; i < count_.size(); ++i) count_[i] = static_cast<std::int32_t>(seed + i);
  }
  void set_params(const std::map<std::string, double>&) override {}
  void step(std::uint32_t n) override {
    const std::size_t plane = std::size_t{width_} * height_;
    for (std::size_t i = 0; i < count_.size(); ++i) count_[i] += static_cast<std::int32_t>(n * (i / plane + 1));
  }
  void write_fields(const std::vector<FieldTarget>& targets) override {
    std::memcpy(targets[0].data, count_.data(), targets[0].bytes);
  }
  std::vector<StateSpec> state() const override {
    if (CUVIEW_TEST_AXES == 1) return {{"count", DType::int32, {width_}, "the field"}};
    return {{"count", DType::int32, {depth_, height_, width_}, "the field"}};
  }
  void save_state(const std::vector<void*>& out) override {
    std::memcpy(out[0], count_.data(), count_.size() * sizeof(std::int32_t));
  }
  void load_state(const std::vector<const void*>& in) override {
    std::memcpy(count_.data(), in[0], count_.size() * sizeof(std::int32_t));
  }

 private:
  std::uint64_t width_, height_, depth_;
  std::vector<std::int32_t> count_;
};

[[maybe_unused]] std::unique_ptr<Simulation> make(Executor& executor, const SimulationConfig& config) {
  if (executor.kind() != Executor::Kind::host)
    throw std::runtime_error("this test plugin runs on the host executor only (--backend host)");
  const Fault fault = CUVIEW_TEST_FAULT;
  if (fault == Fault::make_throws) throw std::runtime_error("cannot allocate the grid");
  if (fault == Fault::undefined_symbol) advect::gpu::fill_flow(1, nullptr, advect::Params{}, nullptr);
  if (CUVIEW_TEST_AXES != 2) return std::make_unique<Layers>(config);
  return std::make_unique<Ramp>(config, fault);
}
}  // namespace

#if CUVIEW_TEST_ABI == 1 && CUVIEW_TEST_AXES == 3
CUVIEW_SIMULATION_PLUGIN_AXES("layers", "a volume whose cells count their steps by layer (test plugin)", make, 3)
#elif CUVIEW_TEST_ABI == 1 && CUVIEW_TEST_AXES == 1
CUVIEW_SIMULATION_PLUGIN_AXES("cells", "a line whose cells count their steps (test plugin)", make, 1)
#elif CUVIEW_TEST_ABI == 1
CUVIEW_SIMULATION_PLUGIN("ramp", "a field that grows by `rate` per step (test plugin)", make)
#elif CUVIEW_TEST_ABI == 7
// What a plugin built against cuview's ABI 7 exports: PluginInfo as it was, without `axes`.
struct PluginInfoAbi7 {
  std::uint32_t abi;
  const char* name;
  const char* help;
  const char* cuview_version;
  std::unique_ptr<Simulation> (*make)(Executor& executor, const SimulationConfig& config);
};
extern "C" __attribute__((visibility("default"))) const PluginInfoAbi7* cuview_simulation_v1() {
  static const PluginInfoAbi7 info{7, "ramp", "a field that grows by `rate` per step (ABI 7 test plugin)",
                                   CUVIEW_VERSION, make};
  return &info;
}
#elif CUVIEW_TEST_ABI == 2
// What a plugin built against a future cuview would export.
extern "C" __attribute__((visibility("default"))) const void* cuview_simulation_v2() { return nullptr; }
#else
// No entry point at all: a shared library that is not a cuview plugin.
extern "C" __attribute__((visibility("default"))) int not_a_plugin() { return 0; }
#endif
