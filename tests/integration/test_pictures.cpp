// Pictures of a run of parts (issue 55): each part's publisher casts its own block of the volume
// (`render`), and Run::render composites them front to back; the picture equals the one a whole
// publisher of the same cells casts, within what the seams between blocks change (a sample within
// half a cell of a seam reads the nearer block's last cell instead of interpolating across).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "backend_test.hpp"
#include "cuview/client.hpp"
#include "cuview/publisher.hpp"
#include "cuview/volume_ray.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;

namespace {
constexpr std::uint32_t W = 48, H = 40, D = 36;

/// A smooth field: two Gaussian blobs on a gentle gradient (trilinear is exact only for linear
/// fields, so a seam moves a sample's value by at most the field's curvature over half a cell).
float value(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  const auto blob = [&](double cx, double cy, double cz, double r) {
    return std::exp(-(std::pow(x - cx, 2) + std::pow(y - cy, 2) + std::pow(z - cz, 2)) / (2 * r * r));
  };
  return static_cast<float>(0.2 * x / W + 0.8 * blob(30, 18, 14, 6) + 0.6 * blob(14, 24, 24, 5));
}

/// The W × H × D cells of value(), x fastest.
std::vector<float> volume_cells() {
  std::vector<float> cells(std::size_t{W} * H * D);
  for (std::uint32_t z = 0; z < D; ++z)
    for (std::uint32_t y = 0; y < H; ++y)
      for (std::uint32_t x = 0; x < W; ++x) cells[(std::size_t{z} * H + y) * W + x] = value(x, y, z);
  return cells;
}

/// The volume published whole ("whole") and in `parts` z-slabs ("slabs"), the same steps from one
/// thread, as an MPI program's ranks publish theirs.
struct Runs {
  std::vector<float> cells;
  std::unique_ptr<Publisher> whole;
  std::vector<std::unique_ptr<Publisher>> slabs;
  explicit Runs(std::uint32_t parts) : cells(volume_cells()) {
    whole = std::make_unique<Publisher>(PublisherOptions{.name = "whole", .backend = "host", .max_fps = 0, .max_cost = 1});
    whole->add_grid({.name = "tank", .dims = {D, H, W}, .spacing = {1.5, 1, 1}});
    whole->add_field({.name = "u", .data = cells.data(), .bytes = cells.size() * 4, .memory = Memory::host, .grid = "tank"});
    whole->start();
    for (std::uint32_t k = 0; k < parts; ++k) {
      const std::uint32_t z0 = k * D / parts, z1 = (k + 1) * D / parts;
      PartOptions p{.index = k, .count = parts, .offset = {z0, 0, 0}, .global_dims = {D, H, W}, .group = "run-1",
                    .rank = static_cast<int>(k), .host = {}};
      slabs.push_back(std::make_unique<Publisher>(
          PublisherOptions{.name = "slabs", .backend = "host", .max_fps = 0, .max_cost = 1, .part = p}));
      slabs.back()->add_grid({.name = "tank", .dims = {z1 - z0, H, W}, .spacing = {1.5, 1, 1}});
      slabs.back()->add_field({.name = "u", .data = cells.data() + std::size_t{z0} * H * W,
                               .bytes = std::size_t{z1 - z0} * H * W * 4, .memory = Memory::host, .grid = "tank"});
      slabs.back()->start();
    }
  }
  void publish(std::uint64_t step) {
    (void)whole->publish(step, 0.0);
    for (auto& s : slabs) (void)s->publish(step, 0.0);
  }
};

proto::RenderArgs view_of(const char* mode, double azimuth, double elevation) {
  proto::RenderArgs v;
  v.field = "u", v.width = 160, v.height = 120, v.mode = mode, v.azimuth = azimuth, v.elevation = elevation;
  v.lo = 0, v.hi = 1, v.level = 0.5f;
  for (std::uint32_t i = 0; i < 256; ++i) {
    v.lut.push_back(0xff000000u | i << 16 | (255 - i) << 8 | (i / 2));
    v.opacity.push_back(4.0f / W * static_cast<float>(i) / 255.0f);
  }
  return v;
}
}  // namespace

TEST_CASE("a run of 2 and of 4 parts: each part casts its block, and the pictures composited equal the whole's",
          "[integration][render][parts][host]") {
  const std::uint32_t parts = GENERATE(2u, 4u);
  RuntimeDir rt;
  Runs runs(parts);
  auto whole = Group::attach({.name = "whole", .client = "test", .import = Import::control_only});
  auto slabs = Group::attach({.name = "slabs", .client = "test", .import = Import::control_only});
  REQUIRE(slabs.decomposed());
  REQUIRE(slabs.size() == parts);
  std::uint64_t step = 0;
  // Front, from behind, from the side and from above: the slabs' order changes with the view.
  for (const auto& [azimuth, elevation] : std::vector<std::pair<double, double>>{{0, 0}, {180, 0}, {35, 25}, {100, -60}})
    for (const char* mode : {"mip", "emission", "isosurface"}) {
      const auto v = view_of(mode, azimuth, elevation);
      proto::RenderResult a, b;
      for (int tries = 0; tries < 200 && (a.pending || b.pending); ++tries) {
        runs.publish(++step);
        if (a.pending) a = whole.render(v);
        if (b.pending) b = slabs.render(v);
      }
      REQUIRE_FALSE(a.pending);
      REQUIRE_FALSE(b.pending);
      REQUIRE(b.argb.size() == a.argb.size());
      const bool surface = std::string(mode) == "isosurface";
      std::size_t shown = 0, differing = 0;
      double worst = 0;
      const std::size_t n = std::size_t{v.width} * v.height;
      for (std::size_t i = 0; i < n; ++i) {
        std::uint32_t ca = 0, cb = 0;
        float va = 0, vb = 0;
        std::memcpy(&ca, a.argb.data() + i * 4, 4), std::memcpy(&cb, b.argb.data() + i * 4, 4);
        std::memcpy(&va, a.values.data() + i * 4, 4), std::memcpy(&vb, b.values.data() + i * 4, 4);
        shown += std::isnan(va) ? 0 : 1;
        bool same = std::isnan(va) == std::isnan(vb);
        if (surface) {
          // The surface: where it shows, and how far in (its shade within a cell of a seam comes
          // from one-sided differences there, and is not compared).
          same = same && (std::isnan(va) || std::abs(va - vb) <= 1.0f);
        } else {
          for (int shift = 0; shift < 24 && same; shift += 8)
            same = std::abs(int((ca >> shift) & 0xff) - int((cb >> shift) & 0xff)) <= 3;
          if (same && !std::isnan(va)) worst = std::max(worst, double(std::abs(va - vb)));
        }
        differing += same ? 0 : 1;
      }
      INFO(parts << " parts, " << mode << " from " << azimuth << "°, " << elevation << "°: " << differing << " of " << n
                 << " pixels differ; " << shown << " show the field; worst value " << worst);
      CHECK(shown > (surface ? n / 50 : n / 8));  // the isosurface: the larger blob's disc
      // Within 1 % of the pixels (of the surface's, 5 %: where it grazes a seam): those whose rays
      // cross a seam where the field bends most.
      CHECK(differing * (surface ? 20 : 100) <= (surface ? shown : n));
      CHECK(worst < 0.02);
    }
}

TEST_CASE("a viewer of a run of parts that goes away while pictures are being cast leaves the run as it was",
          "[integration][render][parts][host]") {
  RuntimeDir rt;
  Runs runs(2);
  std::uint64_t step = 0;
  {
    auto slabs = Group::attach({.name = "slabs", .client = "test", .import = Import::control_only});
    const auto v = view_of("emission", 35, 25);
    for (int k = 0; k < 5; ++k) {
      runs.publish(++step);
      (void)slabs.render(v);
    }
  }  // detached with a view asked for: every part stops casting it
  for (int k = 0; k < 5; ++k) runs.publish(++step);
  auto c = Client::attach({.name = "slabs", .client = "test", .import = Import::control_only, .part = 1});
  const auto s = c.stats();
  const auto pictures = s.pictures;
  for (int k = 0; k < 5; ++k) runs.publish(++step);
  CHECK(c.stats().pictures == pictures);  // nobody asks: nothing more is cast
  CHECK(c.stats().step == step);
}

TEST_CASE("a new view is cast at once from the newest frame: a camera that moved does not wait for the next frame",
          "[integration][render][host]") {
  RuntimeDir rt;
  std::vector<float> cells = volume_cells();
  // One frame a minute at most: after the first, none is due while the test runs.
  Publisher pub({.name = "slow", .backend = "host", .max_fps = 1.0 / 60, .max_cost = 1});
  pub.add_field({.name = "u", .data = cells.data(), .bytes = cells.size() * 4, .dims = {D, H, W}, .memory = Memory::host});
  pub.start();
  auto c = Client::attach({.name = "slow", .client = "test", .import = Import::control_only});
  auto v = view_of("mip", 0, 0);
  proto::RenderResult first;
  std::uint64_t step = 0;
  for (int tries = 0; tries < 100 && first.pending; ++tries) {
    (void)pub.publish(++step, 0.0);
    first = c.render(v);
  }
  REQUIRE_FALSE(first.pending);
  const auto frames = c.stats().frames_published;
  // The camera turns: the next call of the program's loop casts the new view from the same frame.
  v.azimuth = 30;
  CHECK(c.render(v).pending);
  (void)pub.publish(++step, 0.0);
  const auto turned = c.render(v);
  REQUIRE_FALSE(turned.pending);
  CHECK(turned.seq == first.seq);  // the frame both were cast from
  CHECK(c.stats().frames_published == frames);
  CHECK(turned.argb != first.argb);
}

TEST_CASE("through a gateway a run's pictures come whole: the colours exact, the values within a u16 level",
          "[integration][render][remote][parts][host]") {
  RuntimeDir rt;
  Runs runs(2);
  auto gateway = start_gateway();
  for (const char* name : {"whole", "slabs"}) {
    auto local = Group::attach({.name = name, .client = "test", .import = Import::control_only});
    auto remote = cuview::open({.name = name, .remote = {gateway_url()}, .client = "test"});
    REQUIRE(dynamic_cast<RemoteGroup*>(remote.get()) != nullptr);
    REQUIRE(remote->size() == local.size());
    for (const char* mode : {"mip", "emission", "isosurface"}) {
      const auto v = view_of(mode, 35, 25);
      proto::RenderResult here, there;
      std::uint64_t step = 0;
      for (int tries = 0; tries < 200 && (here.pending || there.pending); ++tries) {
        runs.publish(++step);
        if (here.pending) here = local.render(v);
        if (there.pending) there = remote->render(v);
      }
      REQUIRE_FALSE(there.pending);
      // No frame comes now: both ask for the newest picture of the view, which is one.
      here = local.render(v), there = remote->render(v);
      INFO(name << ", " << mode << ": picture " << here.seq << " here, " << there.seq << " through the gateway");
      REQUIRE(there.seq == here.seq);
      CHECK(there.step == here.step);
      CHECK(there.width == v.width);
      CHECK(there.height == v.height);
      // The colours travel losslessly: a whole publisher's are the same bytes; the parts' are
      // composited from them by the values, which travel in u16 (emission's opacities: a colour
      // may round one level the other way).
      const bool parts = std::string(name) == "slabs";
      if (!parts) CHECK(there.argb == here.argb);
      REQUIRE(there.argb.size() == here.argb.size());
      int worst_level = 0;
      for (std::size_t i = 0; i < here.argb.size(); ++i)
        worst_level = std::max(worst_level, std::abs(int(static_cast<std::uint8_t>(here.argb[i])) -
                                                     int(static_cast<std::uint8_t>(there.argb[i]))));
      CHECK(worst_level <= (parts ? 1 : 0));
      // The values in u16 (what cuview's clients ask for): within a level of the picture's range,
      // and nothing where nothing is.
      REQUIRE(there.values.size() == here.values.size());
      const std::size_t n = here.values.size() / 4;
      std::vector<float> a(n), b(n);
      std::memcpy(a.data(), here.values.data(), n * 4), std::memcpy(b.data(), there.values.data(), n * 4);
      float lo = INFINITY, hi = -INFINITY;
      for (const float x : a)
        if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
      REQUIRE(hi > lo);
      std::size_t misplaced = 0, off = 0;
      for (std::size_t i = 0; i < n; ++i) {
        misplaced += std::isnan(a[i]) != std::isnan(b[i]) ? 1 : 0;
        off += !std::isnan(a[i]) && std::abs(a[i] - b[i]) > (hi - lo) / 65534 ? 1 : 0;
      }
      CHECK(misplaced == 0);
      CHECK(off == 0);
      // Asked again, the picture held is the newest: the same one (the gateway sends none).
      const auto again = remote->render(v);
      CHECK(again.seq == there.seq);
      CHECK(again.argb == there.argb);
    }
  }
}

TEST_CASE("through a gateway a field that is not a volume is refused by the publisher's own words",
          "[integration][render][remote][host]") {
  RuntimeDir rt;
  std::vector<float> plane(64 * 48, 1.0f);
  Publisher pub({.name = "flat", .backend = "host", .max_fps = 0, .max_cost = 1});
  pub.add_field({.name = "u", .data = plane.data(), .bytes = plane.size() * 4, .dims = {48, 64}, .memory = Memory::host});
  pub.start();
  (void)pub.publish(1, 0.0);
  auto gateway = start_gateway();
  auto remote = cuview::open({.name = "flat", .remote = {gateway_url()}, .client = "test"});
  auto v = view_of("mip", 0, 0);
  std::string local_error, remote_error;
  try {
    (void)Client::attach({.name = "flat", .client = "test", .import = Import::control_only}).render(v);
  } catch (const Error& e) {
    local_error = e.what();
  }
  try {
    (void)remote->render(v);
  } catch (const Error& e) {
    remote_error = e.what();
    CHECK(e.code() == Errc::unsupported);
  }
  REQUIRE_FALSE(local_error.empty());
  CHECK(remote_error == local_error);
}

namespace {
/// A plane picture's pixel (px, py) of a cols × rows plane fitted whole into w × h: the cell under
/// its centre, or {-1, -1} off the plane (written out here from docs/protocol.md's words: the plane
/// scaled by the smaller of w/cols and h/rows, centred).
std::pair<int, int> fitted_cell(int px, int py, int cols, int rows, int w, int h) {
  const double s = std::min(double(w) / cols, double(h) / rows);
  const double fx = cols / 2.0 + (px + 0.5 - w / 2.0) / s, fy = rows / 2.0 + (py + 0.5 - h / 2.0) / s;
  if (fx < 0 || fy < 0 || fx >= cols || fy >= rows) return {-1, -1};
  return {int(fx), int(fy)};
}

std::vector<float> floats_of(const std::vector<char>& bytes) {
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

proto::RenderArgs plane_view(const char* axis, std::uint32_t index) {
  auto v = view_of("plane", 0, 0);
  v.opacity.clear();
  v.axis = axis, v.index = index;
  return v;
}

proto::RenderResult picture_of(Run& run, Runs& runs, const proto::RenderArgs& v, std::uint64_t& step) {
  proto::RenderResult r;
  for (int tries = 0; tries < 200 && r.pending; ++tries) {
    runs.publish(++step);
    r = run.render(v);
  }
  return r;
}
}  // namespace

TEST_CASE("a plane of a volume as the publisher shows it: each pixel its cell's value and colour, parts alike",
          "[integration][render][plane][parts][host]") {
  RuntimeDir rt;
  Runs runs(4);
  auto whole = cuview::open({.name = "whole", .client = "test", .import = Import::control_only});
  auto slabs = cuview::open({.name = "slabs", .client = "test", .import = Import::control_only});
  std::uint64_t step = 0;
  struct Case {
    const char* axis;
    std::uint32_t index;
    int cols, rows;
  };
  // A z-plane lies in one slab; x- and y-planes cross all four.
  for (const auto& c : {Case{"z", 20, int(W), int(H)}, Case{"y", 7, int(W), int(D)}, Case{"x", 31, int(H), int(D)}}) {
    const auto v = plane_view(c.axis, c.index);
    const auto a = picture_of(*whole, runs, v, step);
    const auto b = picture_of(*slabs, runs, v, step);
    REQUIRE_FALSE(a.pending);
    REQUIRE_FALSE(b.pending);
    INFO("the plane across " << c.axis << " at " << c.index);
    CHECK(a.width == v.width);
    CHECK(a.height == v.height);
    const auto values = floats_of(a.values);
    REQUIRE(values.size() == std::size_t{v.width} * v.height);
    std::size_t on = 0, wrong = 0, wrong_colour = 0;
    for (int py = 0; py < int(v.height); ++py)
      for (int px = 0; px < int(v.width); ++px) {
        const std::size_t i = std::size_t(py) * v.width + px;
        const auto [col, row] = fitted_cell(px, py, c.cols, c.rows, int(v.width), int(v.height));
        std::uint32_t colour = 0;
        std::memcpy(&colour, a.argb.data() + i * 4, 4);
        if (col < 0) {
          wrong += std::isnan(values[i]) ? 0 : 1;
          wrong_colour += colour == kVolumeMiss ? 0 : 1;
          continue;
        }
        ++on;
        // Rows and columns: of a z-plane y and x, of a y-plane z and x, of an x-plane z and y.
        const std::string axis = c.axis;
        const auto x = axis == "x" ? c.index : std::uint32_t(col);
        const auto y = axis == "y" ? c.index : axis == "x" ? std::uint32_t(col) : std::uint32_t(row);
        const auto z = axis == "z" ? c.index : std::uint32_t(row);
        const float expected = value(x, y, z);
        wrong += values[i] == expected ? 0 : 1;
        const int entry = std::clamp(int(expected * 255.f + 0.5f), 0, 255);
        wrong_colour += colour == v.lut[std::size_t(entry)] ? 0 : 1;
      }
    CHECK(on > std::size_t{v.width} * v.height / 3);
    CHECK(wrong == 0);
    CHECK(wrong_colour == 0);
    // The parts' pictures composited are the whole's, bit for bit: every pixel's cell lies in one block.
    CHECK(b.argb == a.argb);
    CHECK(b.values == a.values);
  }
  // Zoomed in twice on the plane's centre, panned by 4 cells right: the centre pixel shows cell
  // (W/2 + 4, H/2) of the z-plane.
  auto v = plane_view("z", 3);
  v.zoom = 2, v.pan_x = 4;
  v.width = 160, v.height = 120;
  const auto z = picture_of(*whole, runs, v, step);
  REQUIRE_FALSE(z.pending);
  CHECK(floats_of(z.values)[std::size_t{v.height / 2} * v.width + v.width / 2] == value(W / 2 + 4, H / 2, 3));
}

TEST_CASE("a plane of a 2-D field of any dtype: a float64 vector's magnitude, refusals naming what to give",
          "[integration][render][plane][host]") {
  RuntimeDir rt;
  constexpr std::uint32_t FW = 40, FH = 30;
  std::vector<double> uv(std::size_t{FW} * FH * 2);
  for (std::uint32_t y = 0; y < FH; ++y)
    for (std::uint32_t x = 0; x < FW; ++x) {
      uv[(std::size_t{y} * FW + x) * 2] = 3.0 * x;
      uv[(std::size_t{y} * FW + x) * 2 + 1] = 4.0 * y;
    }
  Publisher pub({.name = "flat", .backend = "host", .max_fps = 0, .max_cost = 1});
  pub.add_field({.name = "uv", .data = uv.data(), .bytes = uv.size() * 8, .dims = {FH, FW}, .dtype = DType::float64,
                 .components = 2, .memory = Memory::host});
  pub.start();
  auto c = Client::attach({.name = "flat", .client = "test", .import = Import::control_only});
  auto v = view_of("plane", 0, 0);
  v.field = "uv", v.width = FW, v.height = FH, v.lo = 0, v.hi = 200;
  proto::RenderResult r;
  std::uint64_t step = 0;
  for (int tries = 0; tries < 100 && r.pending; ++tries) {
    (void)pub.publish(++step, 0.0);
    r = c.render(v);
  }
  REQUIRE_FALSE(r.pending);
  const auto values = floats_of(r.values);
  // One pixel a cell: pixel (x, y) is cell (x, y), showing |(3x, 4y)|.
  for (std::uint32_t y : {0u, 7u, FH - 1})
    for (std::uint32_t x : {0u, 13u, FW - 1})
      CHECK(values[std::size_t{y} * FW + x] == static_cast<float>(std::hypot(3.0 * x, 4.0 * y)));
  // A volume mode of a 2-D field is refused, naming the mode that shows it.
  v.mode = "mip";
  CHECK_THROWS_WITH(c.render(v), Catch::Contains("mode 'plane' shows a plane of any field"));
  v.mode = "plane";
  v.zoom = 0;
  CHECK_THROWS_WITH(c.render(v), Catch::Contains("give a zoom above 0"));
}

TEST_CASE("a plane past the grid, or across an axis a volume lacks, is refused by name", "[integration][render][plane][host]") {
  RuntimeDir rt;
  Runs runs(2);
  auto c = Client::attach({.name = "whole", .client = "test", .import = Import::control_only});
  try {
    (void)c.render(plane_view("z", D));
    FAIL("a plane past the grid was accepted");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::out_of_range);
    CHECK_THAT(e.what(), Catch::Contains("the grid has 36 cells along z; give an index from 0 to 35"));
  }
  try {
    (void)c.render(plane_view("w", 0));
    FAIL("axis w was accepted");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::bad_value);
    CHECK_THAT(e.what(), Catch::Contains("x, y or z"));
  }
  // A part checks the index against the whole grid: a plane outside its own block is one it misses.
  auto part = Client::attach({.name = "slabs", .client = "test", .import = Import::control_only, .part = 1});
  CHECK_NOTHROW(part.render(plane_view("z", 2)));
}

TEST_CASE("a picture asked for after nobody watched is of the step the run is at, not of the last frame read",
          "[integration][render][plane][host]") {
  RuntimeDir rt;
  std::vector<float> cells = volume_cells();
  Publisher pub({.name = "late", .backend = "host", .max_fps = 0, .max_cost = 1});
  pub.add_field({.name = "u", .data = cells.data(), .bytes = cells.size() * 4, .dims = {D, H, W}, .memory = Memory::host});
  pub.start();
  std::uint64_t step = 0;
  {
    auto reader = Client::attach({.name = "late", .client = "test"});
    std::optional<Frame> f;
    for (int tries = 0; tries < 100 && !f; ++tries) {
      (void)pub.publish(++step, 0.0);
      f = reader.next_frame(10ms);
    }
    REQUIRE(f);
  }  // the reader went: the run goes on unwatched
  for (int k = 0; k < 20; ++k) (void)pub.publish(++step, 0.0);
  const auto unwatched_from = step;
  auto c = Client::attach({.name = "late", .client = "test", .import = Import::control_only});
  const auto v = plane_view("z", 5);
  proto::RenderResult r;
  for (int tries = 0; tries < 100 && r.pending; ++tries) {
    (void)pub.publish(++step, 0.0);
    r = c.render(v);
  }
  REQUIRE_FALSE(r.pending);
  CHECK(r.step > unwatched_from);
}
