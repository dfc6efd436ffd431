// Simulations from plugins: a good one runs, is described, steered and verified like a built-in;
// one of 3 axes runs on --size WxHxD and is checkpointed and restored; one built against ABI 7
// still runs on a plane; every broken kind is refused or stopped with the file, the call and the
// error, and clients are told.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backend_test.hpp"
#include "cuview/client.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;

namespace {
std::string plugin(const std::string& kind) {
  std::string path = CUVIEW_TEST_PLUGIN_DIR;  // appended to, not `+`-chained: GCC 12's -Warray-bounds misfires on that
  return path.append("/libcuview-test-plugin-").append(kind).append(".so");
}

/// The line of `log` that the daemon wrote as an error (the reason it did not start).
std::string error_line(const std::string& log) {
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);)
    if (line.find("error") != std::string::npos) return line;
  return {};
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

/// Runs cuview-compute with `args` to its end (it must not start); its exit code and stderr.
Result refused(std::vector<std::string> args) {
  std::vector<std::string> argv{bin("cuview-compute"), "--name", "p", "--backend", "host"};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildProcess d(argv);
  const auto code = d.wait_for(30s);
  if (!code) fail("cuview-compute " + args.back() + " did not exit within 30 s");
  return {*code, d.out(), d.err()};
}

/// Field 0 (int32) of the frame of `step` from the daemon `name`, verified.
std::vector<std::int32_t> int_cells_at(const std::string& name, std::uint64_t step) {
  auto c = Client::attach(AttachOptions{.name = name, .client = "test"});
  const auto& field = c.description().fields.at(0);
  for (int tries = 0; tries < 400; ++tries) {
    auto f = c.next_frame(10s);
    REQUIRE(f);
    if (f->info().step != step) continue;
    REQUIRE(f->verify() == std::nullopt);
    const auto* cells = reinterpret_cast<const std::int32_t*>(f->host_field(0));
    return {cells, cells + field.bytes / sizeof(std::int32_t)};
  }
  FAIL("no frame of step " << step << " from '" << name << "'");
  return {};
}

/// The volume test plugin's cells (40 × 24 × 16) at `step` after seed `seed`: seed + index + step × (z + 1).
std::vector<std::int32_t> layers_cells(std::uint64_t seed, std::uint64_t step) {
  std::vector<std::int32_t> cells;
  for (std::uint64_t z = 0; z < 16; ++z)
    for (std::uint64_t i = 0; i < 40 * 24; ++i)
      cells.push_back(static_cast<std::int32_t>(seed + z * 40 * 24 + i + step * (z + 1)));
  return cells;
}

void step_to(const std::string& name, std::uint64_t from, std::uint64_t to) {
  REQUIRE(ctl(name, {"step", std::to_string(to - from)}).code == 0);
  (void)wait_stats(name, [&](const StatsView& s) { return s.step == to; });
}
}  // namespace

TEST_CASE("a plugin simulation runs, is described, steered and verified like a built-in", "[integration][plugin]") {
  RuntimeDir rt;
  auto daemon = start_daemon("p", Backend::host, {"--sim", plugin("good"), "--preset", "fast"}, "40x30");
  auto c = Client::attach(AttachOptions{.name = "p", .client = "test"});
  const auto& d = c.description();
  CHECK(d.sim == "ramp");
  REQUIRE(d.fields.size() == 2);
  CHECK(d.fields[0].name == "ramp");
  CHECK(d.fields[1].dtype == "int32");
  // A particle set: 100 walkers, a float32 × 2 position and an int32 id each, after the fields.
  REQUIRE(d.particles.size() == 1);
  const auto& walkers = d.particles[0];
  CHECK(walkers.name == "walkers");
  CHECK(walkers.count == 100);
  REQUIRE(walkers.attributes.size() == 2);
  CHECK(walkers.attributes[0].shape == std::vector<std::uint32_t>{100, 2});
  CHECK(walkers.attributes[0].strides == std::vector<std::uint64_t>{8, 4});
  CHECK(walkers.attributes[1].dtype == "int32");
  CHECK(walkers.attributes[0].offset >= d.fields[1].offset + d.fields[1].bytes);
  CHECK(walkers.attributes[1].offset + walkers.attributes[1].bytes <= d.trailer_offset);
  REQUIRE(d.params.size() == 2);  // the plugin's rate, then the publisher's steps_per_frame
  CHECK(d.params[0].name == "rate");
  CHECK(d.params[0].value == 4);  // --preset fast
  CHECK(ctl("p", {"attach", "--frames", "20", "--verify"}).code == 0);

  c.set({{"rate", 2.5}});
  auto r = ctl("p", {"status", "--json"});
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out).at("params").at("rate") == 2.5);
  auto bad = ctl("p", {"set", "rate=11"});
  CHECK(bad.code != 0);
  CHECK_THAT(bad.err, Catch::Contains("rate=11") && Catch::Contains("[0, 10]"));

  // The int32 field holds each cell's index, as written.
  auto frame = c.next_frame(5s);
  REQUIRE(frame);
  const auto* cells = reinterpret_cast<const std::int32_t*>(frame->host_field(1));
  CHECK(cells[0] == 0);
  CHECK(cells[40 * 30 - 1] == 40 * 30 - 1);
  CHECK(frame->verify() == std::nullopt);  // the checksum covers the particles too
  std::vector<std::byte> slot(d.slot_bytes);
  frame->copy_to_host(slot);
  const auto* ids = reinterpret_cast<const std::int32_t*>(slot.data() + walkers.attributes[1].offset);
  CHECK(ids[99] == 99);
  const auto* xy = reinterpret_cast<const float*>(slot.data() + walkers.attributes[0].offset);
  CHECK(xy[2 * 7 + 1] == 7.0f);
}

TEST_CASE("a plugin of 3 axes runs on --size WxHxD, is read cell for cell, checkpointed and restored",
          "[integration][plugin][checkpoint]") {
  RuntimeDir rt;
  const std::string volume = plugin("volume");
  const auto file = rt.path() / "layers.h5";
  {
    auto daemon = start_daemon("v", Backend::host, {"--sim", volume, "--paused", "--seed", "5"}, "40x24x16");
    {
      auto c = Client::attach(AttachOptions{.name = "v", .client = "test"});
      const auto& d = c.description();
      CHECK(d.sim == "layers");
      REQUIRE(d.fields.size() == 1);
      CHECK(d.fields[0].name == "count");
      CHECK(d.fields[0].shape == std::vector<std::uint32_t>{16, 24, 40});  // dims [D, H, W]
    }
    CHECK(int_cells_at("v", 0) == layers_cells(5, 0));
    step_to("v", 0, 7);
    CHECK(int_cells_at("v", 7) == layers_cells(5, 7));
    const auto r = ctl("v", {"checkpoint", file.string()});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("step 7 written to " + file.string()));
    REQUIRE(ctl("v", {"shutdown"}).code == 0);
    REQUIRE(daemon.wait_for(30s) == 0);
  }
  // Another seed: the restored cells come from the checkpoint, and the run goes on from its step.
  auto restored =
      start_daemon("v", Backend::host, {"--sim", volume, "--paused", "--seed", "9", "--restore", file.string()},
                   "40x24x16");
  CHECK(stats("v").step == 7);
  CHECK(int_cells_at("v", 7) == layers_cells(5, 7));
  step_to("v", 7, 10);
  CHECK(int_cells_at("v", 10) == layers_cells(5, 10));
}

TEST_CASE("a plugin given the other --size form is refused, naming it and the form to give",
          "[integration][plugin][bad-input]") {
  RuntimeDir rt;
  auto plane = refused({"--sim", plugin("volume"), "--size", "40x24"});
  CHECK(plane.code == 1);
  CHECK_THAT(plane.err, Catch::Contains("--sim " + plugin("volume") + " (simulation 'layers') is three-dimensional") &&
                            Catch::Contains("--size WxHxD") && Catch::Contains("not 40x24"));
  auto volume = refused({"--sim", plugin("good"), "--size", "40x24x16"});
  CHECK(volume.code == 1);
  CHECK_THAT(volume.err, Catch::Contains("--sim " + plugin("good") + " (simulation 'ramp') is two-dimensional") &&
                             Catch::Contains("--size WxH (for example 512x512), not 40x24x16") &&
                             Catch::Contains("CUVIEW_SIMULATION_PLUGIN_AXES(..., 1 to 3)"));
  auto line = refused({"--sim", plugin("line"), "--size", "40x24"});
  CHECK(line.code == 1);
  CHECK_THAT(line.err, Catch::Contains("(simulation 'cells') is one-dimensional") &&
                           Catch::Contains("--size W (for example 4096), not 40x24"));
}

TEST_CASE("a plugin of 1 axis runs on --size W, is described as a line and read cell for cell, checkpointed and "
          "restored",
          "[integration][plugin][checkpoint]") {
  RuntimeDir rt;
  const auto file = rt.path() / "cells.h5";
  // seed + index + step: the line's cells (its one layer, z = 0).
  const auto line_cells = [](std::uint64_t seed, std::uint64_t step) {
    std::vector<std::int32_t> cells;
    for (std::uint64_t i = 0; i < 64; ++i) cells.push_back(static_cast<std::int32_t>(seed + i + step));
    return cells;
  };
  {
    auto daemon = start_daemon("l", Backend::host, {"--sim", plugin("line"), "--paused", "--seed", "3"}, "64");
    {
      auto c = Client::attach(AttachOptions{.name = "l", .client = "test"});
      CHECK(c.description().sim == "cells");
      CHECK(c.description().dims == Axes{64});
      CHECK(c.description().fields.at(0).shape == std::vector<std::uint32_t>{64});
    }
    CHECK_THAT(ctl("l", {"describe"}).out, Catch::Contains("field count int32 [64]"));
    CHECK(int_cells_at("l", 0) == line_cells(3, 0));
    step_to("l", 0, 4);
    CHECK(int_cells_at("l", 4) == line_cells(3, 4));
    REQUIRE(ctl("l", {"checkpoint", file.string()}).code == 0);
    REQUIRE(ctl("l", {"shutdown"}).code == 0);
    REQUIRE(daemon.wait_for(30s) == 0);
  }
  const auto verified = refused({"--verify-checkpoint", file.string()});  // prints what the file holds
  CHECK(verified.code == 0);
  CHECK_THAT(verified.out, Catch::Contains("simulation cells (state version 1), 64, step 4"));
  auto restored = start_daemon(
      "l", Backend::host, {"--sim", plugin("line"), "--paused", "--seed", "9", "--restore", file.string()}, "64");
  CHECK(stats("l").step == 4);
  CHECK(int_cells_at("l", 4) == line_cells(3, 4));
  // A checkpoint of a line is not restored onto a plane.
  auto other = refused({"--sim", plugin("good"), "--size", "64x8", "--restore", file.string()});
  CHECK(other.code == 1);
  CHECK_THAT(other.err, Catch::Contains("'cells'"));
}

TEST_CASE("a plugin built against ABI 7 still runs, on a plane", "[integration][plugin]") {
  RuntimeDir rt;
  {
    auto daemon = start_daemon("old", Backend::host, {"--sim", plugin("abi7")}, "40x30");
    auto c = Client::attach(AttachOptions{.name = "old", .client = "test"});
    CHECK(c.description().sim == "ramp");
    REQUIRE(c.description().fields.size() == 2);
    CHECK(c.description().fields[1].shape == std::vector<std::uint32_t>{30, 40});
    CHECK(ctl("old", {"attach", "--frames", "5", "--verify"}).code == 0);
  }
  auto volume = refused({"--sim", plugin("abi7"), "--size", "40x30x8"});
  CHECK(volume.code == 1);
  CHECK_THAT(volume.err, Catch::Contains("is two-dimensional"));
}

TEST_CASE("broken plugins are refused at start with the file and what is wrong", "[integration][plugin][bad-input]") {
  RuntimeDir rt;
  auto missing = refused({"--sim", "/nonexistent/libmysim.so"});
  CHECK(missing.code == 1);
  CHECK_THAT(missing.err, Catch::Contains("/nonexistent/libmysim.so") && Catch::Contains("does not exist"));

  const auto text = rt.path() / "libtext.so";
  { std::ofstream(text) << "not an ELF file\n"; }
  auto not_elf = refused({"--sim", text.string()});
  CHECK(not_elf.code == 1);
  CHECK_THAT(not_elf.err, Catch::Contains(text.string()) && Catch::Contains("cannot be loaded"));

  auto no_entry = refused({"--sim", plugin("not-a-plugin")});
  CHECK(no_entry.code == 1);
  CHECK_THAT(no_entry.err,
             Catch::Contains("not a cuview simulation plugin") && Catch::Contains("cuview_simulation_v1"));

  auto other_abi = refused({"--sim", plugin("other-abi")});
  CHECK(other_abi.code == 1);
  CHECK_THAT(other_abi.err, Catch::Contains("built for plugin entry point cuview_simulation_v2") &&
                                Catch::Contains("loads cuview_simulation_v1 plugins of simulation ABI 7 to 8") &&
                                Catch::Contains("rebuild"));

  // A function the plugin calls but does not contain (a .cu file CMake never compiled): named as
  // its author wrote it, not as the linker mangled it.
  auto undefined = refused({"--sim", plugin("undefined-symbol")});
  CHECK(undefined.code == 1);
  CHECK_THAT(undefined.err, Catch::Contains("cannot be loaded: undefined symbol: "
                                            "advect::gpu::fill_flow(int, float*, advect::Params const&, void*)") &&
                                Catch::Contains("docs/sdk.md"));
  CHECK_THAT(undefined.err, !Catch::Contains("_ZN6advect"));
  CHECK(occurrences(error_line(undefined.err), plugin("undefined-symbol")) == 1);

  // Each thing said once: the simulation, the file, the call and the plugin's own message.
  auto make_throws = refused({"--sim", plugin("make-throws")});
  CHECK(make_throws.code == 1);
  const auto failed = error_line(make_throws.err);
  CHECK_THAT(failed, Catch::Contains("simulation 'ramp' (plugin " + plugin("make-throws") +
                                     ") failed in make(): cannot allocate the grid"));
  CHECK(occurrences(failed, plugin("make-throws")) == 1);
  CHECK(occurrences(failed, "'ramp'") == 1);

  auto reset_throws = refused({"--sim", plugin("reset-throws")});
  CHECK(reset_throws.code == 1);
  CHECK_THAT(reset_throws.err, Catch::Contains("reset") && Catch::Contains("needs a file that is not there"));
  CHECK_FALSE(std::filesystem::exists(rt.path() / "cuview" / "p" / "control"));  // nothing half-started
}

TEST_CASE("a plugin that throws from step stops the daemon cleanly and tells its clients", "[integration][plugin]") {
  RuntimeDir rt;
  auto daemon = start_daemon("p", Backend::host, {"--sim", plugin("step-throws"), "--paused"});
  auto c = Client::attach(AttachOptions{.name = "p", .client = "test"});
  REQUIRE(c.next_frame(5s));
  c.step(100);  // t passes 20 within these steps (rate 0.5, the first preset): the plugin throws
  const auto code = daemon.wait_for(30s);
  REQUIRE(code);
  CHECK(*code == 1);
  CHECK_THAT(daemon.err(),
             Catch::Contains("ramp") && Catch::Contains("step") && Catch::Contains("the solver diverged after t = 20"));
  try {
    (void)c.next_frame(5s);
    FAIL("a frame came from a daemon whose simulation failed");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::daemon_gone);
  }
  // Its files and segments are gone, so the name can be used again at once.
  auto again = start_daemon("p", Backend::host);
  CHECK(ctl("p", {"attach", "--frames", "3", "--verify"}).code == 0);
}

TEST_CASE("the heat example plugins compute on the CUDA executor what their host loops compute",
          "[integration][gpu][plugin]") {
  require_backend(Backend::cuda);
  RuntimeDir rt;
  // The plate, and the box (a plugin of 3 axes, described with dims [D, H, W]).
  const auto [kind, size, dims] = GENERATE(table<std::string, std::string, std::vector<std::uint32_t>>(
      {{"heat", "96x64", {64, 96}}, {"heat3d", "40x24x16", {16, 24, 40}}}));
  constexpr std::uint64_t kSteps = 300;
  const std::vector<std::string> args{"--sim", plugin(kind), "--paused", "--seed", "3"};
  auto host = start_daemon("h", Backend::host, args, size);
  auto gpu = start_daemon("g", Backend::cuda, args, size);
  for (const char* n : {"h", "g"}) {
    REQUIRE(ctl(n, {"step", std::to_string(kSteps)}).code == 0);
    (void)wait_stats(n, [](const StatsView& s) { return s.step == kSteps; });
  }
  auto ch = Client::attach(AttachOptions{.name = "h", .client = "test"});
  auto cg = Client::attach(AttachOptions{.name = "g", .client = "test"});
  CHECK(cg.description().fields.at(0).shape == dims);
  auto fh = ch.next_frame(10s);
  auto fg = cg.next_frame(10s);
  REQUIRE((fh && fg));
  REQUIRE(fh->info().step == kSteps);
  REQUIRE(fg->info().step == kSteps);
  CHECK(fh->verify() == std::nullopt);  // intact frames, by trailer and checksum
  CHECK(fg->verify() == std::nullopt);
  std::vector<std::byte> a(ch.description().slot_bytes), b(cg.description().slot_bytes);
  fh->copy_to_host(a);
  fg->copy_to_host(b);
  const auto* x = reinterpret_cast<const float*>(a.data());
  const auto* y = reinterpret_cast<const float*>(b.data());
  std::size_t cells = 1;
  for (const auto n : dims) cells *= n;
  double worst = 0, heat = 0;
  for (std::size_t i = 0; i < cells; ++i) {
    worst = std::max(worst, double(std::abs(x[i] - y[i])));
    heat += x[i];
  }
  INFO(kind << ": largest host/CUDA difference after " << kSteps << " steps: " << worst);
  CHECK(worst < 1e-4);  // only floating-point contraction differs
  CHECK(heat > 1);      // the hot discs (balls) are there and spreading
}

TEST_CASE("a CUDA error in a plugin's kernel stops the daemon cleanly, naming the simulation and the error",
          "[integration][gpu][plugin]") {
  require_backend(Backend::cuda);
  RuntimeDir rt;
  auto daemon = start_daemon("f", Backend::cuda, {"--sim", plugin("cuda-fault"), "--paused"});
  auto c = Client::attach(AttachOptions{.name = "f", .client = "test"});
  REQUIRE(c.next_frame(10s));
  c.step(500);  // past step 64 the kernel writes through a null pointer
  const auto code = daemon.wait_for(30s);
  REQUIRE(code);
  CHECK(*code == 1);
  CHECK_THAT(daemon.err(), Catch::Contains("cuda-fault") && Catch::Contains("illegal"));
  try {
    (void)c.next_frame(5s);
    FAIL("a frame came from a daemon whose GPU work failed");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::daemon_gone);
  }
  // The GPU is usable again for the next daemon of that name.
  auto again = start_daemon("f", Backend::cuda);
  CHECK(ctl("f", {"attach", "--frames", "3", "--verify"}).code == 0);
}
