// What the backends compute: host frames free of subnormal values, the CUDA backend agreeing with
// the host backend, and every steps-per-launch setting giving the same bits.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend_test.hpp"
#include "cuview/client.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;

TEST_CASE("host frames hold no subnormal values, which would slow the CPU several times", "[integration][host]") {
  // Regression: a fresh field diffuses ever tinier v into its zero background; without
  // flush-to-zero the host backend spent most of its time on subnormal arithmetic.
  RuntimeDir rt;
  auto daemon = start_daemon("t", Backend::host, {"--paused"});
  REQUIRE(ctl("t", {"step", "400"}).code == 0);
  (void)wait_stats("t", [](const StatsView& s) { return s.step == 400; });
  auto c = Client::attach(AttachOptions{.name = "t", .client = "subnormal check"});
  auto f = c.next_frame(10s);
  REQUIRE(f);
  REQUIRE(f->info().step == 400);
  std::size_t subnormal = 0, tiny_but_nonzero = 0;
  for (std::size_t field = 0; field < 2; ++field) {
    const float* x = f->host_field(field);
    for (std::size_t i = 0; i < 128 * 128; ++i) {
      subnormal += std::fpclassify(x[i]) == FP_SUBNORMAL;
      tiny_but_nonzero += x[i] != 0 && std::abs(x[i]) < 1e-30f;
    }
  }
  CHECK(subnormal == 0);
  CHECK(tiny_but_nonzero < 128 * 128);  // the diffusion front exists but is flushed, not denormal
}

namespace {
/// The same run on both backends, stepped `steps` from one seed: each one's slot at that step.
/// `steer`: cuview-ctl commands given halfway.
struct BothBackends {
  proto::DescribeResult host, cuda;
  std::vector<std::byte> host_slot, cuda_slot;
};
BothBackends stepped_on_both(const std::vector<std::string>& args, const std::string& size, std::uint64_t steps,
                             const std::vector<std::vector<std::string>>& steer = {}) {
  auto host = start_daemon("h", Backend::host, args, size);
  auto gpu = start_daemon("g", Backend::cuda, args, size);
  BothBackends out;
  for (const char* name : {"h", "g"}) {
    const std::uint64_t half = steer.empty() ? 0 : steps / 2;
    if (half > 0) {
      REQUIRE(ctl(name, {"step", std::to_string(half)}).code == 0);
      (void)wait_stats(name, [&](const StatsView& s) { return s.step == half; });
      for (const auto& command : steer) REQUIRE(ctl(name, command).code == 0);
    }
    REQUIRE(ctl(name, {"step", std::to_string(steps - half)}).code == 0);
    (void)wait_stats(name, [&](const StatsView& s) { return s.step == steps; });
    auto c = attach(name);
    auto f = c.next_frame(10s);
    REQUIRE(f);
    REQUIRE(f->info().step == steps);
    auto& slot = name[0] == 'h' ? out.host_slot : out.cuda_slot;
    slot.resize(c.description().slot_bytes);
    f->copy_to_host(slot);
    (name[0] == 'h' ? out.host : out.cuda) = c.description();
  }
  return out;
}
}  // namespace

TEST_CASE("the CUDA backend computes what the host backend computes", "[integration][gpu]") {
  require_backend(Backend::cuda);
  RuntimeDir rt;
  const auto both = stepped_on_both({"--paused", "--seed", "9"}, "128x128", 200);
  const auto* x = reinterpret_cast<const float*>(both.host_slot.data());
  const auto* y = reinterpret_cast<const float*>(both.cuda_slot.data());
  const std::size_t stride = both.host.fields.at(1).offset / sizeof(float);
  double worst = 0;
  for (std::size_t f = 0; f < 2; ++f)
    for (std::size_t i = 0; i < 128 * 128; ++i)
      worst = std::max(worst, double(std::abs(x[f * stride + i] - y[f * stride + i])));
  INFO("largest host/CUDA difference after 200 steps: " << worst);
  CHECK(worst < 1e-4);  // only floating-point contraction differs
}

TEST_CASE("the 3-D Gray-Scott computes the same bits on CUDA as on the host", "[integration][gpu]") {
  require_backend(Backend::cuda);
  RuntimeDir rt;
  // 40x24x20: no multiple of the kernel's 64 x 4 cells of a layer or of its 8-layer march (lanes
  // past the right edge, rows past the bottom); 64x32x33: whole blocks, a last march of one layer;
  // 33x9x8: a warp's first lane alone in the grid, a block past the bottom. 121 steps: any
  // kernel that steps in pairs ends on a single one.
  const std::vector<std::pair<std::string, std::vector<std::uint32_t>>> sizes{
      {"40x24x20", {20, 24, 40}}, {"64x32x33", {33, 32, 64}}, {"33x9x8", {8, 9, 33}}};
  for (const auto& [size, dims] : sizes) {
    INFO("--size " << size);
    const auto both = stepped_on_both({"--sim", "grayscott3d", "--paused", "--seed", "5"}, size, 121);
    CHECK(both.cuda.dims == dims);
    for (const auto& f : both.host.fields) {
      INFO("field " << f.name);
      CHECK(std::memcmp(both.host_slot.data() + f.offset, both.cuda_slot.data() + f.offset, f.bytes) == 0);
    }
  }
}

namespace {
/// A flow (`sim`) in each storage and each x boundary, `steps` steps of `size` on both backends
/// with `steer` halfway: every field of the last frame the same bits on CUDA as on the host.
void check_flow_bits(const std::string& sim, const std::string& size, const std::vector<std::uint32_t>& dims,
                     std::uint64_t steps, const std::vector<std::vector<std::string>>& steer) {
  for (const std::string storage : {"fp32", "fp16s"})
    for (const std::string flow : {"channel", "periodic"}) {
      INFO(sim << " storage=" << storage << " flow=" << flow);
      const auto both = stepped_on_both(
          {"--sim", sim, "--paused", "--sim-option", "storage=" + storage, "--sim-option", "flow=" + flow}, size,
          steps, steer);
      CHECK(both.cuda.dims == dims);
      for (const auto& f : both.host.fields) {
        INFO("field " << f.name);
        CHECK(std::memcmp(both.host_slot.data() + f.offset, both.cuda_slot.data() + f.offset, f.bytes) == 0);
      }
    }
}
}  // namespace

TEST_CASE("the 3-D flow computes the same bits on CUDA (in place) as on the host (A to B), in either storage",
          "[integration][gpu]") {
  require_backend(Backend::cuda);
  RuntimeDir rt;
  // 70x30x26: no multiple of the kernel's 128-cell blocks; the sphere, walls, inflow and outflow
  // (or the wrap of a periodic duct, driven from halfway); halfway a ball drawn and part of it
  // erased again.
  const std::vector<std::vector<std::string>> strokes{{"set", "force=0.0001"},
                                                      {"draw", "obstacles", "40", "14", "12", "--radius", "4"},
                                                      {"draw", "obstacles", "42", "14", "12", "--radius", "2",
                                                       "--erase"}};
  check_flow_bits("lbm3d", "70x30x26", {26, 30, 70}, 300, strokes);
}

TEST_CASE("the 2-D flow computes the same bits on CUDA as on the host, in either storage", "[integration][gpu]") {
  require_backend(Backend::cuda);
  RuntimeDir rt;
  // 300x61: no multiple of the kernel's 256-cell rows; the cylinder, walls, inflow and outflow
  // (or the wrap of a periodic channel, driven from halfway); halfway a disc drawn and part of it
  // erased again.
  const std::vector<std::vector<std::string>> strokes{{"set", "force=0.0001"},
                                                      {"draw", "obstacles", "150", "30", "--radius", "6"},
                                                      {"draw", "obstacles", "153", "30", "--radius", "3", "--erase"}};
  check_flow_bits("lbm", "300x61", {61, 300}, 400, strokes);
}

TEST_CASE("every steps-per-launch setting gives the same bits, on any grid size", "[integration][gpu]") {
  require_backend(Backend::cuda);
  // 100x37 is no multiple of the fused kernel's 64x32 tile; 8x8 is smaller than its halo-padded
  // tile, so the periodic wrap is taken more than once. 203 steps leave a remainder for every K.
  const auto [size, cells] =
      GENERATE(std::pair<std::string, std::size_t>{"100x37", 100 * 37}, std::pair<std::string, std::size_t>{"8x8", 64},
               std::pair<std::string, std::size_t>{"256x256", 256 * 256});
  RuntimeDir rt;
  std::vector<std::vector<float>> results;
  for (int k = 1; k <= 4; ++k) {
    const std::string name = std::string("k").append(std::to_string(k));
    auto d =
        start_daemon(name, Backend::cuda, {"--paused", "--seed", "5", "--steps-per-launch", std::to_string(k)}, size);
    REQUIRE(ctl(name, {"step", "203"}).code == 0);
    (void)wait_stats(name, [](const StatsView& s) { return s.step == 203; });
    auto c = attach(name);
    std::optional<Frame> f;
    while (auto g = c.next_frame(2s)) f = std::move(g);  // the newest frame: step 203
    REQUIRE(f);
    REQUIRE(f->info().step == 203);
    REQUIRE_FALSE(f->verify());
    std::vector<std::byte> raw(c.description().slot_bytes);
    f->copy_to_host(raw);
    const std::size_t stride = c.description().fields.at(1).offset;
    std::vector<float> both(2 * cells);
    std::memcpy(both.data(), raw.data(), cells * sizeof(float));
    std::memcpy(both.data() + cells, raw.data() + stride, cells * sizeof(float));
    results.push_back(std::move(both));
  }
  for (std::size_t k = 1; k < results.size(); ++k) {
    std::size_t differ = 0;
    for (std::size_t i = 0; i < results[0].size(); ++i) differ += results[k][i] != results[0][i];
    INFO(size << ": " << k + 1 << " steps per launch against 1: " << differ << " of " << results[0].size()
              << " values differ");
    CHECK(differ == 0);
  }
}
