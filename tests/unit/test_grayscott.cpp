// The Gray–Scott simulation computes what the equations say, and its parameters are guarded.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "cuview/error.hpp"
#include "publisher/parameter_set.hpp"
#include "sims/grayscott/grayscott.hpp"
#include "sims/grayscott/grayscott_setup.hpp"

using namespace cuview;
using namespace cuview::sim;
using grayscott::initial_state;

namespace {
/// Gray–Scott's parameters as the daemon keeps them.
ParameterSet grayscott_parameters() {
  return ParameterSet(with_publisher_params(grayscott::params()), grayscott::presets());
}
}  // namespace

namespace {
/// An independent double-precision implementation, written from the equations.
void reference_step(std::vector<double>& u, std::vector<double>& v, int w, int h, const GrayScottParams& p) {
  std::vector<double> un(u.size()), vn(v.size());
  auto at = [&](const std::vector<double>& f, int x, int y) { return f[((y + h) % h) * w + (x + w) % w]; };
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const double uc = at(u, x, y), vc = at(v, x, y);
      const double lu = at(u, x - 1, y) + at(u, x + 1, y) + at(u, x, y - 1) + at(u, x, y + 1) - 4 * uc;
      const double lv = at(v, x - 1, y) + at(v, x + 1, y) + at(v, x, y - 1) + at(v, x, y + 1) - 4 * vc;
      const double r = uc * vc * vc;
      un[y * w + x] = uc + double(p.dt) * (double(p.Du) * lu - r + double(p.F) * (1 - uc));
      vn[y * w + x] = vc + double(p.dt) * (double(p.Dv) * lv + r - (double(p.F) + double(p.k)) * vc);
    }
  }
  u.swap(un);
  v.swap(vn);
}

void float_steps(std::vector<float>& u, std::vector<float>& v, int w, int h, const GrayScottParams& p, int n) {
  std::vector<float> u2(u.size()), v2(v.size());
  for (int s = 0; s < n; ++s) {
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) grayscott_cell(u.data(), v.data(), u2.data(), v2.data(), x, y, w, h, p);
    u.swap(u2);
    v.swap(v2);
  }
}
}  // namespace

TEST_CASE("the per-cell update matches a double-precision reference over 300 steps", "[sim]") {
  const int w = 40, h = 24;  // not square, so that x and y mix-ups show
  std::vector<float> u(w * h), v(w * h);
  initial_state(w, h, 7, u.data(), v.data());
  std::vector<double> ru(u.begin(), u.end()), rv(v.begin(), v.end());
  GrayScottParams p;
  float_steps(u, v, w, h, p, 300);
  for (int s = 0; s < 300; ++s) reference_step(ru, rv, w, h, p);
  double worst = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    worst = std::max(worst, std::abs(u[i] - ru[i]));
    worst = std::max(worst, std::abs(v[i] - rv[i]));
  }
  INFO("largest difference from the double reference: " << worst);
  CHECK(worst < 1e-4);
  // and the state actually evolved: the seeds reacted
  double change = 0;
  std::vector<float> u0(w * h), v0(w * h);
  initial_state(w, h, 7, u0.data(), v0.data());
  for (std::size_t i = 0; i < u.size(); ++i) change += std::abs(v[i] - v0[i]);
  CHECK(change > 1.0);
}

TEST_CASE("boundaries are periodic: a spike at a corner spreads to the opposite edges", "[sim]") {
  const int w = 8, h = 6;
  std::vector<float> u(w * h, 1.0f), v(w * h, 0.0f);
  v[0] = 1.0f;
  GrayScottParams p;
  float_steps(u, v, w, h, p, 1);
  CHECK(v[w - 1] > 0.0f);           // left neighbour wraps to the right edge
  CHECK(v[(h - 1) * w] > 0.0f);     // upper neighbour wraps to the bottom edge
  CHECK(v[w - 1] == Approx(v[1]));  // and symmetrically
  CHECK(v[(h - 1) * w] == Approx(v[w]));
  CHECK(v[3 * w + 4] == 0.0f);  // far cells untouched after one step
}

TEST_CASE("the initial state depends only on the seed", "[sim]") {
  std::vector<float> a(64 * 64), b(64 * 64), c(64 * 64), d(64 * 64), e(64 * 64), f(64 * 64);
  initial_state(64, 64, 1, a.data(), b.data());
  initial_state(64, 64, 1, c.data(), d.data());
  initial_state(64, 64, 2, e.data(), f.data());
  CHECK(a == c);
  CHECK(b == d);
  CHECK(b != f);
}

TEST_CASE("parameters outside their range are refused and nothing changes", "[sim][bad-input]") {
  auto p = grayscott_parameters();
  const auto before = p.values();
  try {
    (void)p.apply(std::nullopt, {{"k", 0.05}, {"F", 0.5}});
    FAIL("accepted F=0.5");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::out_of_range);
    CHECK_THAT(e.what(), Catch::Contains("F=0.5") && Catch::Contains("[0, 0.1]"));
  }
  CHECK(p.values() == before);
  CHECK_THROWS_WITH(p.apply(std::nullopt, {{"gravity", 1}}), Catch::Contains("unknown parameter 'gravity'"));
  CHECK_THROWS_WITH(p.apply(std::string("nope"), {}), Catch::Contains("unknown preset 'nope'"));
  CHECK_THROWS_WITH(p.apply(std::nullopt, {{"steps_per_frame", 2.5}}), Catch::Contains("whole number"));
  CHECK_THROWS_WITH(p.apply(std::nullopt, {{"dt", std::nan("")}}), Catch::Contains("out of range"));
}

TEST_CASE("a preset sets its values and explicit values override it", "[sim]") {
  const auto p = grayscott_parameters().apply(std::string("maze"), {{"k", 0.058}});
  CHECK(p.at("F") == 0.029);
  CHECK(p.at("k") == 0.058);
}

TEST_CASE("the stability bound holds for every allowed parameter combination", "[sim]") {
  // forward Euler with the 5-point Laplacian needs 4·D·dt ≤ 1
  double max_d = 0, max_dt = 0;
  for (const auto& s : grayscott::params()) {
    if (s.name == "Du" || s.name == "Dv") max_d = std::max(max_d, s.max);
    if (s.name == "dt") max_dt = s.max;
  }
  CHECK(4 * max_d * max_dt <= 1.0 + 1e-12);
}
