// The lattice-Boltzmann flow on the Simulation interface: declarations, the host loop, and the
// factory that picks the host or CUDA implementation. The physics is lbm.hpp's, shared by both.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "cuview/error.hpp"
#include "sims/lbm/lbm_setup.hpp"

namespace cuview::sim::lbm {

LbmOptions options_from(const std::map<std::string, std::string>& options) {
  LbmOptions o;
  for (const auto& [key, value] : options) {
    if (key == "flow" && (value == "channel" || value == "periodic")) {
      o.periodic = value == "periodic";
    } else if (key == "obstacle" && (value == "cylinder" || value == "none")) {
      o.cylinder = value == "cylinder";
    } else {
      throw Error(Errc::bad_value, "lbm: option " + key + "=" + value +
                                       " is not known; lbm has flow=channel|periodic and obstacle=cylinder|none");
    }
  }
  return o;
}

std::vector<StateSpec> state(int width, int height) {
  const auto w = static_cast<std::uint64_t>(width), h = static_cast<std::uint64_t>(height);
  return {{"populations", DType::float32, {kQ, h, w}, "D2Q9 populations f_i − w_i, direction outermost"},
          {"obstacles", DType::uint8, {h, w}, "1 where the cell is solid (walls, the cylinder, what was drawn)"}};
}

std::vector<FieldSpec> fields() {
  return {{"velocity", DType::float32, 2, "flow velocity (ux, uy), lattice units"},
          {"speed", DType::float32, 1, "|velocity|"},
          {"vorticity", DType::float32, 1, "curl of the velocity, ∂uy/∂x − ∂ux/∂y"},
          {"density", DType::float32, 1, "fluid density (1 at rest)"}};
}

std::vector<ParamSpec> params() {
  return {{"viscosity", 0.02, 0.005, 0.5, false, "kinematic viscosity ν (τ = 3ν + ½); lower is more turbulent"},
          {"inflow", 0.08, 0.0, 0.15, false, "inflow velocity at the left edge (channel flow)"},
          {"force", 0.0, 0.0, 0.001, false, "body force along x (drives a periodic channel)"}};
}

std::vector<Preset> presets() {
  return {{"karman", {{"viscosity", 0.02}, {"inflow", 0.08}, {"force", 0.0}}},
          {"laminar", {{"viscosity", 0.1}, {"inflow", 0.05}, {"force", 0.0}}},
          {"fast", {{"viscosity", 0.008}, {"inflow", 0.1}, {"force", 0.0}}}};
}

LbmParams from(const std::map<std::string, double>& values, const LbmOptions& o) {
  LbmParams p;
  double nu = 0.02;
  if (auto it = values.find("viscosity"); it != values.end()) nu = it->second;
  p.omega = static_cast<float>(1.0 / (3.0 * nu + 0.5));
  if (auto it = values.find("inflow"); it != values.end()) p.u_in = static_cast<float>(it->second);
  if (auto it = values.find("force"); it != values.end()) p.force = static_cast<float>(it->second);
  p.periodic = o.periodic ? 1 : 0;
  return p;
}

std::vector<std::uint8_t> obstacle_mask(int width, int height, const LbmOptions& o) {
  std::vector<std::uint8_t> solid(static_cast<std::size_t>(width) * height, 0);
  for (int x = 0; x < width; ++x) solid[x] = solid[static_cast<std::size_t>(height - 1) * width + x] = 1;
  if (o.cylinder) {
    const double cxr = width / 5.0, cyr = height / 2.0 + 1.0, r = std::max(2.0, height / 10.0);
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x)
        if ((x - cxr) * (x - cxr) + (y - cyr) * (y - cyr) <= r * r) solid[static_cast<std::size_t>(y) * width + x] = 1;
  }
  return solid;
}

std::vector<std::uint16_t> cell_flags(const std::vector<std::uint8_t>& solid, int width, int height,
                                      const LbmOptions& o) {
  std::vector<std::uint16_t> flags(solid.size(), 0);
  update_flags(solid, flags, width, height, o, 0, 0, width, height);
  return flags;
}

void update_flags(const std::vector<std::uint8_t>& solid, std::vector<std::uint16_t>& flags, int width, int height,
                  const LbmOptions& o, int x0, int y0, int x1, int y1) {
  x0 = std::max(x0, 0), y0 = std::max(y0, 0), x1 = std::min(x1, width), y1 = std::min(y1, height);
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x)
      flags[static_cast<std::size_t>(y) * width + x] = flags_of_cell(solid.data(), x, y, width, height, o.periodic);
}

std::vector<InputSpec> inputs() {
  return {{"obstacles", "mask", "solid cells the flow goes around: draw to add, erase to remove"}};
}

Touched draw(const Stroke& s, std::vector<std::uint8_t>& solid, std::vector<std::uint16_t>& flags, int width,
             int height, const LbmOptions& o) {
  const int r = static_cast<int>(std::ceil(s.radius));
  const int cx0 = static_cast<int>(s.x), cy0 = static_cast<int>(s.y);
  for (int y = std::max(1, cy0 - r); y <= std::min(height - 2, cy0 + r); ++y)  // the walls stay
    for (int x = std::max(0, cx0 - r); x <= std::min(width - 1, cx0 + r); ++x) {
      const double dx = x + 0.5 - s.x, dy = y + 0.5 - s.y;
      if (dx * dx + dy * dy <= s.radius * s.radius) solid[static_cast<std::size_t>(y) * width + x] = s.value ? 1 : 0;
    }
  // A cell's flags depend on its neighbours: redo one cell more on every side (and the far column,
  // which the outflow or the periodic wrap reads from).
  Touched t{std::max(0, cx0 - r - 1), std::max(0, cy0 - r - 1), std::min(width, cx0 + r + 2),
            std::min(height, cy0 + r + 2)};
  update_flags(solid, flags, width, height, o, t.x0, t.y0, t.x1, t.y1);
  if (t.x0 == 0 || t.x1 == width) {  // the wrap or the outflow column sees the other edge
    update_flags(solid, flags, width, height, o, 0, t.y0, 1, t.y1);
    update_flags(solid, flags, width, height, o, width - 1, t.y0, width, t.y1);
    t.x0 = 0, t.x1 = width;
  }
  return t;
}

void initial_state(int width, int height, const std::vector<std::uint8_t>& solid, float u0, float* f) {
  const std::size_t cells = static_cast<std::size_t>(width) * height;
  for (std::size_t c = 0; c < cells; ++c)
    for (int i = 0; i < kQ; ++i) f[i * cells + c] = solid[c] ? 0.0f : shifted_equilibrium(i, 0.0f, 1.0f, u0, 0.0f);
}

namespace {

class LbmHost final : public Simulation {
 public:
  LbmHost(int width, int height, const LbmOptions& o)
      : w_(width), h_(height), o_(o), solid_(obstacle_mask(width, height, o)), flags_(cell_flags(solid_, w_, h_, o_)) {
    f_.resize(cells() * kQ), f2_.resize(cells() * kQ);
  }
  std::vector<FieldSpec> fields() const override { return lbm::fields(); }
  std::vector<ParamSpec> params() const override { return lbm::params(); }
  std::vector<Preset> presets() const override { return lbm::presets(); }
  void reset(std::uint64_t) override { initial_state(w_, h_, solid_, o_.periodic ? 0.0f : p_.u_in, f_.data()); }
  void set_params(const std::map<std::string, double>& values) override { p_ = from(values, o_); }
  void step(std::uint32_t n) override {
    for (std::uint32_t s = 0; s < n; ++s) {
      for (int y = 0; y < h_; ++y)
        for (int x = 0; x < w_; ++x) lbm_cell(f_.data(), f2_.data(), flags_.data(), x, y, w_, h_, p_);
      std::swap(f_, f2_);
    }
  }
  std::vector<InputSpec> inputs() const override { return lbm::inputs(); }
  void draw(const Stroke& s) override { (void)lbm::draw(s, solid_, flags_, w_, h_, o_); }
  std::vector<StateSpec> state() const override { return lbm::state(w_, h_); }
  void save_state(const std::vector<void*>& out) override {
    std::memcpy(out[0], f_.data(), f_.size() * sizeof(float));
    std::memcpy(out[1], solid_.data(), solid_.size());
  }
  void load_state(const std::vector<const void*>& in) override {
    std::memcpy(f_.data(), in[0], f_.size() * sizeof(float));
    std::memcpy(solid_.data(), in[1], solid_.size());
    flags_ = cell_flags(solid_, w_, h_, o_);
  }
  void write_fields(const std::vector<FieldTarget>& t) override {
    for (int y = 0; y < h_; ++y)
      for (int x = 0; x < w_; ++x)
        lbm_observe(f_.data(), flags_.data(), x, y, w_, h_, p_.force, static_cast<float*>(t[0].data),
                    static_cast<float*>(t[1].data), static_cast<float*>(t[2].data), static_cast<float*>(t[3].data));
  }

 private:
  [[nodiscard]] std::size_t cells() const { return static_cast<std::size_t>(w_) * h_; }
  int w_, h_;
  LbmOptions o_;
  LbmParams p_;
  std::vector<std::uint8_t> solid_;
  std::vector<std::uint16_t> flags_;
  std::vector<float> f_, f2_;
};

}  // namespace

std::unique_ptr<Simulation> make(Executor& executor, const SimulationConfig& config) {
  const LbmOptions o = options_from(config.options);
  const int w = static_cast<int>(config.width), h = static_cast<int>(config.height);
#ifdef CUVIEW_HAVE_CUDA
  if (executor.kind() == Executor::Kind::cuda) return make_cuda(executor, w, h, o);
#endif
  (void)executor;
  return std::make_unique<LbmHost>(w, h, o);
}

}  // namespace cuview::sim::lbm
