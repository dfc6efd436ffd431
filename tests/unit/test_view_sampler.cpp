// Sampling a view of a frame (cuview/view_sampler.hpp): every output sample holds its nearest
// cell's exact value (a vector's magnitude, and its components when asked), NaN outside the grid,
// at any zoom, on both backends; on CUDA only the sampled rows of the visible columns are copied.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "backend_test.hpp"
#include "client/imports.hpp"
#include "cuview/assembly.hpp"
#include "cuview/brick_sampler.hpp"
#include "cuview/client.hpp"
#include "cuview/error.hpp"
#include "cuview/frame_layout.hpp"
#include "cuview/schema.hpp"
#include "cuview/view_sampler.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;

namespace {
/// A frame of a paused daemon, and its whole slot as another process reads it.
struct HeldFrame {
  Client client;
  Frame frame;
  std::vector<std::byte> slot;
};

HeldFrame hold_frame(const std::string& name) {
  auto client = Client::attach(AttachOptions{.name = name, .client = "view sampler test"});
  auto frame = client.next_frame(10s);
  REQUIRE(frame);
  std::vector<std::byte> slot(client.description().slot_bytes);
  frame->copy_to_host(slot);
  return {std::move(client), std::move(*frame), std::move(slot)};
}

const proto::FieldDesc& field_named(const proto::DescribeResult& d, const std::string& name) {
  for (const auto& f : d.fields)
    if (f.name == name) return f;
  FAIL("no field " << name);
  throw;
}

/// Where `sampled` differs from the cells of `grid` (components per cell), in words; empty when
/// every sample is its cell's value (and components), NaN outside the grid.
std::string difference(const SampledView& sampled, const float* grid) {
  const auto& r = sampled.region;
  const int n = sampled.components;
  for (int py = 0; py < r.view_h; ++py)
    for (int px = 0; px < r.view_w; ++px) {
      const auto at = static_cast<std::size_t>(py) * r.view_w + px;
      const float value = sampled.values[at];
      int cx = 0, cy = 0;
      const std::string where = "sample (" + std::to_string(px) + ", " + std::to_string(py) + ")";
      if (!r.cell_at(px, py, cx, cy)) {
        if (!std::isnan(value)) return where + " lies outside the grid but holds " + std::to_string(value);
        continue;
      }
      const float* cell = grid + (static_cast<std::size_t>(cy) * r.field_w + cx) * n;
      if (value != shown_value(cell, n))
        return where + " holds " + std::to_string(value) + ", its cell (" + std::to_string(cx) + ", " +
               std::to_string(cy) + ") " + std::to_string(shown_value(cell, n));
      for (int k = 0; k < n && !sampled.vectors.empty(); ++k)
        if (sampled.vectors[at * n + k] != cell[k]) return where + ": component " + std::to_string(k) + " differs";
    }
  return {};
}
}  // namespace

TEST_CASE("a region samples each output pixel's nearest cell, by rows and columns apart", "[view_sampler]") {
  // A 4×2 grid fitted in 8×4 samples: two samples per cell each way.
  const auto whole = ViewSampling::of(ViewRegion::fit(4, 2, 8, 4, 1.0, 2.0, 1.0));
  CHECK(whole.rows == std::vector<int>{0, 0, 1, 1});
  CHECK(whole.cols == std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3});
  CHECK(whole.distinct_rows == std::vector<int>{0, 1});
  CHECK(whole.col_lo == 0);
  CHECK(whole.col_count == 4);
  // Centred on the grid's right edge: the right half of the output lies outside it.
  const auto edge = ViewSampling::of(ViewRegion::fit(4, 2, 8, 4, 1.0, 4.0, 1.0));
  CHECK(edge.cols == std::vector<int>{2, 2, 3, 3, -1, -1, -1, -1});
  CHECK(edge.col_lo == 2);
  CHECK(edge.col_count == 2);
}

BACKEND_TEST("a sampled view holds each sample's cell value, NaN outside the grid, at every zoom", "[view_sampler]") {
  RuntimeDir rt;
  auto daemon = start_daemon("s", backend, {"--paused"}, "300x200");
  REQUIRE(ctl("s", {"step", "300"}).code == 0);  // structure worth sampling, then still
  (void)wait_stats("s", [](const StatsView& s) { return s.step == 300; });
  auto held = hold_frame("s");
  const auto& field = field_named(held.client.description(), "u");
  const auto* grid = reinterpret_cast<const float*>(held.slot.data() + field.offset);
  ViewSampler sampler;
  struct Case {
    double zoom, cx, cy;
  };
  for (const auto& [zoom, cx, cy] :
       {Case{1, 150, 100}, Case{3.7, 40.2, 180.9}, Case{11, 299, 0}, Case{0.3, 150, 100}}) {
    const auto region = ViewRegion::fit(300, 200, 640, 360, zoom, cx, cy);
    SampledView sampled;
    sampler.sample(held.frame, field, region, sampled);
    INFO("zoom " << zoom << " around (" << cx << ", " << cy << ")");
    REQUIRE(sampled.values.size() == 640u * 360u);
    CHECK(sampled.vectors.empty());
    CHECK(difference(sampled, grid) == "");
    const auto s = ViewSampling::of(region);
    if (backend == Backend::host)
      CHECK(sampler.bytes_copied() == 0);  // read in place
    else
      CHECK(sampler.bytes_copied() == s.distinct_rows.size() * s.col_count * sizeof(float));
  }
}

BACKEND_TEST("each plane of a volume, across x, y or z, samples its own cells", "[view_sampler]") {
  RuntimeDir rt;
  constexpr std::uint32_t W = 40, H = 24, D = 20;
  auto daemon = start_daemon("vol", backend, {"--sim", "grayscott3d", "--paused"}, "40x24x20");
  REQUIRE(ctl("vol", {"step", "30"}).code == 0);
  (void)wait_stats("vol", [](const StatsView& s) { return s.step == 30; });
  auto held = hold_frame("vol");
  const auto& field = field_named(held.client.description(), "u");
  const auto* volume = reinterpret_cast<const float*>(held.slot.data() + field.offset);
  ViewSampler sampler;
  struct Case {
    SliceAxis axis;
    std::uint32_t index, cols, rows;
  };
  for (const auto& [axis, index, cols, rows] :
       {Case{SliceAxis::z, 7, W, H}, Case{SliceAxis::y, 0, W, D}, Case{SliceAxis::x, 39, H, D}}) {
    INFO(to_string(axis) << "-plane " << index);
    const auto plane = plane_of(field, {axis, index});
    CHECK(plane.shape == std::vector<std::uint32_t>{rows, cols});
    // The plane's cells, as a C array, from the whole volume another process read.
    std::vector<float> expected(std::size_t{rows} * cols);
    for (std::uint32_t r = 0; r < rows; ++r)
      for (std::uint32_t c = 0; c < cols; ++c) {
        const auto [x, y, z] = cell_of_plane({axis, index}, c, r);
        expected[std::size_t{r} * cols + c] = volume[(std::size_t{z} * H + y) * W + x];
      }
    for (const double zoom : {1.0, 4.5, 0.4}) {
      const auto region = ViewRegion::fit(static_cast<int>(cols), static_cast<int>(rows), 320, 200, zoom, cols / 3.0,
                                          rows / 2.0);
      SampledView sampled;
      sampler.sample(held.frame, plane, region, sampled);
      INFO("zoom " << zoom);
      CHECK(difference(sampled, expected.data()) == "");
    }
  }
  // Three planes through one cell, side by side (the x-plane transposed), sampled as one picture:
  // every sample is the volume's cell that the picture's layout says is there, NaN between them.
  const auto layout = PictureLayout::of_three_planes({D, H, W}, {31, 5, 12});
  for (const double zoom : {1.0, 3.0}) {
    INFO("three planes, zoom " << zoom);
    const auto region = ViewRegion::fit(layout.w, layout.h, 300, 250, zoom, layout.w / 2.0, layout.h / 2.0);
    SampledView sampled;
    ViewSampler::begin(sampled, region, 1);
    for (const auto& share : picture_blocks(Block{{0, 0, 0}, {D, H, W}}, layout))
      sampler.sample_block(held.frame, block_field(field, share), region, share.rect, sampled);
    std::size_t wrong = 0, drawn = 0;
    for (int py = 0; py < region.view_h; ++py)
      for (int px = 0; px < region.view_w; ++px) {
        int cx = 0, cy = 0;
        const float got = sampled.values[static_cast<std::size_t>(py) * region.view_w + px];
        const auto cell = region.cell_at(px, py, cx, cy) ? layout.cell_at(cx, cy) : std::nullopt;
        if (!cell) {
          wrong += !std::isnan(got);
          continue;
        }
        const auto [x, y, z] = *cell;
        wrong += got != volume[(std::size_t{z} * H + y) * W + x];
        ++drawn;
      }
    CHECK(wrong == 0);
    CHECK(drawn > 1000);
  }
  // A plane past the volume is refused, naming the axis and its cells; the volume itself is not
  // sampled whole.
  REQUIRE_THROWS_WITH(plane_of(field, {SliceAxis::y, H}), Catch::Contains("y-plane 24") &&
                                                             Catch::Contains("y runs from 0 to 23"));
  SampledView sampled;
  REQUIRE_THROWS_WITH(sampler.sample(held.frame, field, ViewRegion::fit(W, H, 100, 100, 1, W / 2.0, H / 2.0), sampled),
                      Catch::Contains("a grid of 3 axes") && Catch::Contains("plane_of"));
}

BACKEND_TEST("a vector field is sampled as its magnitude, with its components when asked", "[view_sampler]") {
  RuntimeDir rt;
  auto daemon = start_daemon("flow", backend, {"--sim", "lbm", "--paused"}, "160x64");
  REQUIRE(ctl("flow", {"step", "200"}).code == 0);
  (void)wait_stats("flow", [](const StatsView& s) { return s.step == 200; });
  auto held = hold_frame("flow");
  const auto& velocity = field_named(held.client.description(), "velocity");
  REQUIRE(velocity.components == 2);
  const auto* grid = reinterpret_cast<const float*>(held.slot.data() + velocity.offset);
  ViewSampler sampler;
  const auto region = ViewRegion::fit(160, 64, 500, 300, 2.5, 60, 30);
  SampledView sampled;
  sampler.sample(held.frame, velocity, region, sampled, VectorComponents::include);
  CHECK(sampled.components == 2);
  REQUIRE(sampled.vectors.size() == 2u * 500u * 300u);
  CHECK(difference(sampled, grid) == "");
}

TEST_CASE("a field of a dtype the sampler does not know is refused by name", "[view_sampler][bad-input]") {
  RuntimeDir rt;
  auto daemon = start_daemon("s", Backend::host, {"--paused"});
  auto held = hold_frame("s");
  auto field = held.client.description().fields.at(0);
  field.dtype = "complex64";
  ViewSampler sampler;
  SampledView sampled;
  CHECK_THROWS_WITH(sampler.sample(held.frame, field, ViewRegion::fit(128, 128, 64, 64, 1, 64, 64), sampled),
                    Catch::Contains("'" + field.name + "'") && Catch::Contains("complex64"));
}

namespace {
constexpr std::uint32_t kW = 6, kH = 5, kD = 4, kCells = kW * kH * kD;

/// Cell i's value in a field of `dtype`, one that float holds exactly (the samplers' values are
/// floats): quarters for float64, multiples of 2^32 for int64 (beyond any int32), ±(1 + i/1024)
/// for float16, ±2^(i mod 60 − 30) × (1 + (i mod 128)/128) for bfloat16 (beyond float16's range).
double value_of(DType dtype, std::uint32_t i) {
  switch (dtype) {
    case DType::float64: return (static_cast<double>(i) - 50) * 0.25;
    case DType::int64: return static_cast<double>((static_cast<std::int64_t>(i) * 3 - 40) << 32);
    case DType::float16: return (i % 2 == 1 ? -1.0 : 1.0) * (1 + i / 1024.0);
    case DType::bfloat16: return (i % 2 == 1 ? -1.0 : 1.0) * std::ldexp(1 + (i % 128) / 128.0, int(i % 60) - 30);
    default: return i;
  }
}

/// Writes value_of(dtype, i) as `dtype` at `p`.
void store(std::byte* p, DType dtype, std::uint32_t i) {
  if (dtype == DType::float64) {
    const double v = value_of(dtype, i);
    std::memcpy(p, &v, sizeof v);
  } else if (dtype == DType::int64) {
    const auto v = static_cast<std::int64_t>(value_of(dtype, i));
    std::memcpy(p, &v, sizeof v);
  } else if (dtype == DType::bfloat16) {  // a float32's upper half: exact for value_of's
    const auto v = static_cast<float>(value_of(dtype, i));
    std::uint32_t bits32 = 0;
    std::memcpy(&bits32, &v, sizeof v);
    const auto bits = static_cast<std::uint16_t>(bits32 >> 16);
    std::memcpy(p, &bits, sizeof bits);
  } else {  // float16: sign, the exponent of 1, i as the mantissa
    const auto bits = static_cast<std::uint16_t>((i % 2 == 1 ? 0x8000 : 0) | (0x3C00 + i));
    std::memcpy(p, &bits, sizeof bits);
  }
}

/// A host frame of a kD × kH × kW grid with one scalar field per dtype of `dtypes` (named by its
/// dtype) and a float64 velocity of 3 components (cell i: value_of(i), value_of(i + 1), 0): what
/// a publisher of such fields hands a reader, built as a remote client builds the frames it fetches.
struct DTypeFrame {
  proto::DescribeResult d;
  Frame frame;
};
DTypeFrame frame_of(const std::vector<DType>& dtypes,
                    const std::function<void(std::byte* slot, const proto::DescribeResult&)>& adjust = {}) {
  proto::DescribeResult d;
  d.backend = "host", d.dims = {kD, kH, kW};
  std::uint64_t end = 0;
  const auto add = [&](const std::string& name, DType dtype, std::uint32_t components) {
    proto::FieldDesc f;
    f.name = name, f.dtype = to_string(dtype), f.components = components;
    const std::uint64_t cell = components * size_of(dtype);
    f.shape = {kD, kH, kW}, f.strides = {kH * kW * cell, kW * cell, cell};
    if (components > 1) f.shape.push_back(components), f.strides.push_back(size_of(dtype));
    f.offset = (end + kFieldAlign - 1) / kFieldAlign * kFieldAlign;
    f.bytes = (kCells * cell + 3) / 4 * 4;
    end = f.offset + f.bytes;
    d.fields.push_back(f);
  };
  for (const DType t : dtypes) add(to_string(t), t, 1);
  add("velocity", DType::float64, 3);
  d.trailer_offset = (end + kFieldAlign - 1) / kFieldAlign * kFieldAlign;
  d.slot_bytes = d.trailer_offset + kFieldAlign;
  auto fetched = detail::make_fetched_frame(d);
  for (std::size_t k = 0; k < dtypes.size(); ++k)
    for (std::uint32_t i = 0; i < kCells; ++i)
      store(fetched.data + d.fields[k].offset + i * size_of(dtypes[k]), dtypes[k], i);
  const auto& v = d.fields.back();
  for (std::uint32_t i = 0; i < kCells; ++i) {
    const double c[3] = {value_of(DType::float64, i), value_of(DType::float64, i + 1), 0};
    std::memcpy(fetched.data + v.offset + i * sizeof c, c, sizeof c);
  }
  if (adjust) adjust(fetched.data, d);
  auto frame = detail::finish_fetched_frame(std::move(fetched), FrameInfo{1, 0, 1, 0, 0});
  return {std::move(d), std::move(frame)};
}
}  // namespace

TEST_CASE("float64, int64, float16 and bfloat16 fields are sampled as their exact values, in views and bricks",
          "[view_sampler][brick_sampler][dtype]") {
  const std::vector<DType> dtypes{DType::float64, DType::int64, DType::float16, DType::bfloat16};
  auto [d, frame] = frame_of(dtypes);
  ViewSampler views;
  BrickSampler bricks;
  for (std::size_t k = 0; k < dtypes.size(); ++k) {
    const auto& field = d.fields[k];
    INFO("field " << field.name);
    // Every plane across z, zoomed in and out: each sample its cell's value, NaN outside.
    for (std::uint32_t z = 0; z < kD; ++z)
      for (const double zoom : {1.0, 3.5, 0.4}) {
        std::vector<float> plane(kW * kH);
        for (std::uint32_t c = 0; c < kW * kH; ++c) plane[c] = static_cast<float>(value_of(dtypes[k], z * kW * kH + c));
        const auto region = ViewRegion::fit(kW, kH, 40, 30, zoom, kW / 2.0, kH / 2.0);
        SampledView sampled;
        views.sample(frame, plane_of(field, Slice{SliceAxis::z, z}), region, sampled);
        CHECK(difference(sampled, plane.data()) == "");
      }
    // A brick of every cell and of every other one.
    for (const int stride : {1, 2}) {
      HostBrick brick;
      BrickSampler::begin(brick, {kD, kH, kW}, stride);
      bricks.sample(frame, field, own_block(d), brick);
      std::size_t wrong = 0;
      for (int z = 0; z < brick.depth; ++z)
        for (int y = 0; y < brick.height; ++y)
          for (int x = 0; x < brick.width; ++x) {
            const auto cell = (static_cast<std::uint32_t>(z * stride) * kH + y * stride) * kW + x * stride;
            wrong += brick.values[(static_cast<std::size_t>(z) * brick.height + y) * brick.width + x] !=
                     static_cast<float>(value_of(dtypes[k], cell));
          }
      CHECK(wrong == 0);
    }
  }
  // A float64 vector: its components as floats, its magnitude as a float32 vector's would be.
  const auto& velocity = d.fields.back();
  SampledView sampled;
  views.sample(frame, plane_of(velocity, Slice{SliceAxis::z, 2}), ViewRegion::fit(kW, kH, 12, 10, 1, kW / 2.0, kH / 2.0),
               sampled, VectorComponents::include);
  std::vector<float> plane(kW * kH * 3);
  for (std::uint32_t c = 0; c < kW * kH; ++c) {
    plane[c * 3] = static_cast<float>(value_of(DType::float64, 2 * kW * kH + c));
    plane[c * 3 + 1] = static_cast<float>(value_of(DType::float64, 2 * kW * kH + c + 1));
  }
  CHECK(difference(sampled, plane.data()) == "");
}

TEST_CASE("a view asked for exact values holds a float64 cell's double, beyond what a float holds",
          "[view_sampler][dtype]") {
  // One cell's value a float cannot hold: 0.1.
  const double tenth = 0.1;
  auto [d, frame] = frame_of({DType::float64}, [&](std::byte* slot, const proto::DescribeResult& desc) {
    std::memcpy(slot + desc.fields[0].offset, &tenth, sizeof tenth);
  });
  const auto region = ViewRegion::fit(kW, kH, kW, kH, 1, kW / 2.0, kH / 2.0);
  SampledView sampled;
  ViewSampler::begin(sampled, region, 1, VectorComponents::omit, ExactValues::include);
  ViewSampler views;
  views.sample_block(frame, plane_of(d.fields[0], Slice{SliceAxis::z, 0}), region, ViewSampler::Block{0, 0, kW, kH},
                     sampled);
  REQUIRE(sampled.exact.size() == std::size_t{kW} * kH);
  CHECK(sampled.exact[0] == tenth);
  CHECK(sampled.values[0] == 0.1f);
  CHECK(sampled.exact[1] == value_of(DType::float64, 1));
}
