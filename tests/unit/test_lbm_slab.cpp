// The lattice-Boltzmann flow split into y slabs (sims/slab.hpp) computes the same bits as the
// whole grid: N parts, each on its own thread with an in-process halo standing in for the ranks,
// against one whole-grid run of the same size, through reset, steps, strokes across the slab
// borders, a parameter change and a restore of each part's checkpoint slice; and a frame written
// in the flows' own last step (2-D and 3-D) holds the separate pass's bits. Tagged [gpu] runs need
// a GPU; the `unit` CTest runs the host ones.
#include <algorithm>
#include <barrier>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "backend_test.hpp"
#include "cuview/error.hpp"
#include "executor/executor.hpp"
#include "publisher/parameter_set.hpp"
#include "sims/simulation.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
#endif

using namespace cuview;
using namespace cuview::test;

namespace {

constexpr std::uint32_t kW = 96, kH = 61;  // odd: the slabs of 2 and 3 parts differ in size

/// What the parts post for their neighbours in one exchange.
struct Post {
  const void* to_up = nullptr;
  const void* to_down = nullptr;
};

/// The ranks' halo, in process: every part posts its sends, waits for all, copies its neighbours'
/// posts into its receive buffers, and waits again (so that nobody reuses a buffer still read).
class FakeHalo final : public sim::Halo {
 public:
  FakeHalo(std::barrier<>& sync, std::vector<Post>& posts, int k) : sync_(sync), posts_(posts), k_(k) {}
  void exchange(const void* to_up, void* from_up, const void* to_down, void* from_down, std::size_t bytes, bool device,
                cuda::StreamRef stream) override {
#ifdef CUVIEW_HAVE_CUDA
    if (device) cuda::check(cudaStreamSynchronize(stream.get()), "fake halo: waiting for the rows to send");
#else
    if (device) throw Error(Errc::unsupported, "fake halo: device rows in a build without CUDA");
#endif
    posts_[k_] = {to_up, to_down};
    sync_.arrive_and_wait();
    if (has_up()) copy(from_up, posts_[k_ - 1].to_down, bytes, device, stream);
    if (has_down()) copy(from_down, posts_[k_ + 1].to_up, bytes, device, stream);
    sync_.arrive_and_wait();
  }
  [[nodiscard]] bool has_up() const override { return k_ > 0; }
  [[nodiscard]] bool has_down() const override { return k_ + 1 < static_cast<int>(posts_.size()); }

 private:
  static void copy(void* to, const void* from, std::size_t bytes, bool device, cuda::StreamRef stream) {
#ifdef CUVIEW_HAVE_CUDA
    if (device) {  // one GPU: the parts' buffers are all its memory
      cuda::check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream.get()), "fake halo: copying");
      cuda::check(cudaStreamSynchronize(stream.get()), "fake halo: waiting for the copy");
      return;
    }
#else
    (void)device, (void)stream;
#endif
    std::memcpy(to, from, bytes);
  }
  std::barrier<>& sync_;
  std::vector<Post>& posts_;
  int k_;
};

/// One simulation made as cuview-compute makes it ("lbm" from builtin_simulations()), with its
/// own executor; `slab` null for the whole grid.
struct SimRun {
  std::unique_ptr<Executor> executor;
  std::unique_ptr<sim::Simulation> sim;
  std::uint32_t rows, depth;

  /// `name`: "lbm" (of a slab: its rows), or "lbm3d" of `layers` layers (of a slab: its layers).
  SimRun(Backend backend, const std::map<std::string, std::string>& options, const sim::Slab* slab,
         const std::string& name = "lbm", std::uint32_t layers = 1)
      : executor(make_executor(backend == Backend::cuda ? "cuda" : "host")),
        rows(slab && name == "lbm" ? slab->rows : kH),
        depth(slab && name == "lbm3d" ? slab->rows : layers) {
    for (const auto& f : sim::builtin_simulations())
      if (f.name == name) {
        sim::SimulationConfig config{kW, rows, options};
        config.slab = slab;
        config.depth = depth;
        sim = f.make(*executor, config);
      }
    REQUIRE(sim);
  }
  [[nodiscard]] std::size_t cells() const { return std::size_t{kW} * rows * depth; }
  /// save_state(): the populations and the obstacles, as bytes.
  std::vector<std::vector<std::uint8_t>> save() {
    std::vector<std::vector<std::uint8_t>> out;
    std::vector<void*> ptrs;
    for (const auto& s : sim->state()) out.emplace_back(s.bytes());
    for (auto& o : out) ptrs.push_back(o.data());
    sim->save_state(ptrs);
    executor->finish();
    return out;
  }
  /// write_fields(): velocity, speed, vorticity, density of the owned rows.
  std::vector<std::vector<float>> fields() {
    return written([&](const std::vector<FieldTarget>& t) { sim->write_fields(t); }, ~0u);
  }
  /// step_and_write(n): the fields a frame written in the last of `n` steps holds, those whose bit
  /// is in `reads` read (the others come back as NaN: nothing that reads them).
  std::vector<std::vector<float>> step_and_fields(std::uint32_t n, unsigned reads) {
    return written([&](const std::vector<FieldTarget>& t) { sim->step_and_write(n, t); }, reads);
  }
  std::vector<std::vector<float>> written(const std::function<void(const std::vector<FieldTarget>&)>& write,
                                          unsigned reads) {
    std::vector<std::vector<float>> out;
    for (const auto& f : sim->fields()) out.emplace_back(cells() * f.components, std::nanf(""));
    std::vector<FieldTarget> targets;
#ifdef CUVIEW_HAVE_CUDA
    std::vector<cuda::DeviceBuffer> device;
    if (executor->kind() == Executor::Kind::cuda) {
      for (std::size_t i = 0; i < out.size(); ++i) {
        device.emplace_back(out[i].size() * sizeof(float));
        targets.push_back({device.back().get(), out[i].size() * sizeof(float), ((reads >> i) & 1u) != 0});
      }
      write(targets);
      executor->finish();
      for (std::size_t i = 0; i < out.size(); ++i)
        if ((reads >> i) & 1u)
          cuda::check(cudaMemcpy(out[i].data(), device[i].get(), out[i].size() * sizeof(float), cudaMemcpyDeviceToHost),
                      "reading a field back");
      return out;
    }
#endif
    for (std::size_t i = 0; i < out.size(); ++i)
      targets.push_back({out[i].data(), out[i].size() * sizeof(float), ((reads >> i) & 1u) != 0});
    write(targets);
    for (std::size_t i = 0; i < out.size(); ++i)
      if (!((reads >> i) & 1u)) std::fill(out[i].begin(), out[i].end(), std::nanf(""));
    return out;
  }
};

/// N parts of the grid, each with its halo; collective calls run on one thread per part.
struct Parts {
  std::barrier<> sync;
  std::vector<Post> posts;
  std::vector<sim::Slab> slabs;
  std::vector<std::unique_ptr<FakeHalo>> halos;
  std::vector<std::unique_ptr<SimRun>> runs;

  /// `name`: "lbm", split into slabs of rows, or "lbm3d" of `layers` layers, split into slabs of layers.
  Parts(Backend backend, const std::map<std::string, std::string>& options, int n, const std::string& name = "lbm",
        std::uint32_t layers = kH)
      : sync(n), posts(static_cast<std::size_t>(n)) {
    for (int k = 0; k < n; ++k) {
      const auto r = sim::slab_rows(layers, static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(n));
      halos.push_back(std::make_unique<FakeHalo>(sync, posts, k));
      slabs.push_back({r.first, r.count, layers, halos.back().get()});
    }
    for (int k = 0; k < n; ++k) runs.push_back(std::make_unique<SimRun>(backend, options, &slabs[k], name));
  }
  /// Runs `fn` on every part at once, each on its own thread (the halo is a collective). Catch's
  /// assertions are not thread-safe: `fn` only drives the simulation, and a failure ends the test
  /// program with its message (the other parts would wait at the barrier forever).
  void all(const std::function<void(std::size_t k, SimRun&)>& fn) {
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k < runs.size(); ++k)
      threads.emplace_back([&fn, k, &r = *runs[k]] {
        try {
          fn(k, r);
          r.executor->finish();
        } catch (const std::exception& e) {
          std::fprintf(stderr, "a part of the decomposed lbm run failed: %s\n", e.what());
          std::abort();
        }
      });
    for (auto& t : threads) t.join();
  }
};

/// The defaults, with `overrides`, as the publisher would set them.
std::map<std::string, double> params_of(const sim::Simulation& s, const std::map<std::string, double>& overrides) {
  ParameterSet ps(with_publisher_params(s.params()), s.presets());
  auto values = ps.values();
  for (const auto& [k, v] : overrides) values[k] = v;
  return values;
}

/// Every part's checkpoint slice and published rows are byte-equal to the whole run's rows.
void require_equal(SimRun& whole, Parts& parts, const char* when) {
  INFO("after " << when);
  const auto state = whole.save();
  const auto fields = whole.fields();
  const std::size_t plane = std::size_t{kW} * kH;
  for (std::size_t k = 0; k < parts.runs.size(); ++k) {
    auto& part = *parts.runs[k];
    const std::size_t first = std::size_t{parts.slabs[k].first_row} * kW, cells = part.cells();
    INFO("part " << k << " of " << parts.runs.size() << ": rows " << parts.slabs[k].first_row << " + "
                 << parts.slabs[k].rows);
    const auto s = part.save();
    REQUIRE(s.size() == 2);
    REQUIRE(s[0].size() == 9 * cells * sizeof(float));
    REQUIRE(s[1].size() == cells);
    for (std::size_t i = 0; i < 9; ++i) {
      INFO("population plane " << i);
      CHECK(std::memcmp(s[0].data() + i * cells * sizeof(float), state[0].data() + (i * plane + first) * sizeof(float),
                        cells * sizeof(float)) == 0);
    }
    CHECK(std::memcmp(s[1].data(), state[1].data() + first, cells) == 0);
    const auto f = part.fields();
    REQUIRE(f.size() == fields.size());
    for (std::size_t i = 0; i < f.size(); ++i) {
      const std::size_t components = f[i].size() / cells;
      INFO("field " << i);
      CHECK(std::memcmp(f[i].data(), fields[i].data() + first * components, f[i].size() * sizeof(float)) == 0);
    }
  }
}

/// Strokes on every slab border (drawing, then erasing part of it), one at the left edge (the
/// outflow and wrap columns) and one erasing part of the cylinder: every part is given each.
std::vector<Stroke> strokes_across(int n) {
  std::vector<Stroke> out;
  for (int k = 1; k < n; ++k) {
    const double border = sim::slab_rows(kH, static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(n)).first;
    out.push_back({"obstacles", kW / 2.0, border, 4.5, 1});
    out.push_back({"obstacles", kW / 2.0 + 2, border + 0.5, 2, 0});
    out.push_back({"obstacles", 1.0, border - 0.5, 3, 1});
  }
  out.push_back({"obstacles", kW / 5.0, kH / 2.0, 2.5, 0});
  out.push_back({"obstacles", kW - 1.5, 3.0, 3, 1});  // over the wall at row 0, which stays
  return out;
}

void compare_decomposed(Backend backend, const std::map<std::string, std::string>& options, int n) {
  INFO(n << " parts");
  SimRun whole(backend, options, nullptr);
  Parts parts(backend, options, n);
  auto params = params_of(*whole.sim, {{"force", options.at("flow") == "periodic" ? 2e-5 : 0.0}});
  whole.sim->set_params(params);
  for (auto& r : parts.runs) r->sim->set_params(params);
  whole.sim->reset(1);
  parts.all([](std::size_t, SimRun& r) { r.sim->reset(1); });
  require_equal(whole, parts, "reset");

  whole.sim->step(150);
  parts.all([](std::size_t, SimRun& r) { r.sim->step(150); });
  whole.executor->finish();
  require_equal(whole, parts, "150 steps");

  for (const auto& s : strokes_across(n)) {
    whole.sim->draw(s);
    for (auto& r : parts.runs) r->sim->draw(s);  // not a collective
  }
  whole.sim->step(50);
  parts.all([](std::size_t, SimRun& r) { r.sim->step(50); });
  whole.executor->finish();
  require_equal(whole, parts, "strokes across the borders and 50 steps");

  params = params_of(*whole.sim, {{"viscosity", 0.05}, {"inflow", 0.06}, {"force", 1e-5}});
  whole.sim->set_params(params);
  for (auto& r : parts.runs) r->sim->set_params(params);
  whole.sim->step(50);
  parts.all([](std::size_t, SimRun& r) { r.sim->step(50); });
  whole.executor->finish();
  require_equal(whole, parts, "new parameters and 50 steps");

  // Each part's checkpoint slice into fresh parts: the ghost rows (mask and populations) come
  // from the neighbours' slices.
  std::vector<std::vector<std::vector<std::uint8_t>>> saved;
  for (auto& r : parts.runs) saved.push_back(r->save());
  Parts restored(backend, options, n);
  for (std::size_t k = 0; k < restored.runs.size(); ++k) restored.runs[k]->sim->set_params(params);
  restored.all([&](std::size_t k, SimRun& r) { r.sim->load_state({saved[k][0].data(), saved[k][1].data()}); });
  require_equal(whole, restored, "a restore of every part's slice");
  whole.sim->step(50);
  restored.all([](std::size_t, SimRun& r) { r.sim->step(50); });
  whole.executor->finish();
  require_equal(whole, restored, "a restore and 50 steps");
}

/// The fields read (bits of `reads`) of two frames of the same grid are the same bits.
void require_same_fields(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b,
                         unsigned reads) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!((reads >> i) & 1u)) continue;
    INFO("field " << i);
    REQUIRE(a[i].size() == b[i].size());
    CHECK(std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) == 0);
  }
}

}  // namespace

BACKEND_TEST("lbm: a grid split into slabs computes the whole grid's bits", "[lbm][slab]") {
  for (const char* flow : {"channel", "periodic"})
    for (const char* obstacle : {"cylinder", "none"})
      for (int n : {1, 2, 3}) {
        std::map<std::string, std::string> options{{"flow", flow}, {"obstacle", obstacle}};
        if (backend == Backend::cuda && n == 3 && std::string(obstacle) == "none") options["overlap"] = "off";
        INFO("flow=" << flow << " obstacle=" << obstacle << (options.count("overlap") ? " overlap=off" : ""));
        compare_decomposed(backend, options, n);
      }
}

// Frames written in the step (issue 38): the flows write a frame's fields in their last step
// before it, from the moments the collision holds, and Gray–Scott its u and v; the bits are the
// separate pass's, for every set of fields read, and the state goes on as a plain step leaves it.
BACKEND_TEST("a frame written in the last step holds the separate pass's bits: lbm, lbm3d, grayscott, grayscott3d",
             "[lbm][slab]") {
  const std::vector<unsigned> flow_reads{0xFu, 0x4u, 0x2u, 0x9u, 0x8u}, uv_reads{0x3u, 0x1u, 0x2u};
  for (const std::string name : {"lbm", "lbm3d", "grayscott", "grayscott3d"})
    for (unsigned reads : name.starts_with("lbm") ? flow_reads : uv_reads) {
      INFO(name << ", fields read (bits, in the order of fields()): " << reads);
      const std::uint32_t depth = name.ends_with("3d") ? 12 : 1;
      std::map<std::string, std::string> options;
      if (name == "lbm") options["obstacle"] = "cylinder";
      SimRun plain(backend, options, nullptr, name, depth), fused(backend, options, nullptr, name, depth);
      const auto params = params_of(*plain.sim, {});
      for (SimRun* r : {&plain, &fused}) {
        r->sim->set_params(params);
        r->sim->reset(1);
        r->sim->step(40);
      }
      for (std::uint32_t n : {1u, 3u, 8u}) {  // Gray–Scott: one-step launches, then fused ones
        plain.sim->step(n);
        const auto separate = plain.fields();
        const auto in_step = fused.step_and_fields(n, reads);
        require_same_fields(separate, in_step, reads);
      }
      // The step that wrote the frame left the populations as a plain step does.
      plain.sim->step(5);
      fused.sim->step(5);
      const auto a = plain.save(), b = fused.save();
      CHECK(a == b);
    }
}

BACKEND_TEST("a frame written in the last step of every part holds the whole grid's bits: lbm, lbm3d", "[lbm][slab]") {
  // lbm3d: 3 parts of a 20-layer grid (7, 7 and 6 layers); each part's vorticity beside a border
  // takes its neighbour's velocities from the halo.
  for (const std::string name : {"lbm", "lbm3d"})
    for (unsigned reads : {0xFu, 0x4u}) {
      INFO(name << ", fields read (bits: velocity, speed, vorticity, density): " << reads);
      const bool flow3d = name == "lbm3d";
      const std::uint32_t layers = flow3d ? 20 : 1;
      std::map<std::string, std::string> options;
      if (!flow3d) options["obstacle"] = "cylinder";
      SimRun whole(backend, options, nullptr, name, layers);
      Parts parts(backend, options, flow3d ? 3 : 2, name, flow3d ? layers : kH);
      const auto params = params_of(*whole.sim, {});
      whole.sim->set_params(params);
      for (auto& r : parts.runs) r->sim->set_params(params);
      whole.sim->reset(1);
      parts.all([](std::size_t, SimRun& r) { r.sim->reset(1); });
      whole.sim->step(42);
      const auto fields = whole.fields();
      std::vector<std::vector<std::vector<float>>> written(parts.runs.size());
      parts.all([&](std::size_t k, SimRun& r) {
        r.sim->step(40);
        written[k] = r.step_and_fields(2, reads);
      });
      for (std::size_t k = 0; k < parts.runs.size(); ++k) {
        INFO("part " << k);
        // The part's first cell in the whole grid: of its first row (lbm) or layer (lbm3d).
        const std::size_t first = std::size_t{parts.slabs[k].first_row} * kW * (flow3d ? kH : 1);
        for (std::size_t i = 0; i < fields.size(); ++i) {
          if (!((reads >> i) & 1u)) continue;
          INFO("field " << i);
          const std::size_t components = fields[i].size() / whole.cells();
          CHECK(std::memcmp(written[k][i].data(), fields[i].data() + first * components,
                            written[k][i].size() * sizeof(float)) == 0);
        }
      }
    }
}

TEST_CASE("lbm: overlap=on|off is an option, and a part whose height is not its rows is refused", "[lbm][slab]") {
  auto executor = make_executor("host");
  const auto& lbm = *std::find_if(sim::builtin_simulations().begin(), sim::builtin_simulations().end(),
                                  [](const auto& f) { return f.name == "lbm"; });
  CHECK(lbm.make(*executor, {kW, kH, {{"overlap", "off"}}}));
  CHECK_THROWS_WITH(lbm.make(*executor, {kW, kH, {{"overlap", "maybe"}}}), Catch::Contains("overlap=on|off"));
  const sim::Slab slab{10, 20, kH, nullptr};
  sim::SimulationConfig config{kW, 21, {}};
  config.slab = &slab;
  CHECK_THROWS_WITH(lbm.make(*executor, config),
                    Catch::Contains("made with height 21; a part's height must be its rows"));
  const sim::Slab beyond{50, 20, kH, nullptr};
  config = {kW, 20, {}};
  config.slab = &beyond;
  CHECK_THROWS_WITH(lbm.make(*executor, config), Catch::Contains("rows [50, 70) of a 61-row grid"));
}
