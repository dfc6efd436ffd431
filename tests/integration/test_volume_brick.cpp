// A volume's brick (cuview/brick_sampler.hpp), what the volume view renders: every k-th cell of a
// field, a vector's magnitude, equal to the frame's own cells on the host and, taken by the copy
// engine, on CUDA.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "backend_test.hpp"
#include "cuview/brick_sampler.hpp"
#include "cuview/client.hpp"
#include "cuview/view_sampler.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;

namespace {
/// Every brick of every field of the paused flow at strides 1, 2 and 3 against its cells read from
/// the frame's slot copied to the host.
void check_bricks(Backend backend) {
  auto daemon = start_daemon("b", backend, {"--sim", "lbm3d", "--paused"}, "70x30x26");
  REQUIRE(ctl("b", {"step", "120"}).code == 0);
  (void)wait_stats("b", [](const StatsView& s) { return s.step == 120; });
  auto c = attach("b");
  auto f = c.next_frame(10s);
  REQUIRE(f);
  const auto& d = c.description();
  std::vector<std::byte> slot(d.slot_bytes);
  f->copy_to_host(slot);
  const std::array<std::uint32_t, 3> grid{26, 30, 70};
  BrickSampler sampler;
  for (const auto& field : d.fields) {
    if (field.dtype != "float32") continue;
    for (int stride : {1, 2, 3}) {
      INFO("field " << field.name << ", stride " << stride);
      HostBrick brick;
      BrickSampler::begin(brick, grid, stride);
      CHECK(brick.width == (70 + stride - 1) / stride);
      CHECK(brick.depth == (26 + stride - 1) / stride);
      sampler.sample(*f, field, own_block(d), brick);
      BrickSampler::finish(brick);
      if (backend == Backend::cuda) CHECK(sampler.bytes_copied() > 0);
      std::size_t wrong = 0;
      float lo = INFINITY, hi = -INFINITY;
      const auto* base = reinterpret_cast<const float*>(slot.data() + field.offset);
      for (int k = 0; k < brick.depth; ++k)
        for (int j = 0; j < brick.height; ++j)
          for (int i = 0; i < brick.width; ++i) {
            const std::size_t cell = ((std::size_t(k) * stride * 30) + std::size_t(j) * stride) * 70 + std::size_t(i) * stride;
            const float want = shown_value(base + cell * field.components, static_cast<int>(field.components));
            const float got = brick.values[(std::size_t(k) * brick.height + j) * brick.width + i];
            wrong += std::memcmp(&want, &got, sizeof want) != 0;
            lo = std::min(lo, want), hi = std::max(hi, want);
          }
      CHECK(wrong == 0);
      CHECK(brick.lo == lo);
      CHECK(brick.hi == hi);
    }
  }
  // A field of another kind is refused, naming it.
  proto::FieldDesc ints = d.fields.at(0);
  ints.dtype = "int32";
  HostBrick brick;
  BrickSampler::begin(brick, grid, 1);
  try {
    sampler.sample(*f, ints, own_block(d), brick);
    FAIL("an int32 field was taken into a brick");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("'" + ints.name + "'") != std::string::npos);
    CHECK(std::string(e.what()).find("float32") != std::string::npos);
  }
}
}  // namespace

TEST_CASE("a volume's brick is every k-th cell of the frame, a vector's magnitude, on the host", "[integration][host]") {
  RuntimeDir rt;
  check_bricks(Backend::host);
}

TEST_CASE("a volume's brick taken by the copy engine is every k-th cell of the CUDA frame", "[integration][gpu]") {
  require_backend(Backend::cuda);
  RuntimeDir rt;
  check_bricks(Backend::cuda);
}
