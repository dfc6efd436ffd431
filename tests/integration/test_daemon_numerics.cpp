// What the backends compute: host frames free of subnormal values, the CUDA backend agreeing with
// the host backend, and every steps-per-launch setting giving the same bits.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <optional>
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

TEST_CASE("the CUDA backend computes what the host backend computes", "[integration][gpu]") {
  require_backend(Backend::cuda);
  RuntimeDir rt;
  auto host = start_daemon("h", Backend::host, {"--paused", "--seed", "9"});
  auto gpu = start_daemon("g", Backend::cuda, {"--paused", "--seed", "9"});
  REQUIRE(ctl("h", {"step", "200"}).code == 0);
  REQUIRE(ctl("g", {"step", "200"}).code == 0);
  (void)wait_stats("h", [](const StatsView& s) { return s.step == 200; });
  (void)wait_stats("g", [](const StatsView& s) { return s.step == 200; });
  auto ch = attach("h");
  auto cg = attach("g");
  auto fh = ch.next_frame(10s);
  auto fg = cg.next_frame(10s);
  REQUIRE(fh);
  REQUIRE(fg);
  REQUIRE(fh->info().step == 200);
  REQUIRE(fg->info().step == 200);
  const auto bytes = ch.description().slot_bytes;
  std::vector<std::byte> a(bytes), b(bytes);
  fh->copy_to_host(a);
  fg->copy_to_host(b);
  const auto* x = reinterpret_cast<const float*>(a.data());
  const auto* y = reinterpret_cast<const float*>(b.data());
  const std::size_t stride = ch.description().fields.at(1).offset / sizeof(float);
  double worst = 0;
  for (std::size_t f = 0; f < 2; ++f)
    for (std::size_t i = 0; i < 128 * 128; ++i)
      worst = std::max(worst, double(std::abs(x[f * stride + i] - y[f * stride + i])));
  INFO("largest host/CUDA difference after 200 steps: " << worst);
  CHECK(worst < 1e-4);  // only floating-point contraction differs
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
