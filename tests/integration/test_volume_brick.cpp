// A volume's brick (cuview/brick_sampler.hpp), what the volume view renders: every k-th cell of a
// field, a vector's magnitude, equal to the frame's own cells on the host and, taken by the copy
// engine, on CUDA.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <optional>

#include "backend_test.hpp"
#include "cuview/brick_sampler.hpp"
#include "cuview/client.hpp"
#include "cuview/view_sampler.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;

namespace {
/// The bricks of stride `stride` of every float32 field of frames `a` and `b` are equal, bit for bit.
void check_same_bricks(BrickSampler& sampler, const Client& c, const Frame& a, const Frame& b,
                       const std::array<std::uint32_t, 3>& grid, int stride) {
  const auto& d = c.description();
  for (const auto& field : d.fields) {
    if (field.dtype != "float32") continue;
    INFO("field " << field.name << ", stride " << stride << ", frames of every " << a.every() << " and "
                  << b.every() << " cells");
    HostBrick x, y;
    BrickSampler::begin(x, grid, stride);
    BrickSampler::begin(y, grid, stride);
    sampler.sample(a, field, own_block(d), x);
    sampler.sample(b, field, own_block(d), y);
    REQUIRE(x.values.size() == y.values.size());
    CHECK(std::memcmp(x.values.data(), y.values.data(), x.values.size() * sizeof(float)) == 0);
  }
}

/// The next frame of `c` at `step` and of every `every`-th cell (skipping older ones).
Frame frame_at(Client& c, std::uint64_t step, std::uint32_t every) {
  std::optional<Frame> f;
  for (int i = 0; i < 50 && !(f && f->info().step == step && f->every() == every); ++i) {
    f.reset();  // its slot released before the next
    f = c.next_frame(10s);
    REQUIRE(f);
  }
  INFO("the frame of step " << step << " and every " << every << " cells");
  REQUIRE((f->info().step == step && f->every() == every));
  return std::move(*f);
}

/// Frames of every k-th cell (Client::read_every): the flow writes only those cells, packed, and a
/// brick taken from one equals the brick taken from the whole frame of the same step — whether the
/// publisher wrote it from a paused run or in the flow's own step.
void check_packed(Client& c, const Frame& whole, const std::array<std::uint32_t, 3>& grid) {
  BrickSampler sampler;
  const std::uint64_t step = whole.info().step;
  for (std::uint32_t k : {2u, 3u}) {
    c.read_every(k);
    const Frame packed = frame_at(c, step, k);  // paused: a change of what is read publishes at once
    CHECK_FALSE(packed.verify());  // its checksum covers the packed cells
    check_same_bricks(sampler, c, whole, packed, grid, static_cast<int>(k));
    check_same_bricks(sampler, c, whole, packed, grid, static_cast<int>(2 * k));
    // A brick the frame cannot give is refused, saying what to do.
    HostBrick brick;
    BrickSampler::begin(brick, grid, static_cast<int>(k) + 1);
    try {
      sampler.sample(packed, c.description().fields.at(1), own_block(c.description()), brick);
      FAIL("a brick of every " << k + 1 << " cells was taken from a frame of every " << k);
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("every " + std::to_string(k) + "th cell") != std::string::npos);
      CHECK(std::string(e.what()).find("read_every") != std::string::npos);
    }
  }
  // A frame written in the flow's step (CUDA: the collision stores every 2nd cell) against the
  // whole frame of that step written afterwards.
  {
    c.read_every(2);
    REQUIRE(ctl("b", {"step", "1"}).code == 0);
    const Frame stepped = frame_at(c, step + 1, 2);
    CHECK_FALSE(stepped.verify());
    c.read_every(1);
    const Frame after = frame_at(c, step + 1, 1);
    check_same_bricks(sampler, c, after, stepped, grid, 2);
  }  // (their slots released: the ring has three)
  // A second reader that takes whole frames only: frames are whole again for both.
  c.read_every(2);
  auto other = attach("b");
  REQUIRE(ctl("b", {"step", "1"}).code == 0);
  const Frame both = frame_at(c, step + 2, 1);
  CHECK(both.every() == 1);
}

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
  // A field of a dtype the sampler does not know is refused, naming it and its dtype.
  proto::FieldDesc unknown = d.fields.at(0);
  unknown.dtype = "complex64";
  HostBrick brick;
  BrickSampler::begin(brick, grid, 1);
  try {
    sampler.sample(*f, unknown, own_block(d), brick);
    FAIL("a complex64 field was taken into a brick");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("'" + unknown.name + "'") != std::string::npos);
    CHECK(std::string(e.what()).find("complex64") != std::string::npos);
  }
  check_packed(c, *f, grid);
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
