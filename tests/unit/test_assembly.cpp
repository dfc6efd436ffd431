// The assembly of a run's parts as values (cuview/assembly.hpp): placing blocks, choosing the
// step a group shows, matching remote views of parts, assembling a picture.
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <numeric>

#include "cuview/assembly.hpp"
#include "cuview/error.hpp"

using namespace cuview;
using namespace std::chrono_literals;

namespace {
template <class T>
std::span<const std::byte> bytes_of(const std::vector<T>& v) {
  return std::as_bytes(std::span(v));
}
template <class T>
std::span<std::byte> bytes_of(std::vector<T>& v) {
  return std::as_writable_bytes(std::span(v));
}
}  // namespace

TEST_CASE("an extent names its axes fastest first and counts its cells", "[assembly]") {
  const auto e = Extent::grid(512, 256);
  CHECK(e.dims == Axes{256, 512});
  CHECK(e.width() == 512);
  CHECK(e.height() == 256);
  CHECK(e.depth() == 1);
  CHECK(e.cells() == 512 * 256);
  CHECK(e.text() == "512x256");
  const Extent volume{{64, 32, 16}, 3};
  CHECK(volume.width() == 16);
  CHECK(volume.depth() == 64);
  CHECK(volume.text() == "16x32x64 of 3-vectors");
}

TEST_CASE("blocks of four parts placed in a 2-D grid make the grid, each cell from its part", "[assembly]") {
  // A 6 × 4 grid cut into four blocks of 3 × 2, each cell holding its global index.
  const std::uint32_t W = 6, H = 4;
  std::vector<std::int32_t> global(W * H, -1);
  for (std::uint32_t by = 0; by < 2; ++by)
    for (std::uint32_t bx = 0; bx < 2; ++bx) {
      std::vector<std::int32_t> block;
      for (std::uint32_t y = 0; y < 2; ++y)
        for (std::uint32_t x = 0; x < 3; ++x) block.push_back(static_cast<std::int32_t>((by * 2 + y) * W + bx * 3 + x));
      place_block(Block::grid(bx * 3, by * 2, 3, 2), bytes_of(block), {H, W}, bytes_of(global), sizeof(std::int32_t));
    }
  std::vector<std::int32_t> expected(W * H);
  std::iota(expected.begin(), expected.end(), 0);
  CHECK(global == expected);
}

TEST_CASE("a block of a volume lands at its offset in every axis, the rest untouched", "[assembly]") {
  const Axes global{4, 5, 6};  // depth, height, width
  std::vector<std::uint16_t> grid(4 * 5 * 6, 0);
  const Block b{{1, 2, 3}, {2, 3, 2}};
  std::vector<std::uint16_t> block;
  for (std::uint32_t z = 0; z < 2; ++z)
    for (std::uint32_t y = 0; y < 3; ++y)
      for (std::uint32_t x = 0; x < 2; ++x) block.push_back(static_cast<std::uint16_t>(1000 + z * 100 + y * 10 + x));
  place_block(b, bytes_of(block), global, bytes_of(grid), sizeof(std::uint16_t));
  for (std::uint32_t z = 0; z < 4; ++z)
    for (std::uint32_t y = 0; y < 5; ++y)
      for (std::uint32_t x = 0; x < 6; ++x) {
        const bool inside = z >= 1 && z < 3 && y >= 2 && y < 5 && x >= 3 && x < 5;
        const std::uint16_t want =
            inside ? static_cast<std::uint16_t>(1000 + (z - 1) * 100 + (y - 2) * 10 + (x - 3)) : 0;
        INFO("cell (x " << x << ", y " << y << ", z " << z << ")");
        CHECK(grid[(z * 5 + y) * 6 + x] == want);
      }
}

TEST_CASE("a block is placed by one 2-D copy per plane: one for a grid, one per layer of a volume", "[assembly]") {
  // A 2-D block of 3 x 2 cells of 4 bytes at (x 5, y 1) in a 10-wide grid: one copy, grid rows apart.
  CHECK(block_copies(Block::grid(5, 1, 3, 2), {4, 10}, 4) ==
        std::vector<Copy2D>{{.dst = (1 * 10 + 5) * 4, .dst_pitch = 40, .src = 0, .src_pitch = 12, .width = 12,
                             .height = 2}});
  // The volume above: two layers, each 3 rows of 2 cells, a layer of the grid (5 x 6 cells) apart.
  const auto copies = block_copies(Block{{1, 2, 3}, {2, 3, 2}}, {4, 5, 6}, 2);
  REQUIRE(copies.size() == 2);
  for (std::size_t z = 0; z < 2; ++z) {
    CHECK(copies[z].dst == (((1 + z) * 5 + 2) * 6 + 3) * 2);
    CHECK(copies[z].src == z * 3 * 2 * 2);
    CHECK(copies[z].dst_pitch == 6 * 2);
    CHECK(copies[z].src_pitch == 2 * 2);
    CHECK(copies[z].width == 2 * 2);
    CHECK(copies[z].height == 3);
  }
  // A 1-D block is one row; an empty block needs no copy.
  CHECK(block_copies(Block{{7}, {3}}, {16}, 4) ==
        std::vector<Copy2D>{{.dst = 28, .dst_pitch = 12, .src = 0, .src_pitch = 12, .width = 12, .height = 1}});
  CHECK(block_copies(Block::grid(0, 0, 0, 2), {4, 4}, 4).empty());
}

TEST_CASE("a slab of a volume fills the rectangle of a plane that crosses it, and none of one that misses it",
          "[assembly]") {
  // Layers 4-7 of a volume 8 deep, 6 high, 10 wide: the second of two slabs.
  const Axes dims{8, 6, 10};
  const Block slab{{4, 0, 0}, {4, 6, 10}};
  const auto one = [](const Block& b, const PictureLayout& l) {
    const auto shares = picture_blocks(b, l);
    REQUIRE(shares.size() == 1);
    return shares.front();
  };
  const auto rect = [](const PlaneBlock& p) { return std::array<int, 4>{p.rect.x, p.rect.y, p.rect.w, p.rect.h}; };
  // A z-plane in it is its layer (z - 4), the whole picture; one of the first slab misses it.
  CHECK(rect(one(slab, PictureLayout::of_plane(dims, {SliceAxis::z, 6}))) == std::array{0, 0, 10, 6});
  CHECK(one(slab, PictureLayout::of_plane(dims, {SliceAxis::z, 6})).local == Slice{SliceAxis::z, 2});
  CHECK(picture_blocks(slab, PictureLayout::of_plane(dims, {SliceAxis::z, 3})).empty());
  // A y-plane (columns x, rows z) and an x-plane (columns y, rows z): the slab's rows 4-7.
  CHECK(rect(one(slab, PictureLayout::of_plane(dims, {SliceAxis::y, 5}))) == std::array{0, 4, 10, 4});
  CHECK(one(slab, PictureLayout::of_plane(dims, {SliceAxis::y, 5})).local == Slice{SliceAxis::y, 5});
  CHECK(rect(one(slab, PictureLayout::of_plane(dims, {SliceAxis::x, 9}))) == std::array{0, 4, 6, 4});
  // A block offset along every axis keeps its place in each plane.
  const Axes big{4, 6, 8};
  const Block inner{{1, 2, 3}, {2, 3, 4}};
  CHECK(rect(one(inner, PictureLayout::of_plane(big, {SliceAxis::z, 2}))) == std::array{3, 2, 4, 3});
  CHECK(rect(one(inner, PictureLayout::of_plane(big, {SliceAxis::y, 4}))) == std::array{3, 1, 4, 2});
  CHECK(rect(one(inner, PictureLayout::of_plane(big, {SliceAxis::x, 3}))) == std::array{2, 1, 3, 2});
  CHECK(one(inner, PictureLayout::of_plane(big, {SliceAxis::x, 3})).local == Slice{SliceAxis::x, 0});
  // A 2-D block is its own rectangle; planes belong to volumes only.
  CHECK(rect(one(Block::grid(5, 1, 3, 2), PictureLayout::of_grid(10, 4))) == std::array{5, 1, 3, 2});
  REQUIRE_THROWS_WITH(picture_blocks(slab, PictureLayout::of_grid(10, 6)), Catch::Contains("name the axis and index"));
  REQUIRE_THROWS_WITH(picture_blocks(Block::grid(0, 0, 2, 2), PictureLayout::of_plane(dims, {})),
                      Catch::Contains("takes no axis or index"));
}

TEST_CASE("three planes through a cell: z top left, x beside it sharing rows y, y below sharing columns x",
          "[assembly]") {
  const Axes dims{8, 6, 10};  // depth 8, height 6, width 10
  const auto l = PictureLayout::of_three_planes(dims, {7, 2, 5});  // through x 7, y 2, z 5
  REQUIRE(l.panels.size() == 3);
  const int gap = 1;
  CHECK(l.w == 10 + gap + 8);
  CHECK(l.h == 6 + gap + 8);
  // Every picture cell names the volume's cell it shows, on the plane of its panel.
  CHECK(l.cell_at(3, 4) == std::array<std::uint32_t, 3>{3, 4, 5});           // the z-plane: (x, y)
  CHECK(l.cell_at(10 + gap + 6, 4) == std::array<std::uint32_t, 3>{7, 4, 6});  // the x-plane: (z, y)
  CHECK(l.cell_at(3, 6 + gap + 6) == std::array<std::uint32_t, 3>{3, 2, 6});   // the y-plane: (x, z)
  CHECK_FALSE(l.cell_at(10, 0));                                              // between panels
  CHECK_FALSE(l.cell_at(10 + gap + 1, 6 + gap + 1));                          // the empty corner
  // The second of two slabs (layers 4-7) and planes through z 1: the z-plane misses it; it fills
  // the right half of the x-plane's columns and the lower half of the y-plane's rows.
  const Block slab{{4, 0, 0}, {4, 6, 10}};
  const auto shares = picture_blocks(slab, PictureLayout::of_three_planes(dims, {7, 2, 1}));
  REQUIRE(shares.size() == 2);
  CHECK(shares[0].local == Slice{SliceAxis::x, 7});
  CHECK(shares[0].transposed);
  CHECK(std::array{shares[0].rect.x, shares[0].rect.y, shares[0].rect.w, shares[0].rect.h} ==
        std::array{10 + gap + 4, 0, 4, 6});
  CHECK(shares[1].local == Slice{SliceAxis::y, 2});
  CHECK(std::array{shares[1].rect.x, shares[1].rect.y, shares[1].rect.w, shares[1].rect.h} ==
        std::array{0, 6 + gap + 4, 10, 4});
  // The transposed plane's field: rows y, columns z, strides to match.
  proto::FieldDesc f;  // the slab's field u: 4 layers of 6 rows of 10 floats
  f.name = "u", f.dtype = "float32", f.shape = {4, 6, 10}, f.strides = {240, 40, 4}, f.bytes = 4 * 240;
  const auto x_plane = block_field(f, shares[0]);
  CHECK(x_plane.shape == std::vector<std::uint32_t>{6, 4});
  CHECK(x_plane.strides == std::vector<std::uint64_t>{40, 240});
  CHECK(x_plane.offset == 7 * 4);
  REQUIRE_THROWS_WITH(PictureLayout::of_three_planes(dims, {10, 0, 0}), Catch::Contains("x runs from 0 to 9"));
}

TEST_CASE("cells of several components move as one cell", "[assembly]") {
  std::vector<float> grid(2 * 4 * 3, 0.f);  // 4 × 2 grid of 3-vectors
  const std::vector<float> block{1, 2, 3, 4, 5, 6};  // one row of two cells
  place_block(Block::grid(1, 1, 2, 1), bytes_of(block), {2, 4}, bytes_of(grid), 3 * sizeof(float));
  CHECK(std::vector<float>(grid.begin() + (4 + 1) * 3, grid.begin() + (4 + 3) * 3) == block);
  CHECK(std::count(grid.begin(), grid.end(), 0.f) == static_cast<long>(grid.size() - block.size()));
}

TEST_CASE("a block that leaves the grid or has another rank is refused, naming the sizes", "[assembly]") {
  std::vector<float> grid(4 * 4), block(2 * 2);
  REQUIRE_THROWS_WITH(place_block(Block::grid(3, 0, 2, 2), bytes_of(block), {4, 4}, bytes_of(grid), 4),
                      Catch::Contains("outside the grid of 4x4"));
  REQUIRE_THROWS_WITH(place_block(Block{{0, 0, 0}, {1, 2, 2}}, bytes_of(block), {4, 4}, bytes_of(grid), 4),
                      Catch::Contains("a block of 3 axes"));
  std::vector<float> short_block(3);
  REQUIRE_THROWS_WITH(place_block(Block::grid(0, 0, 2, 2), bytes_of(short_block), {4, 4}, bytes_of(grid), 4),
                      Catch::Contains("needs 16 bytes in"));
}

TEST_CASE("a group takes the newest step every part offers, never one only some have", "[assembly]") {
  SECTION("all parts at one step") {
    const auto c = choose_common_step({{10, 11, 12}, {11, 12}, {12, 10}});
    REQUIRE(c.step);
    CHECK(*c.step == 12);
  }
  SECTION("one part a frame behind: the step both have") {
    const auto c = choose_common_step({{10, 11, 12}, {10, 11}});
    REQUIRE(c.step);
    CHECK(*c.step == 11);
  }
  SECTION("a torn group (no step in common) takes nothing and waits on the part furthest behind") {
    const auto c = choose_common_step({{12, 13}, {10, 11}, {14}});
    CHECK_FALSE(c.step);
    CHECK(c.laggard == 1);
  }
  SECTION("a part offering nothing new (missing) is the one to wait on") {
    const auto c = choose_common_step({{5, 6}, {5, 6}, {}, {}});
    CHECK_FALSE(c.step);
    CHECK(c.laggard == 2);
  }
  SECTION("a single part takes its newest") {
    const auto c = choose_common_step({{3, 9, 4}});
    REQUIRE(c.step);
    CHECK(*c.step == 9);
  }
}

TEST_CASE("the view matcher makes a picture only of one step from every part", "[assembly]") {
  const auto t0 = ViewMatcher::Clock::now();
  ViewMatcher m(3, t0);
  SECTION("nothing held: nothing to do, until a view is lost for 3 s") {
    auto d = m.decide(t0 + 100ms);
    CHECK_FALSE(d.picture);
    CHECK(d.asks.empty());
    d = m.decide(t0 + 3100ms);
    CHECK(d.asks == std::vector<ViewMatcher::Ask>{{0, std::nullopt}, {1, std::nullopt}, {2, std::nullopt}});
  }
  SECTION("parts one frame apart: the ones behind are asked for the step of the one ahead") {
    m.arrived(0, 20, 20);
    m.arrived(1, 21, 21);
    m.arrived(2, 20, 21);
    auto d = m.decide(t0);
    CHECK_FALSE(d.picture);
    CHECK(d.asks == std::vector<ViewMatcher::Ask>{{0, 21}, {2, 21}});
    CHECK_FALSE(m.holds(0));
    CHECK(m.holds(1));
    CHECK(m.waiting_on() == 0);
    m.arrived(0, 21, 22);
    m.arrived(2, 21, 22);
    d = m.decide(t0);
    REQUIRE(d.picture);
    CHECK(d.step == 21);
    // Then every part, for the newest step any part had.
    CHECK(d.asks == std::vector<ViewMatcher::Ask>{{0, 22}, {1, 22}, {2, 22}});
  }
  SECTION("a step already shown is not shown twice: every part is asked for the next") {
    m.arrived(0, 7, 7), m.arrived(1, 7, 7), m.arrived(2, 7, 7);
    REQUIRE(m.decide(t0).picture);
    m.arrived(0, 7, 7), m.arrived(1, 7, 7), m.arrived(2, 7, 7);
    const auto d = m.decide(t0);
    CHECK_FALSE(d.picture);
    CHECK(d.asks == std::vector<ViewMatcher::Ask>{{0, 8}, {1, 8}, {2, 8}});
  }
  SECTION("a missing part holds the picture back; a step that never comes is given up after a second") {
    m.arrived(0, 30, 30), m.arrived(1, 30, 30);
    CHECK_FALSE(m.decide(t0).picture);
    CHECK(m.waiting_on() == 2);
    m.arrived(2, 29, 29);
    auto d = m.decide(t0);
    CHECK(d.asks == std::vector<ViewMatcher::Ask>{{2, 30}});
    d = m.decide(t0 + 500ms);
    CHECK(d.asks.empty());
    d = m.decide(t0 + 1100ms);
    CHECK(d.asks == std::vector<ViewMatcher::Ask>{{2, std::nullopt}});
  }
}

namespace {
RemoteView part_view(std::uint32_t x, std::uint32_t y, std::uint32_t w, std::uint32_t h, float value, float lo, float hi,
                     const std::string& encoding, double bound, double link) {
  RemoteView v;
  v.header.field = "u";
  v.header.view_w = 4, v.header.view_h = 2;
  v.header.step = 5;
  v.header.rect = remote::ViewRect{x, y, w, h};
  v.header.lo = lo, v.header.hi = hi;
  v.header.encoding = encoding;
  v.header.error_bound = bound;
  v.header.link_bytes_per_s = link;
  v.header.raw_bytes = std::uint64_t{w} * h;
  v.view.values.assign(std::size_t{w} * h, value);
  v.view.region.view_w = 4, v.view.region.view_h = 2;
  return v;
}
}  // namespace

TEST_CASE("a picture from parts' views places each block, states the worst bound and the range of those in sight",
          "[assembly]") {
  const auto a = part_view(0, 0, 2, 2, 1.f, 0.f, 1.f, "f32", 0.0, 5e6);
  const auto b = part_view(2, 0, 1, 2, 2.f, -1.f, 2.f, "u8", 0.01, 1e6);
  const auto hidden = part_view(0, 0, 0, 0, 0.f, -100.f, 100.f, "u16", 0.001, 0);
  const RemoteView* parts[] = {&a, &b, &hidden};
  RemoteView out;
  assemble_view(parts, out);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> want{1, 1, 2, nan, 1, 1, 2, nan};
  REQUIRE(out.view.values.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("sample " << i);
    if (std::isnan(want[i]))
      CHECK(std::isnan(out.view.values[i]));
    else
      CHECK(out.view.values[i] == want[i]);
  }
  CHECK_FALSE(out.header.rect);
  CHECK(out.header.error_bound == 0.01);
  CHECK(out.header.encoding == "u8");
  CHECK(out.header.lo == -1.f);  // the hidden part's range is not counted
  CHECK(out.header.hi == 2.f);
  CHECK(out.header.link_bytes_per_s == 1e6);
  CHECK(out.header.raw_bytes == 6);
}

TEST_CASE("a view whose block lies outside it is refused as a bad message", "[assembly]") {
  const auto bad = part_view(3, 0, 2, 2, 1.f, 0.f, 1.f, "f32", 0, 0);
  const RemoteView* parts[] = {&bad};
  RemoteView out;
  try {
    assemble_view(parts, out);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::bad_message);
    CHECK_THAT(std::string(e.what()), Catch::Contains("outside its 4x2 samples"));
  }
}
