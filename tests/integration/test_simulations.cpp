// The fluid and particle simulations through the daemon, as a user runs them: headless with
// verified frames on both backends, listed by `cuview-ctl sims`, and obstacles drawn into the
// running flow through the protocol's generic `draw` op.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <thread>

#include "backend_test.hpp"
#include "cuview/client.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;

namespace {
Client attach(const std::string& name) {
  AttachOptions o;
  o.name = name;
  o.client = "simulations test";
  return Client::attach(o);
}
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

BACKEND_TEST("an obstacle drawn into the running flow stops it there, and erasing frees it", "[integration][draw]") {
  RuntimeDir rt;
  auto daemon = start_daemon("flow", backend, {"--sim", "lbm", "--paused"}, "160x64");
  REQUIRE(ctl("flow", {"step", "400"}).code == 0);
  auto c = attach("flow");
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
