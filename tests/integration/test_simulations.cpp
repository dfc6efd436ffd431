// The fluid and particle simulations through the daemon, as a user runs them: headless with
// verified frames on both backends, listed by `cuview-ctl sims`, and obstacles drawn into the
// running flow through the protocol's generic `draw` op.
#include <array>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <thread>

#include "backend_test.hpp"
#include "cuview/client.hpp"
#include "cuview/runtime_dir.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;

namespace {
/// Field `index` of the newest frame at or after `step`, copied to the host.
std::vector<float> field_at(Client& c, std::size_t index, std::uint64_t step) {
  const auto& d = c.description();
  for (int tries = 0; tries < 200; ++tries) {
    auto f = c.next_frame(10s);
    REQUIRE(f);
    if (f->info().step < step) continue;
    REQUIRE_FALSE(f->verify());
    std::vector<std::byte> slot(d.slot_bytes);
    f->copy_to_host(slot);
    const auto& fd = d.fields.at(index);
    std::vector<float> out(fd.bytes / sizeof(float));
    std::memcpy(out.data(), slot.data() + fd.offset, out.size() * sizeof(float));
    return out;
  }
  FAIL("no frame at step " << step);
  return {};
}
}  // namespace

BACKEND_TEST("lbm and nbody run headless and publish verified frames", "[integration][simulations]") {
  RuntimeDir rt;
  {
    auto d = start_daemon("lbm", backend, {"--sim", "lbm"}, "160x64");
    auto r = ctl("lbm", {"attach", "--frames", "5", "--verify"});
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    auto desc = ctl("lbm", {"describe"});
    CHECK_THAT(desc.out,
               Catch::Contains("field velocity float32 [64, 160, 2]") && Catch::Contains("input obstacles (mask)"));
  }
  {
    auto d = start_daemon(
        "nb", backend, {"--sim", "nbody", "--sim-option", "bodies=512", "--sim-option", "setup=galaxies"}, "128x128");
    auto r = ctl("nb", {"attach", "--frames", "5", "--verify"});
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    auto desc = ctl("nb", {"describe"});
    CHECK_THAT(desc.out, Catch::Contains("bodies") && Catch::Contains("512"));
  }
  auto sims = ctl("x", {"sims"});
  CHECK_THAT(sims.out, Catch::Contains("lbm") && Catch::Contains("nbody") && Catch::Contains("grayscott"));
  ChildProcess wrong({bin("cuview-compute"), "--name", "w", "--backend", to_string(backend), "--sim", "lbm",
                      "--sim-option", "flow=sideways"});
  REQUIRE(wrong.wait_for(30s));
  CHECK_THAT(wrong.err(), Catch::Contains("flow=sideways") && Catch::Contains("flow=channel|periodic"));
}

BACKEND_TEST("grayscott3d publishes verified volumes of --size WxHxD; the other form of size is refused by name",
             "[integration][simulations]") {
  RuntimeDir rt;
  {
    auto d = start_daemon("gs3", backend, {"--sim", "grayscott3d"}, "24x16x12");
    auto r = ctl("gs3", {"attach", "--frames", "3", "--verify"});
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("grayscott3d 24x16x12"));
    auto desc = ctl("gs3", {"describe"});
    CHECK_THAT(desc.out, Catch::Contains("grayscott3d 24x16x12") && Catch::Contains("field u   float32 [12, 16, 24]"));
    // The volume is a pattern, not a constant: the seeded cubes differ from the background.
    auto c = attach("gs3", "simulations test");
    const auto u = field_at(c, 0, 0);
    REQUIRE(u.size() == 24 * 16 * 12);
    CHECK(std::count(u.begin(), u.end(), 1.0f) < static_cast<long>(u.size()));
  }
  ChildProcess flat({bin("cuview-compute"), "--name", "f", "--backend", to_string(backend), "--sim", "grayscott3d",
                     "--size", "64x64"});
  REQUIRE(flat.wait_for(30s));
  CHECK_THAT(flat.err(), Catch::Contains("three-dimensional") && Catch::Contains("--size WxHxD"));
  ChildProcess deep({bin("cuview-compute"), "--name", "g", "--backend", to_string(backend), "--sim", "grayscott",
                     "--size", "64x64x8"});
  REQUIRE(deep.wait_for(30s));
  CHECK_THAT(deep.err(), Catch::Contains("two-dimensional") && Catch::Contains("grayscott3d"));
}

BACKEND_TEST("lbm3d: a grid larger than the memory is refused, naming what it needs and what fits",
             "[integration][simulations]") {
  RuntimeDir rt;
  // 1290³ (2^31 cells, the largest --size allows): 167 GB in place in float32, 330 GB as two arrays.
  ChildProcess big({bin("cuview-compute"), "--name", "big", "--backend", to_string(backend), "--sim", "lbm3d",
                    "--size", "1290x1290x1290"});
  const auto code = big.wait_for(60s);
  REQUIRE(code.has_value());
  CHECK(*code != 0);
  INFO(big.err());
  CHECK_THAT(big.err(), Catch::Contains("lbm3d: a 1290x1290x1290 grid with storage=fp32") && Catch::Contains("needs") &&
                            Catch::Contains("GB") && Catch::Contains("storage=fp16s") &&
                            Catch::Contains("a smaller --size fits"));
  CHECK(list_running_instances().empty());
}

BACKEND_TEST("lbm3d: a ball drawn at (x, y, z) stops the flow there, and a stroke without z is refused",
             "[integration][draw]") {
  RuntimeDir rt;
  auto daemon = start_daemon("flow3", backend, {"--sim", "lbm3d", "--paused"}, "80x24x20");
  auto desc = ctl("flow3", {"describe"});
  CHECK_THAT(desc.out, Catch::Contains("lbm3d 80x24x20") && Catch::Contains("field velocity float32 [20, 24, 80, 3]"));
  REQUIRE(ctl("flow3", {"step", "200"}).code == 0);
  auto c = attach("flow3", "simulations test");
  const int w = 80, h = 24;
  auto cell = [&](int x, int y, int z) { return (static_cast<std::size_t>(z) * h + y) * w + x; };
  const auto before = field_at(c, 1, 200);  // speed
  const std::size_t probe = cell(50, 12, 10), beside = cell(50, 12, 4);
  CHECK(before[probe] > 0.01f);
  c.draw({"obstacles", 50.5, 12.5, 3, 1, 10.5});
  c.step(8);
  const auto drawn = field_at(c, 1, 208);
  CHECK(drawn[probe] == 0.0f);       // solid now
  CHECK(drawn[beside] > 0.001f);     // six layers away: fluid
  try {
    c.draw({"obstacles", 50, 12, 3, 1});
    FAIL("a stroke without z was accepted by a volume");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::bad_value);
    CHECK_THAT(e.what(), Catch::Contains("80x24x20 grid has 3 axes") && Catch::Contains("z"));
  }
  try {
    c.draw({"obstacles", 50, 12, 3, 1, 20});
    FAIL("a stroke beyond the last layer was accepted");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::out_of_range);
    CHECK_THAT(e.what(), Catch::Contains("(50, 12, 20) lies outside the 80x24x20 grid"));
  }
}

BACKEND_TEST("an obstacle drawn into the running flow stops it there, and erasing frees it", "[integration][draw]") {
  RuntimeDir rt;
  auto daemon = start_daemon("flow", backend, {"--sim", "lbm", "--paused"}, "160x64");
  REQUIRE(ctl("flow", {"step", "400"}).code == 0);
  auto c = attach("flow", "simulations test");
  const int w = 160;
  const std::size_t probe = 32 * w + 110;  // downstream of the cylinder, on the axis
  auto before = field_at(c, 1, 400);       // speed
  CHECK(before[probe] > 0.01f);
  c.draw({"obstacles", 110.5, 32.5, 6, 1});
  c.step(16);
  auto drawn = field_at(c, 1, 416);
  CHECK(drawn[probe] == 0.0f);                         // solid now
  CHECK(drawn[32 * w + 130] != before[32 * w + 130]);  // and the flow behind it changed
  c.draw({"obstacles", 110.5, 32.5, 6, 0});
  c.step(200);
  auto erased = field_at(c, 1, 616);
  CHECK(erased[probe] > 0.001f);  // fluid again, flowing

  // Refusals name what was wrong; nothing changes.
  auto expect = [&](const Stroke& s, Errc code, const char* says) {
    try {
      c.draw(s);
      FAIL("stroke accepted");
    } catch (const Error& e) {
      CHECK(e.code() == code);
      CHECK_THAT(e.what(), Catch::Contains(says));
    }
  };
  expect({"walls", 10, 10, 3, 1}, Errc::bad_value, "its inputs are: obstacles");
  expect({"obstacles", 500, 10, 3, 1}, Errc::out_of_range, "outside the 160x64 grid");
  expect({"obstacles", 10, 10, 1000, 1}, Errc::out_of_range, "radius");
  expect({"obstacles", 10, 10, 3, 7}, Errc::out_of_range, "neither 1");
  auto gs = start_daemon("gs", backend);
  auto g = Client::attach({.name = "gs", .client = "t", .import = Import::control_only});
  try {
    g.draw({"obstacles", 1, 1, 1, 1});
    FAIL("grayscott took a stroke");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("it takes no drawing"));
  }
}

BACKEND_TEST("a body placed with a stroke appears where it was drawn, and erasing removes the bodies there",
             "[integration][draw]") {
  RuntimeDir rt;
  auto daemon = start_daemon("nb", backend, {"--sim", "nbody", "--sim-option", "bodies=512", "--paused"}, "128x128");
  auto c = attach("nb", "simulations test");
  const auto& set = c.description().particles.at(0);
  REQUIRE(set.bounds.size() == 4);
  REQUIRE(c.description().inputs.at(0).kind == "points");
  const auto& b = set.bounds;
  auto bodies = [&](std::uint64_t step) {  // positions (x, y) in grid cells and masses of the frame at `step`
    std::vector<std::array<double, 3>> out;
    for (int tries = 0; tries < 200; ++tries) {
      auto f = c.next_frame(10s);
      REQUIRE(f);
      if (f->info().step < step) continue;
      std::vector<std::byte> slot(c.description().slot_bytes);
      f->copy_to_host(slot);
      std::vector<float> pos(512 * 3), mass(512);
      std::memcpy(pos.data(), slot.data() + set.attributes[0].offset, pos.size() * 4);
      std::memcpy(mass.data(), slot.data() + set.attributes[2].offset, mass.size() * 4);
      for (int i = 0; i < 512; ++i)
        out.push_back(
            {(pos[3 * i] - b[0]) / (b[1] - b[0]) * 128, (pos[3 * i + 1] - b[2]) / (b[3] - b[2]) * 128, mass[i]});
      return out;
    }
    FAIL("no frame at step " << step);
    return out;
  };
  c.draw({"bodies", 30.5, 90.5, 2, 1});
  c.step(1);
  int placed = 0;
  for (const auto& [x, y, m] : bodies(1))
    if (std::abs(m - 0.05) < 1e-7) {
      ++placed;
      CHECK(std::abs(x - 30.5) < 0.5);
      CHECK(std::abs(y - 90.5) < 0.5);
    }
  CHECK(placed == 1);
  c.draw({"bodies", 64, 64, 10, 0});  // the disc's centre, with its heavy body
  c.step(1);
  int removed = 0, inside = 0;
  for (const auto& [x, y, m] : bodies(2)) {
    if (m == 0)
      ++removed;
    else if ((x - 64) * (x - 64) + (y - 64) * (y - 64) < 9.5 * 9.5)
      ++inside;
  }
  CHECK(removed > 10);  // the centre and the inner disc's bodies
  CHECK(inside == 0);
}
