// The fluid and particle simulations compute what their physics says: the lattice-Boltzmann
// channel and duct against the analytic Poiseuille profiles (driven by a force, and by the
// inlet and outlet of flow=channel) and conserving mass, a cylinder shedding a vortex street,
// the CUDA and host implementations agreeing. Tagged [gpu] runs need a GPU; the
// `unit` CTest runs the host ones.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <numeric>
#include <vector>

#include "backend_test.hpp"
#include "executor/executor.hpp"
#include "publisher/parameter_set.hpp"
#include "sims/grayscott/grayscott.hpp"
#include "sims/lbm/lbm.hpp"
#include "sims/lbm/lbm_setup.hpp"
#include "sims/lbm3d/lbm3d_setup.hpp"
#include "sims/simulation.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
#endif

using namespace cuview;
using namespace cuview::test;

namespace {

/// A built-in simulation as cuview-compute makes it, with its parameters' defaults.
struct SimRun {
  std::unique_ptr<Executor> executor;
  std::unique_ptr<sim::Simulation> sim;
  std::map<std::string, double> params;

  SimRun(const std::string& name, Backend backend, std::uint32_t w, std::uint32_t h,
      std::map<std::string, std::string> options, std::map<std::string, double> overrides = {},
      std::uint32_t depth = 1) {
    executor = make_executor(backend == Backend::cuda ? "cuda" : "host");
    sim::SimulationConfig config{w, h, std::move(options)};
    config.depth = depth;
    for (const auto& f : sim::builtin_simulations())
      if (f.name == name) sim = f.make(*executor, config);
    REQUIRE(sim);
    ParameterSet ps(with_publisher_params(sim->params()), sim->presets());
    params = ps.values();
    for (const auto& [k, v] : overrides) params[k] = v;
    sim->set_params(params);
    sim->reset(1);
  }
  /// Every published block, as floats, in the order fields() then particle attributes.
  std::vector<std::vector<float>> read(std::size_t cells_or_count) {
    std::vector<std::size_t> sizes;
    for (const auto& f : sim->fields()) sizes.push_back(cells_or_count * f.components);
    for (const auto& s : sim->particle_sets())
      for (const auto& a : s.attributes) sizes.push_back(s.count * a.components);
    std::vector<std::vector<float>> out;
    for (auto n : sizes) out.emplace_back(n);
    std::vector<FieldTarget> targets;
#ifdef CUVIEW_HAVE_CUDA
    std::vector<cuda::DeviceBuffer> device;
    if (executor->kind() == Executor::Kind::cuda) {
      for (auto n : sizes) {
        device.emplace_back(n * sizeof(float));
        targets.push_back({device.back().get(), n * sizeof(float)});
      }
      sim->write_fields(targets);
      executor->finish();
      for (std::size_t i = 0; i < sizes.size(); ++i)
        cuda::check(cudaMemcpy(out[i].data(), device[i].get(), sizes[i] * sizeof(float), cudaMemcpyDeviceToHost),
                    "reading a field back");
      return out;
    }
#endif
    for (std::size_t i = 0; i < sizes.size(); ++i) targets.push_back({out[i].data(), sizes[i] * sizeof(float)});
    sim->write_fields(targets);
    return out;
  }
  void steps(std::uint32_t n) {
    for (std::uint32_t done = 0; done < n; done += 1000) sim->step(std::min<std::uint32_t>(1000, n - done));
    executor->finish();
  }
};

}  // namespace

BACKEND_TEST("lbm: a force-driven channel settles on the analytic Poiseuille profile, in either storage",
             "[physics][lbm]") {
  const int w = 8, h = 34;  // fluid rows 1..32 between half-way bounce-back walls at y = 0.5 and 32.5
  const double nu = 1.0 / 6.0, g = 1e-6;
  for (const std::string storage : {"fp32", "fp16s"}) {
  SimRun r("lbm", backend, w, h, {{"flow", "periodic"}, {"obstacle", "none"}, {"storage", storage}},
           {{"viscosity", nu}, {"force", g}});
  r.steps(30000);  // ~5 viscous times H²/ν
  const auto f = r.read(static_cast<std::size_t>(w) * h);
  double err2 = 0, ref2 = 0, worst = 0;
  for (int y = 1; y < h - 1; ++y) {
    const double analytic = g / (2 * nu) * (y - 0.5) * (h - 1.5 - y);
    for (int x = 0; x < w; ++x) {
      const double ux = f[0][2 * (static_cast<std::size_t>(y) * w + x)];
      const double uy = f[0][2 * (static_cast<std::size_t>(y) * w + x) + 1];
      err2 += (ux - analytic) * (ux - analytic);
      ref2 += analytic * analytic;
      worst = std::max(worst, std::abs(uy));
    }
  }
  const double rel = std::sqrt(err2 / ref2);
  INFO(storage << ": relative L2 error against Poiseuille: " << rel << "; centre-line u = " << f[0][2 * (17 * w)]
                << ", cross flow " << worst);
  const double u_max = g / (2 * nu) * 16 * 16;
  // Stated tolerance: 1 % in float32. FP16S tracks float32 while the flow develops, then stalls
  // where a step would change no population by half its rounding step: 4.6 % short of the profile
  // here, more in wider channels (docs/physics.md "Storage"; Lehmann et al. 2022 saw the same).
  CHECK(rel < (storage == "fp32" ? 0.01 : 0.06));
  // No cross flow beyond float32 noise; FP16S keeps ~3 digits of f − w: below 1 % of u_max.
  CHECK(worst < (storage == "fp32" ? 1e-4 : 1e-2) * u_max);
  }
}

BACKEND_TEST("lbm: mass is conserved in a closed channel around an obstacle, in either storage", "[physics][lbm]") {
  const int w = 96, h = 40;
  for (const std::string storage : {"fp32", "fp16s"}) {
  SimRun r("lbm", backend, w, h, {{"flow", "periodic"}, {"storage", storage}}, {{"viscosity", 0.02}, {"force", 2e-5}});
  auto mass = [&] {
    const auto f = r.read(static_cast<std::size_t>(w) * h);
    return std::accumulate(f[3].begin(), f[3].end(), 0.0);  // density, solid cells at 1
  };
  const double before = mass();
  r.steps(4000);
  const auto f = r.read(static_cast<std::size_t>(w) * h);
  const double after = std::accumulate(f[3].begin(), f[3].end(), 0.0);
  const double peak = *std::max_element(f[1].begin(), f[1].end());
  INFO(storage << ": mass " << before << " → " << after << ", peak speed " << peak);
  // Stated tolerance: 1e-5 relative (float32 sums); FP16S's rounding of f − w: 1e-4.
  CHECK(std::abs(after - before) / before < (storage == "fp32" ? 1e-5 : 1e-4));
  CHECK(peak > 0.01);  // it does flow
  }
}

TEST_CASE("lbm: a cylinder in the channel sheds an alternating vortex street, on CUDA as on the host",
          "[physics][lbm][gpu]") {
  require_backend(Backend::cuda);
  const int w = 400, h = 100;
  SimRun g("lbm", Backend::cuda, w, h, {});
  // The same start on the host, 200 steps, to compare every value of every field.
  SimRun c("lbm", Backend::host, w, h, {});
  g.steps(200), c.steps(200);
  const auto a = g.read(static_cast<std::size_t>(w) * h), b = c.read(static_cast<std::size_t>(w) * h);
  for (std::size_t k = 0; k < a.size(); ++k) {
    double diff = 0;
    for (std::size_t i = 0; i < a[k].size(); ++i) diff = std::max(diff, double(std::abs(a[k][i] - b[k][i])));
    INFO("field " << k << ": largest |cuda - host| " << diff);
    CHECK(diff < 1e-5);  // stated tolerance: 1e-5 (FMA contraction on the GPU, none on the host)
  }
  // Far downstream on the axis, the cross-flow velocity changes sign as vortices pass.
  g.steps(20000);
  int sign_changes = 0;
  float prev = 0;
  for (int t = 0; t < 40; ++t) {
    g.steps(100);
    const auto f = g.read(static_cast<std::size_t>(w) * h);
    const float uy = f[0][2 * (static_cast<std::size_t>(h / 2) * w + w / 2) + 1];
    if (t > 0 && (uy > 0) != (prev > 0)) ++sign_changes;
    prev = uy;
  }
  INFO("sign changes of uy behind the cylinder in 4000 steps: " << sign_changes);
  CHECK(sign_changes >= 4);
}

namespace {
struct Invariants {
  double energy = 0, px = 0, py = 0, pz = 0, momentum_scale = 0;
};
/// Kinetic plus softened potential energy, and total momentum, in double precision.
Invariants invariants(const std::vector<std::vector<float>>& b, std::size_t n, double eps) {
  const auto &x = b[1], &v = b[2], &m = b[3];
  Invariants r;
  for (std::size_t i = 0; i < n; ++i) {
    const double vx = v[3 * i], vy = v[3 * i + 1], vz = v[3 * i + 2];
    r.energy += 0.5 * m[i] * (vx * vx + vy * vy + vz * vz);
    r.px += m[i] * vx, r.py += m[i] * vy, r.pz += m[i] * vz;
    r.momentum_scale += m[i] * std::sqrt(vx * vx + vy * vy + vz * vz);
    for (std::size_t j = i + 1; j < n; ++j) {
      const double dx = x[3 * j] - x[3 * i], dy = x[3 * j + 1] - x[3 * i + 1], dz = x[3 * j + 2] - x[3 * i + 2];
      r.energy -= double(m[i]) * m[j] / std::sqrt(dx * dx + dy * dy + dz * dz + eps * eps);
    }
  }
  return r;
}

void check_conservation(Backend backend, std::uint64_t n, const char* setup) {
  SimRun r("nbody", backend, 64, 64, {{"bodies", std::to_string(n)}, {"setup", setup}},
        {{"dt", 0.0005}, {"softening", 0.02}});
  const auto a = invariants(r.read(64 * 64), n, 0.02);
  r.steps(2000);  // one time unit: the inner disc turns about twice
  const auto b = invariants(r.read(64 * 64), n, 0.02);
  const double drift = std::abs(b.energy - a.energy) / std::abs(a.energy);
  const double dp =
      std::sqrt((b.px - a.px) * (b.px - a.px) + (b.py - a.py) * (b.py - a.py) + (b.pz - a.pz) * (b.pz - a.pz)) /
      a.momentum_scale;
  INFO(setup << ", " << n << " bodies: energy " << a.energy << " → " << b.energy << " (relative drift " << drift
             << "), momentum change " << dp << " of Σ m|v|");
  CHECK(drift < 1e-4);  // stated tolerance: 1e-4 relative over 2000 steps (dt 5e-4, ε 0.02)
  CHECK(dp < 1e-4);     // stated tolerance: 1e-4 of Σ m|v| (float32 sums of non-antisymmetric forces)
}
}  // namespace

BACKEND_TEST("nbody: leapfrog keeps energy and momentum over 2000 steps", "[physics][nbody]") {
  check_conservation(backend, backend == Backend::cuda ? 8192 : 256, "disc");
  check_conservation(backend, backend == Backend::cuda ? 8192 : 256, "galaxies");
}

TEST_CASE("nbody: CUDA and host agree body by body", "[physics][nbody][gpu]") {
  require_backend(Backend::cuda);
  const std::uint64_t n = 2048;
  SimRun g("nbody", Backend::cuda, 64, 64, {{"bodies", std::to_string(n)}, {"setup", "galaxies"}});
  SimRun c("nbody", Backend::host, 64, 64, {{"bodies", std::to_string(n)}, {"setup", "galaxies"}});
  g.steps(20), c.steps(20);
  const auto a = g.read(64 * 64), b = c.read(64 * 64);
  double worst = 0;
  for (std::size_t i = 0; i < 3 * n; ++i) worst = std::max(worst, double(std::abs(a[1][i] - b[1][i])));
  INFO("largest position difference after 20 steps: " << worst);
  CHECK(worst < 1e-5);  // stated tolerance: 1e-5 (rsqrtf and summation order differ)
  CHECK(a[3] == b[3]);  // the same bodies
}

namespace {
/// The simulation's state after `steps` steps with $CUVIEW_HOST_THREADS at `threads`.
std::vector<std::vector<std::byte>> state_after(const std::string& name, unsigned threads, std::uint32_t w,
                                                std::uint32_t h, std::map<std::string, std::string> options,
                                                std::uint32_t steps) {
  ::setenv("CUVIEW_HOST_THREADS", std::to_string(threads).c_str(), 1);
  SimRun r(name, Backend::host, w, h, std::move(options));
  ::unsetenv("CUVIEW_HOST_THREADS");
  r.steps(steps);
  std::vector<std::vector<std::byte>> out;
  std::vector<void*> ptrs;
  for (const auto& s : r.sim->state()) out.emplace_back(s.bytes());
  for (auto& o : out) ptrs.push_back(o.data());
  r.sim->save_state(ptrs);
  return out;
}
}  // namespace

TEST_CASE("the host simulations give the same bits on one thread as on every core", "[physics][host]") {
  struct Case {
    std::string name;
    std::uint32_t w, h;
    std::map<std::string, std::string> options;
    std::uint32_t steps;
  };
  // Grids large enough to be split into bands (small ones run on one thread anyway).
  for (const auto& c : {Case{"grayscott", 512, 256, {}, 300}, Case{"lbm", 400, 160, {}, 300},
                        Case{"lbm", 300, 150, {{"flow", "periodic"}}, 200}, Case{"nbody", 64, 64, {{"bodies", "600"}}, 20}}) {
    INFO(c.name << " " << c.w << "x" << c.h);
    const auto one = state_after(c.name, 1, c.w, c.h, c.options, c.steps);
    const auto many = state_after(c.name, 5, c.w, c.h, c.options, c.steps);  // more threads than rows of some bands
    REQUIRE(one.size() == many.size());
    for (std::size_t i = 0; i < one.size(); ++i) CHECK(one[i] == many[i]);
  }
}

namespace {
/// One more step of the 2-D flow (host rows for `isa`, every core) against lbm_cell over every
/// cell of the state it had; populations of type T (`storage`).
template <class T>
void check_lbm_rows_are_cells(const std::string& isa, const std::string& flow, const std::string& storage) {
  INFO("lbm, flow=" << flow << ", storage=" << storage << ", CUVIEW_HOST_ISA=" << isa);
  const int w = 131, h = 47;
  ::setenv("CUVIEW_HOST_ISA", isa.c_str(), 1);
  SimRun r("lbm", Backend::host, w, h, {{"flow", flow}, {"storage", storage}},
           {{"force", flow == "periodic" ? 2e-5 : 0.0}});
  ::unsetenv("CUVIEW_HOST_ISA");
  r.steps(200);
  const sim::lbm::Window g{w, 0, h, h};
  const auto o = sim::lbm::options_from({{"flow", flow}, {"storage", storage}});
  const auto p = sim::lbm::from(r.params, o);
  const std::size_t owned = g.owned_cells();
  std::vector<T> saved(owned * sim::lbm::kQ), next(owned * sim::lbm::kQ);
  std::vector<std::uint8_t> mask(owned), mask2(owned);
  r.sim->save_state({saved.data(), mask.data()});
  // The stored layout: every plane with a ghost row above and below the owned rows.
  std::vector<T> f(g.cells() * sim::lbm::kQ, T{}), fo(f.size(), T{});
  for (int i = 0; i < sim::lbm::kQ; ++i)
    std::memcpy(f.data() + i * g.cells() + w, saved.data() + i * owned, owned * sizeof(T));
  std::vector<std::uint8_t> solid(g.cells(), 1);
  std::memcpy(solid.data() + w, mask.data(), owned);
  const auto flags = sim::lbm::cell_flags(solid, g, o);
  for (int y = 1; y <= h; ++y)
    for (int x = 0; x < w; ++x) sim::lbm::lbm_cell(f.data(), fo.data(), flags.data(), x, y, w, g.cells(), p);
  r.steps(1);
  r.sim->save_state({next.data(), mask2.data()});
  std::size_t solid_cells = 0, differ = 0;
  for (auto m : mask) solid_cells += m != 0;
  for (int i = 0; i < sim::lbm::kQ; ++i)
    differ += std::memcmp(fo.data() + i * g.cells() + w, next.data() + i * owned, owned * sizeof(T)) != 0;
  INFO(solid_cells << " solid cells");
  CHECK(solid_cells > 2 * static_cast<std::size_t>(w));  // the walls and an obstacle
  CHECK(differ == 0);
}
}  // namespace

TEST_CASE("the host loops' vectorised rows compute what the per-cell updates compute, bit for bit",
          "[physics][host]") {
  // Gray–Scott: the state after one more step against grayscott_cell over every cell.
  {
    const std::uint32_t w = 97, h = 61;
    SimRun r("grayscott", Backend::host, w, h, {});
    r.steps(50);
    std::vector<float> u(w * h), v(w * h), u2(w * h), v2(w * h);
    r.sim->save_state({u.data(), v.data()});
    sim::GrayScottParams p;
    p.F = static_cast<float>(r.params.at("F")), p.k = static_cast<float>(r.params.at("k"));
    p.Du = static_cast<float>(r.params.at("Du")), p.Dv = static_cast<float>(r.params.at("Dv"));
    p.dt = static_cast<float>(r.params.at("dt"));
    for (int y = 0; y < static_cast<int>(h); ++y)
      for (int x = 0; x < static_cast<int>(w); ++x)
        sim::grayscott_cell(u.data(), v.data(), u2.data(), v2.data(), x, y, w, h, p);
    r.steps(1);
    std::vector<float> nu(w * h), nv(w * h);
    r.sim->save_state({nu.data(), nv.data()});
    CHECK(std::memcmp(nu.data(), u2.data(), nu.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(nv.data(), v2.data(), nv.size() * sizeof(float)) == 0);
  }
  // The flow, channel and periodic, in either storage: one more step of the simulation (its
  // vectorised rows, on every core, built for each instruction set this CPU has) against lbm_cell
  // over every cell of the state it had.
  const auto isas = sim::lbm::host_isas();
  REQUIRE(!isas.empty());
  for (const std::string& isa : isas)
    for (const std::string flow : {"channel", "periodic"}) {
      check_lbm_rows_are_cells<float>(isa, flow, "fp32");
      check_lbm_rows_are_cells<std::uint16_t>(isa, flow, "fp16s");
    }
  // An instruction set the loop is not built for is named, with the ones this CPU runs.
  ::setenv("CUVIEW_HOST_ISA", "neon", 1);
  CHECK_THROWS_WITH(SimRun("lbm", Backend::host, 64, 32, {}), Catch::Contains("CUVIEW_HOST_ISA=neon") &&
                                                               Catch::Contains("this CPU runs: " + isas.front()));
  ::unsetenv("CUVIEW_HOST_ISA");
}

namespace {
/// The rectangular-duct series (White, Viscous Fluid Flow, eq. 3-48) without its prefactor: the
/// shape of u_x at (y, z) from the axis of a square duct of half-side a.
double duct_shape(double y, double z, double a) {
  double u = 0;
  for (int k = 1; k < 60; k += 2) {
    const double kp = k * M_PI / (2 * a);
    const double ratio = std::exp(kp * (std::abs(z) - a)) * (1 + std::exp(-2 * kp * std::abs(z))) /
                         (1 + std::exp(-2 * kp * a));  // cosh(kp z) / cosh(kp a), without overflow
    u += ((k - 1) / 2 % 2 ? -1.0 : 1.0) / (k * k * k) * (1 - ratio) * std::cos(kp * y);
  }
  return u;
}

/// Means over the fluid cells of one cross-section of a channel (2-D: a column; 3-D: a y–z
/// plane): velocity along x, density, and mass flux ρ u_x.
struct Section {
  double u = 0, rho = 0, flux = 0;
};

/// A flow=channel run without an obstacle, `inflow` u_in, viscosity ν: a 2-D channel w × h
/// (d = 1) or a duct w × h × d, read after `steps` steps and 1000 more. Checks that
/// - the inlet's mean velocity (column x = 0) is u_in within 1 %;
/// - the profile at mid-length is the analytic one, within 1 % (normalised L2 error
///   √(Σ(u − u_a)² / Σ u_a²)), carrying the mass the inlet admits: mean u = u_in ρ_inlet / ρ_here;
/// - the pressure (ρ / 3) falls as the analytic solution says, within `gradient_tolerance`: a force
///   F per unit mass drives u_x = (F / ν) shape(y, z), so dρ/dx = −3 F ρ = −3 ν ρū / mean(shape);
/// - the outlet holds density 1, the inlet lies above it by the channel's drop, no cell leaves
///   [1 − 1e-3, 1.2] and the mass is what it was 1000 steps before: nothing piles up.
/// `shape(y, z)`: the analytic u_x ν / F of the force-driven flow (z = 0 in 2-D).
/// `storage`: lbm3d's storage option ("": the default). fp16s keeps ~3 digits of f − w: its
/// tolerances on the cross-flow and on mass are ten times fp32's.
void check_open_channel(Backend backend, const std::string& sim, int w, int h, int d, double nu, double u_in,
                        std::uint32_t steps, double gradient_tolerance, const std::function<double(int, int)>& shape,
                        const std::string& storage = "") {
  std::map<std::string, std::string> options{{"flow", "channel"}, {"obstacle", "none"}};
  if (!storage.empty()) options["storage"] = storage;
  const double loose = storage == "fp16s" ? 10 : 1;
  SimRun r(sim, backend, static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(h), options,
           {{"viscosity", nu}, {"inflow", u_in}}, static_cast<std::uint32_t>(d));
  const std::size_t cells = static_cast<std::size_t>(w) * h * d;
  const int components = d > 1 ? 3 : 2, z0 = d > 1 ? 1 : 0, z1 = d > 1 ? d - 1 : 1;  // fluid layers
  const double across = (h - 2.0) * (z1 - z0);
  r.steps(steps);
  const auto before = r.read(cells);
  r.steps(1000);
  const auto f = r.read(cells);
  auto at = [&](int x, int y, int z) { return (static_cast<std::size_t>(z) * h + y) * w + x; };
  auto section = [&](int x) {
    Section s;
    for (int z = z0; z < z1; ++z)
      for (int y = 1; y < h - 1; ++y) {
        const std::size_t c = at(x, y, z);
        const double u = f[0][components * c], rho = f[3][c];
        s.u += u / across, s.rho += rho / across, s.flux += u * rho / across;
      }
    return s;
  };
  const Section inlet = section(0), outlet = section(w - 1);
  INFO(sim << " " << w << "x" << h << "x" << d << " " << storage << ", inlet: mean u_x " << inlet.u << " against inflow " << u_in
           << ", mean density " << inlet.rho);
  CHECK(std::abs(inlet.u - u_in) / u_in < 0.01);  // stated tolerance: 1 %
  const int xs = w / 2;
  const Section mid = section(xs);
  const double u_mean = u_in * inlet.rho / mid.rho;
  double shape_mean = 0;
  for (int z = z0; z < z1; ++z)
    for (int y = 1; y < h - 1; ++y) shape_mean += shape(y, z) / across;
  double err2 = 0, ref2 = 0, cross = 0;
  for (int z = z0; z < z1; ++z)
    for (int y = 1; y < h - 1; ++y) {
      const std::size_t c = at(xs, y, z);
      const double analytic = u_mean * shape(y, z) / shape_mean, u = f[0][components * c];
      err2 += (u - analytic) * (u - analytic), ref2 += analytic * analytic;
      for (int k = 1; k < components; ++k) cross = std::max(cross, std::abs(double(f[0][components * c + k])));
    }
  const double err = std::sqrt(err2 / ref2);
  INFO("x = " << xs << ": relative L2 error of u_x against the analytic profile " << err << " (mean u_x " << mid.u
              << " against " << u_mean << "), largest cross-flow " << cross);
  CHECK(err < 0.01);  // stated tolerance: 1 %
  CHECK(cross < 1e-3 * u_in * loose);
  const int span = w / 5;
  const double gradient = (section(xs + span).rho - section(xs - span).rho) / (2 * span),
               expected = -3 * nu * mid.flux / shape_mean;
  const double mass_before = std::accumulate(before[3].begin(), before[3].end(), 0.0),
               mass = std::accumulate(f[3].begin(), f[3].end(), 0.0);  // solid cells at 1
  const auto [lowest, highest] = std::minmax_element(f[3].begin(), f[3].end());
  INFO("dρ/dx " << gradient << " against " << expected << "; outlet density " << outlet.rho << "; density in ["
                << *lowest << ", " << *highest << "]; mass " << mass_before << " → " << mass << " (relative change "
                << std::abs(mass - mass_before) / mass << ")");
  CHECK(std::abs(gradient - expected) / std::abs(expected) < gradient_tolerance);
  CHECK(std::abs(outlet.rho - 1) < 1e-3);
  // The inlet's pressure is the channel's drop, plus the entrance's (where the plug develops);
  // the cells beside the inlet's corners, where the plug meets the no-slip walls, peak above it.
  CHECK(inlet.rho - 1 < 1.25 * std::abs(expected) * w);
  CHECK(*highest < 1.2);
  CHECK(*lowest > 1 - 1e-3);
  CHECK(std::abs(mass - mass_before) / mass < 1e-5 * loose);
}
}  // namespace

BACKEND_TEST("lbm3d: a force-driven square duct settles on the analytic Poiseuille profile, conserving mass, in "
             "either storage",
             "[physics][lbm3d]") {
  // Fluid nodes 1..24 across y and z between half-way bounce-back walls: a = 12 (White, Viscous
  // Fluid Flow, eq. 3-48; u_max = 0.294685 a² F / ν for a square duct).
  const int w = 4, n = 26;
  const double nu = 0.1, a = (n - 2) / 2.0, u_max = 0.02, force = u_max * nu / (0.294685 * a * a);
  const std::size_t cells = static_cast<std::size_t>(w) * n * n;
  auto analytic = [&](double y, double z) {  // the series, coordinates from the duct's axis
    return 16 * a * a * force / (nu * M_PI * M_PI * M_PI) * duct_shape(y, z, a);
  };
  auto mass = [&](const std::vector<float>& rho) { return std::accumulate(rho.begin(), rho.end(), 0.0); };
  std::vector<float> fp32_ux;
  for (const std::string storage : {"fp32", "fp16s"}) {
    SimRun r("lbm3d", backend, w, n, {{"flow", "periodic"}, {"obstacle", "none"}, {"storage", storage}},
             {{"viscosity", nu}, {"force", force}}, n);
    const double mass0 = mass(r.read(cells)[3]);
    r.steps(16000);  // > 10 a²/ν
    const auto f = r.read(cells);
    double err2 = 0, ref2 = 0, cross = 0, diff2 = 0;
    for (int z = 1; z < n - 1; ++z)
      for (int y = 1; y < n - 1; ++y)
        for (int x = 0; x < w; ++x) {
          const std::size_t c = (static_cast<std::size_t>(z) * n + y) * w + x;
          const double u = analytic(y - (n - 1) / 2.0, z - (n - 1) / 2.0), ux = f[0][3 * c];
          err2 += (ux - u) * (ux - u);
          ref2 += u * u;
          cross = std::max({cross, std::abs(double(f[0][3 * c + 1])), std::abs(double(f[0][3 * c + 2]))});
          if (!fp32_ux.empty()) diff2 += (ux - fp32_ux[c]) * (ux - fp32_ux[c]);
        }
    if (fp32_ux.empty())
      for (std::size_t c = 0; c < cells; ++c) fp32_ux.push_back(f[0][3 * c]);
    const double err = std::sqrt(err2 / ref2), mass1 = mass(f[3]);
    INFO("storage=" << storage << ": L2 error of u_x against the series " << err << "; against fp32 "
                    << std::sqrt(diff2 / ref2) << "; largest |u_y|, |u_z| " << cross << "; mass " << mass0 << " -> "
                    << mass1);
    // Stated tolerances. fp32: 2 %, cross-flow 1e-6, mass 1e-5. fp16s keeps ~3 digits of f − w:
    // the profile within 2 % still, cross-flow below 1 % of u_max, mass within 1e-4.
    CHECK(err < 0.02);
    CHECK(cross < (storage == "fp32" ? 1e-6 : 1e-2 * u_max));
    CHECK(std::abs(mass1 - mass0) / mass0 < (storage == "fp32" ? 1e-5 : 1e-4));
  }
}

BACKEND_TEST("lbm: with flow=channel the inlet holds `inflow` and a developed channel is plane Poiseuille, in either "
             "storage",
             "[physics][lbm]") {
  // Fluid rows 1..20 between half-way bounce-back walls at y = 0.5 and 20.5 (width 20); the inlet
  // a wall moving at `inflow` half a cell before column 0, the outlet at density 1 in the last
  // column. Re = u 20 / ν = 3.6: developed within (0.6 + 0.056 Re) 20 ≈ 16 columns; 3000 steps
  // are ~5 viscous times 20² / ν. Plane Poiseuille: u_x = F / (2ν) (y − ½)(20.5 − y).
  const int h = 22;
  for (const std::string storage : {"fp32", "fp16s"})
    check_open_channel(backend, "lbm", 64, h, 1, 1.0 / 6.0, 0.03, 3000, 0.02,  // stated tolerance: 2 %
                       [&](int y, int) { return (y - 0.5) * (h - 1.5 - y) / 2; }, storage);
}

BACKEND_TEST("lbm3d: with flow=channel the inlet holds `inflow` and a developed square duct has the series profile, "
             "in either storage",
             "[physics][lbm3d]") {
  // Fluid cells 1..16 across y and z between half-way bounce-back walls (half-side a = 8); the
  // inlet a wall moving at `inflow` half a cell before x = 0, the outlet at density 1 at the last
  // x. Re = u 2a / ν = 2.9: developed within ~12 cells; 2000 steps are ~8 viscous times (2a)²/ν.
  // The series: u_x = 16 a² F / (ν π³) duct_shape.
  const int n = 18;
  const double a = (n - 2) / 2.0;
  for (const std::string storage : {"fp32", "fp16s"})
    check_open_channel(backend, "lbm3d", 40, n, n, 1.0 / 6.0, 0.03, 2000, 0.05,  // stated tolerance: 5 %
                       [&](int y, int z) {
                         return 16 * a * a / (M_PI * M_PI * M_PI) * duct_shape(y - (n - 1) / 2.0, z - (n - 1) / 2.0, a);
                       },
                       storage);
}

TEST_CASE("lbm3d: the flow past the sphere in FP16S stays within 1 % of the float32 flow", "[physics][lbm3d]") {
  // The default sphere (wake preset, Re = 16 here) in a 96×32×32 channel, 3 000 steps (the wake
  // has formed: ~2 flow-throughs of the sphere's 20 diameters): FP16S against float32, the
  // velocity field's normalised L2 difference (docs/physics.md "Storage" states it).
  const std::uint32_t w = 96, n = 32;
  const std::size_t cells = static_cast<std::size_t>(w) * n * n;
  std::vector<std::vector<float>> velocity;
  for (const std::string storage : {"fp32", "fp16s"}) {
    SimRun r("lbm3d", Backend::host, w, n, {{"storage", storage}}, {}, n);
    r.steps(3000);
    velocity.push_back(r.read(cells)[0]);
  }
  double diff2 = 0, ref2 = 0;
  for (std::size_t k = 0; k < velocity[0].size(); ++k) {
    diff2 += (velocity[1][k] - velocity[0][k]) * double(velocity[1][k] - velocity[0][k]);
    ref2 += velocity[0][k] * double(velocity[0][k]);
  }
  const double rel = std::sqrt(diff2 / ref2);
  INFO("FP16S against float32, the velocity's normalised L2 difference: " << rel);
  CHECK(rel > 0);     // they are two storages, not one
  CHECK(rel < 0.01);  // stated tolerance: 1 %
}

namespace {
/// One more step of the flow past the sphere with a drawn ball (host rows for `isa`, every core)
/// against cell_update over every cell of the state it had; populations of type T (`storage`).
template <class T>
void check_rows_are_cell_updates(const std::string& isa, const std::string& flow, const std::string& storage) {
  INFO("lbm3d, flow=" << flow << ", storage=" << storage << ", CUVIEW_HOST_ISA=" << isa);
  const int w = 45, h = 22, d = 21;
  ::setenv("CUVIEW_HOST_ISA", isa.c_str(), 1);
  SimRun r("lbm3d", Backend::host, w, h, {{"flow", flow}, {"storage", storage}},
           {{"force", flow == "periodic" ? 2e-5 : 0.0}}, d);
  ::unsetenv("CUVIEW_HOST_ISA");
  r.sim->draw({"obstacles", 30, 8, 3, 1, 12});
  r.steps(60);
  const sim::lbm3d::Window g{w, h, 0, d, d};
  const auto o = sim::lbm3d::options_from({{"flow", flow}, {"storage", storage}});
  const auto p = sim::lbm3d::from(r.params, o);
  const std::size_t owned = g.owned_cells(), first = g.layer_cells();
  std::vector<T> saved(owned * sim::lbm3d::kQ), next(saved.size());
  std::vector<std::uint8_t> mask(owned), mask2(owned);
  r.sim->save_state({saved.data(), mask.data()});
  std::vector<T> f(g.cells() * sim::lbm3d::kQ, T{}), fo(f.size(), T{});
  for (int i = 0; i < sim::lbm3d::kQ; ++i)
    std::memcpy(f.data() + i * g.cells() + first, saved.data() + i * owned, owned * sizeof(T));
  std::vector<std::uint8_t> solid(g.cells(), 1), flags(g.cells());
  std::memcpy(solid.data() + first, mask.data(), owned);
  sim::lbm3d::compute_flags(solid.data(), flags.data(), g, o, 0, g.stored_layers());
  for (int lz = 1; lz <= d; ++lz)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) sim::lbm3d::cell_update(f.data(), fo.data(), flags.data(), x, y, lz, g, g.cells(), p);
  r.steps(1);
  r.sim->save_state({next.data(), mask2.data()});
  std::size_t solid_cells = 0, differ = 0;
  for (auto m : mask) solid_cells += m != 0;
  for (int i = 0; i < sim::lbm3d::kQ; ++i)
    differ += std::memcmp(fo.data() + i * g.cells() + first, next.data() + i * owned, owned * sizeof(T)) != 0;
  INFO(solid_cells << " solid cells");
  const std::size_t walls = 2 * w * (h + d) - 4 * w;
  CHECK(solid_cells > walls + 100);  // the walls, the sphere and the ball
  CHECK(differ == 0);
}
}  // namespace

TEST_CASE("lbm3d: the host's vectorised rows are cell_update over every cell, on every instruction set, in either "
          "storage",
          "[physics][lbm3d]") {
  for (const std::string& isa : sim::lbm::host_isas())
    for (const std::string flow : {"channel", "periodic"}) {
      check_rows_are_cell_updates<float>(isa, flow, "fp32");
      check_rows_are_cell_updates<std::uint16_t>(isa, flow, "fp16s");
    }
}

TEST_CASE("lbm3d: FP16S stores f − w as binary16 of (f − w)·2^15, rounded to nearest even, subnormals kept",
          "[physics][lbm3d]") {
  using sim::decode;
  using sim::encode;
  const float unit = 1.0f / 32768.0f;  // (f − w) of 1 in binary16
  CHECK(encode<std::uint16_t>(unit) == 0x3c00);
  CHECK(decode(std::uint16_t{0x3c00}) == unit);
  CHECK(encode<std::uint16_t>(-2 * unit) == 0xc000);
  CHECK(encode<std::uint16_t>(0.0f) == 0);
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to the even one, 1.
  CHECK(encode<std::uint16_t>(unit * (1.0f + 1.0f / 2048)) == 0x3c00);
  CHECK(encode<std::uint16_t>(unit * (1.0f + 3.0f / 2048)) == 0x3c02);
  // The smallest subnormal binary16 (2^-24) and half of it, which rounds to even (0).
  CHECK(encode<std::uint16_t>(unit * 0x1p-24f) == 0x0001);
  CHECK(encode<std::uint16_t>(unit * 0x1p-25f) == 0x0000);
  CHECK(decode(std::uint16_t{0x0001}) == unit * 0x1p-24f);
  CHECK(encode<std::uint16_t>(unit * 65504.0f) == 0x7bff);  // the largest finite
  CHECK(encode<std::uint16_t>(unit * 65520.0f) == 0x7c00);  // rounds to infinity
  // Every binary16 value comes back as itself.
  std::size_t wrong = 0;
  for (std::uint32_t h = 0; h < 0x10000; ++h)
    if ((h & 0x7c00) != 0x7c00 && encode<std::uint16_t>(decode(static_cast<std::uint16_t>(h))) != h) ++wrong;
  CHECK(wrong == 0);
}

TEST_CASE("lbm3d: a run steered with balls gives the same bits on any number of threads", "[physics][lbm3d]") {
  auto run = [](const char* threads) {
    ::setenv("CUVIEW_HOST_THREADS", threads, 1);
    SimRun r("lbm3d", Backend::host, 64, 24, {}, {}, 31);
    ::unsetenv("CUVIEW_HOST_THREADS");
    r.steps(120);
    r.sim->draw({"obstacles", 40, 12.5, 4, 1, 15.5});
    r.sim->draw({"obstacles", 50, 10, 3, 1, 20});
    r.sim->draw({"obstacles", 41, 12, 2, 0, 16});
    r.steps(60);
    const sim::lbm3d::Window g{64, 24, 0, 31, 31};
    std::vector<float> f(g.owned_cells() * sim::lbm3d::kQ);
    std::vector<std::uint8_t> mask(g.owned_cells());
    r.sim->save_state({f.data(), mask.data()});
    return f;
  };
  const auto one = run("1"), two = run("2"), again = run("2");
  CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(two.data(), again.data(), two.size() * sizeof(float)) == 0);
}

// The README's two flows over a long run (scripts/flow-check.sh runs it; hidden from the suite:
// minutes on a CPU). Prints, every tenth of the run, the inlet's mean velocity against `inflow` and
// the mean and extreme densities. CUVIEW_FLOW_CHECK_STEPS (default 30000), _BACKEND (cuda, host;
// default cuda where usable) and _SIMS (default "lbm,lbm3d").
TEST_CASE("the README's flows hold their inlet over a long run", "[.flow-check]") {
  auto env = [](const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : fallback;
  };
  const auto steps = static_cast<std::uint32_t>(std::stoul(env("CUVIEW_FLOW_CHECK_STEPS", "30000")));
  const std::string sims = env("CUVIEW_FLOW_CHECK_SIMS", "lbm,lbm3d");
  const Backend backend = env("CUVIEW_FLOW_CHECK_BACKEND", cuda_usable() ? "cuda" : "host") == "cuda"
                              ? Backend::cuda
                              : Backend::host;
  require_backend(backend);
  struct Flow {
    std::string sim;
    std::uint32_t w, h, d;
  };
  for (const Flow& flow : {Flow{"lbm", 1600, 400, 1}, Flow{"lbm3d", 192, 64, 64}}) {
    if (("," + sims + ",").find("," + flow.sim + ",") == std::string::npos) continue;
    SimRun r(flow.sim, backend, flow.w, flow.h, {}, {}, flow.d);
    const double inflow = r.params.at("inflow"), nu = r.params.at("viscosity");
    const int components = flow.d > 1 ? 3 : 2;
    const std::size_t cells = static_cast<std::size_t>(flow.w) * flow.h * flow.d;
    const double diameter = 2 * std::max(2.0, std::min(flow.h, flow.d > 1 ? flow.d : flow.h) / 10.0);
    std::printf("%s %ux%ux%u on %s: inflow %g, viscosity %g, obstacle diameter %g cells, Re = %.0f\n",
                flow.sim.c_str(), flow.w, flow.h, flow.d, backend == Backend::cuda ? "cuda" : "host", inflow, nu,
                diameter, inflow * diameter / nu);
    double inlet = 0;
    for (std::uint32_t done = 0; done < steps;) {
      const std::uint32_t n = std::min(steps - done, std::max<std::uint32_t>(1, steps / 10));
      r.steps(n), done += n;
      const auto f = r.read(cells);
      double u = 0, mass = 0, lowest = 2, highest = 0;
      std::size_t inlet_cells = 0, fluid = 0;
      for (std::size_t c = 0; c < cells; ++c) {
        const double rho = f[3][c], speed = f[1][c];
        const bool solid = rho == 1.0 && speed == 0.0;  // solid cells publish exactly 1 and 0
        if (solid) continue;
        ++fluid, mass += rho, lowest = std::min(lowest, rho), highest = std::max(highest, rho);
        if (c % flow.w == 0) u += f[0][components * c], ++inlet_cells;
      }
      inlet = u / static_cast<double>(inlet_cells);
      std::printf("  step %6u: inlet mean u_x %.6f against inflow %g (%+.3f %%), mean density %.6f, density in "
                  "[%.4f, %.4f]\n",
                  done, inlet, inflow, 100 * (inlet - inflow) / inflow, mass / static_cast<double>(fluid), lowest,
                  highest);
      std::fflush(stdout);
    }
    INFO(flow.sim << ": inlet mean u_x " << inlet << " against inflow " << inflow);
    CHECK(std::abs(inlet - inflow) / inflow < 0.01);  // stated tolerance: 1 %
  }
}
