// N-body gravity on the Simulation interface: declarations, initial conditions, the host loop and
// the factory. The pair interaction is nbody.hpp's, shared with the CUDA kernels.
#include <cmath>
#include <cstring>

#include "cuview/error.hpp"
#include "sims/nbody/nbody_setup.hpp"
#include "sims/row_pool.hpp"

namespace cuview::sim::nbody {

NbodyOptions options_from(const std::map<std::string, std::string>& options) {
  NbodyOptions o;
  for (const auto& [key, value] : options) {
    if (key == "setup" && (value == "disc" || value == "galaxies")) {
      o.galaxies = value == "galaxies";
    } else if (key == "bodies") {
      try {
        o.bodies = std::stoull(value);
      } catch (const std::exception&) {
        o.bodies = 0;
      }
      if (o.bodies < 2 || o.bodies > (1ull << 24))
        throw Error(Errc::out_of_range, "nbody: bodies=" + value + " is out of range: use 2 to 16777216");
    } else {
      throw Error(Errc::bad_value,
                  "nbody: option " + key + "=" + value + " is not known; nbody has bodies=N and setup=disc|galaxies");
    }
  }
  return o;
}

std::vector<StateSpec> state(std::uint64_t bodies) {
  return {{"position_mass", DType::float32, {bodies, 4}, "x, y, z, mass"},
          {"velocity", DType::float32, {bodies, 4}, "vx, vy, vz, 0"},
          {"acceleration", DType::float32, {bodies, 4}, "ax, ay, az, 0 (of the positions, for the next kick)"}};
}

std::vector<FieldSpec> fields() { return {{"density", DType::float32, 1, "bodies per cell, looking down the z axis"}}; }

std::vector<ParticleSetSpec> particle_sets(std::uint64_t bodies, bool galaxies, int width, int height) {
  // The grid shows a square of half-width L around the origin along its shorter side (splat()).
  const double cell = 2.0 * view_half_width(galaxies) / std::min(width, height);
  return {{"bodies",
           bodies,
           {{"position", DType::float32, 3, "x, y, z"},
            {"velocity", DType::float32, 3, "vx, vy, vz"},
            {"mass", DType::float32, 1, "mass (the initial bodies sum to 1)"}},
           "self-gravitating bodies, G = 1",
           {-0.5 * width * cell, 0.5 * width * cell, -0.5 * height * cell, 0.5 * height * cell}}};
}

std::vector<InputSpec> inputs() {
  return {{"bodies", "points", "draw places a heavy body at rest; erase removes the bodies inside the brush"}};
}

void draw(const Stroke& s, State& st, std::uint64_t bodies, bool galaxies, int width, int height) {
  const double cell = 2.0 * view_half_width(galaxies) / std::min(width, height);
  const double wx = (s.x - 0.5 * width) * cell, wy = (s.y - 0.5 * height) * cell, r = s.radius * cell;
  if (s.value == 0) {
    for (std::uint64_t i = 0; i < bodies; ++i) {
      float* p = &st.pos_mass[4 * i];
      const double dx = p[0] - wx, dy = p[1] - wy;
      if (p[3] == 0.0f || dx * dx + dy * dy > r * r) continue;
      p[0] = 1e6f + static_cast<float>(i), p[1] = 1e6f, p[2] = 0, p[3] = 0;
      st.vel[4 * i] = st.vel[4 * i + 1] = st.vel[4 * i + 2] = 0;
    }
    return;
  }
  std::uint64_t take = 0;
  for (std::uint64_t i = 1; i < bodies; ++i)
    if (st.pos_mass[4 * i + 3] < st.pos_mass[4 * take + 3]) take = i;  // a removed body (mass 0), else the lightest
  float* p = &st.pos_mass[4 * take];
  p[0] = static_cast<float>(wx), p[1] = static_cast<float>(wy), p[2] = 0, p[3] = kPlacedMass;
  st.vel[4 * take] = st.vel[4 * take + 1] = st.vel[4 * take + 2] = 0;
}

std::vector<ParamSpec> params() {
  return {{"dt", 0.001, 1e-5, 0.01, false, "time step of the leapfrog integrator"},
          {"softening", 0.02, 0.001, 0.2, false, "Plummer softening length ε"}};
}

std::vector<Preset> presets() {
  return {{"default", {{"dt", 0.001}, {"softening", 0.02}}}, {"precise", {{"dt", 0.0002}, {"softening", 0.02}}}};
}

NbodyParams from(const std::map<std::string, double>& values) {
  NbodyParams p;
  if (auto it = values.find("dt"); it != values.end()) p.dt = static_cast<float>(it->second);
  if (auto it = values.find("softening"); it != values.end()) p.softening = static_cast<float>(it->second);
  return p;
}

namespace {
double uniform(std::uint64_t& s) {  // splitmix64 → [0, 1)
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

/// One disc of `n` bodies (the first is a central mass holding half the disc's mass) of total
/// mass `mass`, centred at (x0, y0) moving with (vx0, vy0), rotating counter-clockwise.
void disc(State& s, std::uint64_t first, std::uint64_t n, double mass, double x0, double y0, double vx0, double vy0,
          std::uint64_t& rng) {
  const double centre = 0.5 * mass, each = (mass - centre) / static_cast<double>(n - 1);
  auto put = [&](std::uint64_t i, double x, double y, double z, double m, double vx, double vy) {
    float* p = &s.pos_mass[4 * i];
    p[0] = static_cast<float>(x0 + x), p[1] = static_cast<float>(y0 + y), p[2] = static_cast<float>(z);
    p[3] = static_cast<float>(m);
    float* v = &s.vel[4 * i];
    v[0] = static_cast<float>(vx0 + vx), v[1] = static_cast<float>(vy0 + vy), v[2] = 0, v[3] = 0;
  };
  put(first, 0, 0, 0, centre, 0, 0);
  for (std::uint64_t k = 1; k < n; ++k) {
    // Surface density ∝ 1/r between 0.1 and 1: r uniform. Circular speed from the mass inside r.
    const double r = 0.1 + 0.9 * uniform(rng), phi = 2 * M_PI * uniform(rng);
    const double z = 0.01 * (uniform(rng) - 0.5);
    const double inside = centre + (mass - centre) * (r - 0.1) / 0.9;
    const double v = std::sqrt(inside / std::sqrt(r * r + 0.02 * 0.02));
    put(first + k, r * std::cos(phi), r * std::sin(phi), z, each, -v * std::sin(phi), v * std::cos(phi));
  }
}
}  // namespace

State initial_state(std::uint64_t bodies, bool galaxies, std::uint64_t seed) {
  State s;
  s.pos_mass.assign(4 * bodies, 0.0f), s.vel.assign(4 * bodies, 0.0f), s.acc.assign(4 * bodies, 0.0f);
  std::uint64_t rng = seed * 0x2545F4914F6CDD1Dull + 1;
  if (!galaxies || bodies < 4) {
    disc(s, 0, bodies, 1.0, 0, 0, 0, 0, rng);
  } else {  // two equal discs 3 apart, approaching on a slightly off-centre course
    const std::uint64_t half = bodies / 2;
    disc(s, 0, half, 0.5, -1.5, -0.3, 0.25, 0.0, rng);
    disc(s, half, bodies - half, 0.5, 1.5, 0.3, -0.25, 0.0, rng);
  }
  return s;
}

float view_half_width(bool galaxies) { return galaxies ? 3.0f : 1.5f; }

void splat(const float* pm, std::uint64_t bodies, float half_width, int width, int height, float* density) {
  std::memset(density, 0, sizeof(float) * static_cast<std::size_t>(width) * height);
  const float cell = 2.0f * half_width / static_cast<float>(std::min(width, height));
  for (std::uint64_t i = 0; i < bodies; ++i) {
    const int gx = static_cast<int>(std::floor(pm[4 * i] / cell + 0.5f * width));
    const int gy = static_cast<int>(std::floor(pm[4 * i + 1] / cell + 0.5f * height));
    if (gx >= 0 && gx < width && gy >= 0 && gy < height) density[static_cast<std::size_t>(gy) * width + gx] += 1.0f;
  }
}

namespace {

class NbodyHost final : public Simulation {
 public:
  NbodyHost(int width, int height, const NbodyOptions& o) : w_(width), h_(height), o_(o) {}
  std::vector<FieldSpec> fields() const override { return nbody::fields(); }
  std::vector<ParticleSetSpec> particle_sets() const override {
    return nbody::particle_sets(o_.bodies, o_.galaxies, w_, h_);
  }
  std::vector<InputSpec> inputs() const override { return nbody::inputs(); }
  void draw(const Stroke& s) override {
    nbody::draw(s, s_, o_.bodies, o_.galaxies, w_, h_);
    accelerations();
  }
  std::vector<ParamSpec> params() const override { return nbody::params(); }
  std::vector<Preset> presets() const override { return nbody::presets(); }
  void set_params(const std::map<std::string, double>& values) override { p_ = from(values); }
  double time_per_step() const override { return p_.dt; }
  void reset(std::uint64_t seed) override {
    s_ = initial_state(o_.bodies, o_.galaxies, seed);
    accelerations();
  }
  void step(std::uint32_t n) override {
    const float h = 0.5f * p_.dt;
    for (std::uint32_t k = 0; k < n; ++k) {
      for (std::uint64_t i = 0; i < o_.bodies; ++i)  // kick, drift
        for (int d = 0; d < 3; ++d) {
          s_.vel[4 * i + d] += h * s_.acc[4 * i + d];
          s_.pos_mass[4 * i + d] += p_.dt * s_.vel[4 * i + d];
        }
      accelerations();
      for (std::uint64_t i = 0; i < o_.bodies; ++i)  // kick
        for (int d = 0; d < 3; ++d) s_.vel[4 * i + d] += h * s_.acc[4 * i + d];
    }
  }
  std::vector<StateSpec> state() const override { return nbody::state(o_.bodies); }
  void save_state(const std::vector<void*>& out) override {
    const std::size_t bytes = 4 * sizeof(float) * o_.bodies;
    std::memcpy(out[0], s_.pos_mass.data(), bytes);
    std::memcpy(out[1], s_.vel.data(), bytes);
    std::memcpy(out[2], s_.acc.data(), bytes);
  }
  void load_state(const std::vector<const void*>& in) override {
    const std::size_t bytes = 4 * sizeof(float) * o_.bodies;
    s_.pos_mass.resize(4 * o_.bodies), s_.vel.resize(4 * o_.bodies), s_.acc.resize(4 * o_.bodies);
    std::memcpy(s_.pos_mass.data(), in[0], bytes);
    std::memcpy(s_.vel.data(), in[1], bytes);
    std::memcpy(s_.acc.data(), in[2], bytes);
  }
  void write_fields(const std::vector<FieldTarget>& t) override {
    splat(s_.pos_mass.data(), o_.bodies, view_half_width(o_.galaxies), w_, h_, static_cast<float*>(t[0].data));
    auto* pos = static_cast<float*>(t[1].data);
    auto* vel = static_cast<float*>(t[2].data);
    auto* mass = static_cast<float*>(t[3].data);
    for (std::uint64_t i = 0; i < o_.bodies; ++i) {
      for (int d = 0; d < 3; ++d) pos[3 * i + d] = s_.pos_mass[4 * i + d], vel[3 * i + d] = s_.vel[4 * i + d];
      mass[i] = s_.pos_mass[4 * i + 3];
    }
  }

 private:
  void accelerations() {
    const float eps2 = p_.softening * p_.softening;
    const float* pm = s_.pos_mass.data();
    // Bands of bodies on every core; each body's sum runs over j in order, as on one thread.
    bodies_.run(0, static_cast<std::int64_t>(o_.bodies), [&](std::int64_t i0, std::int64_t i1) {
      for (auto i = static_cast<std::uint64_t>(i0); i < static_cast<std::uint64_t>(i1); ++i) {
        float ax = 0, ay = 0, az = 0;
        for (std::uint64_t j = 0; j < o_.bodies; ++j)
          interact(pm[4 * i], pm[4 * i + 1], pm[4 * i + 2], pm[4 * j], pm[4 * j + 1], pm[4 * j + 2], pm[4 * j + 3],
                   eps2, ax, ay, az);
        s_.acc[4 * i] = ax, s_.acc[4 * i + 1] = ay, s_.acc[4 * i + 2] = az;
      }
    }, 128);
  }
  int w_, h_;
  NbodyOptions o_;
  NbodyParams p_;
  State s_;
  RowPool bodies_;
};

}  // namespace

std::unique_ptr<Simulation> make(Executor& executor, const SimulationConfig& config) {
  NbodyOptions o = options_from(config.options);
  const int w = static_cast<int>(config.width), h = static_cast<int>(config.height);
#ifdef CUVIEW_HAVE_CUDA
  if (executor.kind() == Executor::Kind::cuda) {
    if (o.bodies == 0) o.bodies = 65536;
    return make_cuda(executor, w, h, o);
  }
#endif
  (void)executor;
  if (o.bodies == 0) o.bodies = 1024;
  return std::make_unique<NbodyHost>(w, h, o);
}

}  // namespace cuview::sim::nbody
