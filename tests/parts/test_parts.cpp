// A simulation decomposed over MPI ranks, as a user runs it: `mpirun -n N cuview-compute --sim
// lbm …` (slabs of rows) or `--sim lbm3d` (slabs of layers). The decomposed run must be the one-process run, bit for bit: steered the same way (a
// stroke across a slab border, a parameter change between steps), the parts' checkpoints put
// together equal the one-process run's checkpoint, byte for byte.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <iterator>
#include <thread>

#include "backend_test.hpp"
#include "checkpoint/checkpoint_file.hpp"
#include "cuview/client.hpp"
#include "cuview/runtime_dir.hpp"
#include "mpi_run.hpp"
#include "sims/slab.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

bool have_mpirun() {
  if (!mpirun_path().empty()) return true;
  WARN("mpirun is not installed (Debian: openmpi-bin): the decomposed runs are not tested here");
  return false;
}

/// Steers a run (through part 0 when decomposed) and waits until it reached `step`.
void step_to(Client& c, std::uint64_t n, std::uint64_t step) {
  c.step(n);
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (c.stats().step < step) {
    if (std::chrono::steady_clock::now() > deadline) FAIL("the run did not reach step " << step);
    std::this_thread::sleep_for(20ms);
  }
}

/// A decomposed flow: the plane's slabs are rows, the volume's layers.
struct Case {
  std::string sim, size;
  std::uint32_t q;           ///< populations per cell
  std::uint32_t row_cells;   ///< cells of one row (a plane's) or one layer (a volume's)
  std::uint32_t along;       ///< rows or layers of the whole grid
  std::vector<Stroke> strokes;
  std::vector<std::string> options = {};  ///< more --sim-option values
  std::size_t population_bytes = 4;       ///< float32, or 2 (storage=fp16s)
};
/// Strokes across the slab borders of 2 and 3 ranks (rows 30 and 20/40 of 61; layers 15 and 10/20
/// of 31), and an erase.
const Case kPlane{"lbm", "96x61", 9, 96, 61,
                  {{"obstacles", 40, 30.5, 4, 1}, {"obstacles", 64, 20, 3, 1}, {"obstacles", 41, 31, 2, 0}}};
const Case kVolume{"lbm3d", "64x24x31", 19, 64 * 24, 31,
                   {{"obstacles", 40, 12.5, 4, 1, 15.5}, {"obstacles", 50, 10, 3, 1, 20}, {"obstacles", 41, 12, 2, 0, 16}}};
Case with_fp16s(Case k) {
  k.options = {"storage=fp16s"};
  k.population_bytes = 2;
  return k;
}

/// The same steering for every run: steps, the case's strokes, a parameter change, more steps.
void steer(Client& c, const Case& k) {
  step_to(c, 120, 120);
  for (const auto& s : k.strokes) c.draw(s);
  c.set({{"viscosity", 0.05}});
  step_to(c, 60, 180);
}

/// The run's final checkpoint (step 180), as one grid: the parts' blocks stacked by rows.
struct Grid {
  std::vector<std::byte> populations;  // q planes of the whole grid, as stored
  std::vector<std::uint8_t> obstacles;
};
Grid whole_file(const fs::path& file) {
  const auto c = checkpoint::read(file);
  REQUIRE(c.meta.step == 180);
  Grid g;
  const auto* f = reinterpret_cast<const std::byte*>(c.blocks[0].data.get());
  g.populations.assign(f, f + c.blocks[0].spec.bytes());
  const auto* o = reinterpret_cast<const std::uint8_t*>(c.blocks[1].data.get());
  g.obstacles.assign(o, o + c.blocks[1].spec.bytes());
  return g;
}
Grid parts_files(const fs::path& dir, int n, const Case& kase) {
  const std::size_t w = kase.row_cells, h = kase.along, b = kase.population_bytes;
  Grid g;
  g.populations.assign(kase.q * w * h * b, std::byte{0xff});
  g.obstacles.assign(w * h, 255);
  for (int k = 0; k < n; ++k) {
    const auto rows = sim::slab_rows(kase.along, static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(n));
    const auto c = checkpoint::read(dir / ("part-" + std::to_string(k)) / checkpoint::file_name(180));
    INFO("part " << k << " of " << n);
    REQUIRE(c.meta.step == 180);
    REQUIRE(c.blocks[0].spec.shape.at(0) == kase.q);
    REQUIRE(c.blocks[0].spec.shape.at(1) == rows.count);
    REQUIRE(c.blocks[0].spec.bytes() == kase.q * rows.count * w * b);
    const auto* f = reinterpret_cast<const std::byte*>(c.blocks[0].data.get());
    for (std::size_t i = 0; i < kase.q; ++i)
      std::memcpy(&g.populations[(i * w * h + rows.first * w) * b], f + i * rows.count * w * b, rows.count * w * b);
    std::memcpy(&g.obstacles[rows.first * w], c.blocks[1].data.get(), rows.count * w);
  }
  return g;
}

/// The shared-memory segments part `k` of `name` listed in its runtime directory.
std::vector<std::string> segments_of_part(const std::string& name, std::uint32_t k) {
  std::ifstream in(InstancePaths(name, k).segments);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

void wait_exit(ChildProcess& p, const std::string& what) {
  const auto code = p.wait_for(60s);
  INFO(what << " output:\n" << p.out() << p.err());
  REQUIRE(code.has_value());
  REQUIRE(*code == 0);
}

void decomposed_equals_whole(Backend backend, const std::string& flow, const Case& kase = kPlane) {
  if (!have_mpirun()) return;
  RuntimeDir rt;
  std::vector<std::string> common{"--sim", kase.sim, "--paused", "--sim-option", "flow=" + flow, "--fps", "0"};
  for (const auto& o : kase.options) common.insert(common.end(), {"--sim-option", o});
  auto dir_of = [&](int n) { return rt.path() / ("ckpt-" + std::to_string(n)); };
  {
    auto args = common;
    args.insert(args.end(), {"--checkpoint-dir", dir_of(1).string()});
    auto d = start_daemon("one", backend, args, kase.size);
    auto c = Client::attach({.name = "one", .client = "test", .import = Import::control_only});
    steer(c, kase);
    c.shutdown();
    wait_exit(d, "cuview-compute");
  }
  const Grid whole = whole_file(dir_of(1) / checkpoint::file_name(180));
  // On CUDA one rank per GPU: 2, and 4 where a fourth GPU is there (31 layers: slabs of 8, 8, 8, 7).
  std::vector<int> ranks{2, 3};
  if (backend == Backend::cuda) ranks = cuda_usable(nullptr, 3) ? std::vector<int>{2, 4} : std::vector<int>{2};
  for (int n : ranks) {
    DYNAMIC_SECTION(kase.sim << ", mpirun -n " << n << ", flow=" << flow << (kase.options.empty() ? "" : ", ")
                             << (kase.options.empty() ? "" : kase.options[0])) {
      auto args = common;
      args.insert(args.end(), {"--checkpoint-dir", dir_of(n).string()});
      const std::string name = "parts" + std::to_string(n);
      auto run = start_parts(name, n, backend, args, kase.size);
      {
        auto c = Client::attach({.name = name, .client = "test", .import = Import::control_only, .part = 0});
        CHECK(c.description().part->count == static_cast<std::uint32_t>(n));
        steer(c, kase);
        c.shutdown();
      }
      wait_exit(run, "mpirun");
      const Grid parts = parts_files(dir_of(n), n, kase);
      CHECK(parts.obstacles == whole.obstacles);
      // Bit for bit: compared as bytes, so that even NaN payloads and signed zeros must agree.
      REQUIRE(parts.populations.size() == whole.populations.size());
      std::size_t first = 0, differ = 0;
      const std::size_t b = kase.population_bytes;
      for (std::size_t i = 0; i < whole.populations.size() / b; ++i)
        if (std::memcmp(&parts.populations[i * b], &whole.populations[i * b], b) != 0 && differ++ == 0) first = i;
      const std::size_t plane = std::size_t{kase.row_cells} * kase.along;
      INFO(differ << " populations differ; the first: direction " << first / plane << ", row or layer "
                  << first % plane / kase.row_cells << ", cell " << first % kase.row_cells << " of it");
      CHECK(std::memcmp(parts.populations.data(), whole.populations.data(), whole.populations.size()) == 0);
    }
  }
}


/// A PNG's width and height as its IHDR holds them (bytes 16–23), said "640x480"; or "not a PNG".
/// Two shots of views laid out alike have the same.
std::string size_of(const std::string& png) {
  if (png.size() < 24 || png.compare(1, 3, "PNG") != 0) return "not a PNG";
  const auto be32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(png[at + i]);
    return v;
  };
  return std::to_string(be32(16)) + "x" + std::to_string(be32(20));
}
}  // namespace

BACKEND_TEST("mpirun -n 2 and -n 3 runs equal the one-process run bit for bit, steering included", "[mpi]") {
  decomposed_equals_whole(backend, "channel");
}

TEST_CASE("a decomposed periodic channel equals the one-process run", "[mpi]") {
  decomposed_equals_whole(Backend::host, "periodic");
}

BACKEND_TEST("a 2-D flow stored as FP16S in row slabs equals the one-process run bit for bit", "[mpi]") {
  decomposed_equals_whole(backend, "channel", with_fp16s(kPlane));
}

BACKEND_TEST("a 3-D flow in z-slabs over mpirun -n 2 and -n 3 equals the one-process run bit for bit",
             "[mpi]") {
  decomposed_equals_whole(backend, "channel", kVolume);
}

BACKEND_TEST("a 3-D flow stored as FP16S in z-slabs equals the one-process run bit for bit, channel and periodic",
             "[mpi]") {
  decomposed_equals_whole(backend, "channel", with_fp16s(kVolume));
  decomposed_equals_whole(backend, "periodic", with_fp16s(kVolume));
}

TEST_CASE("a simulation that cannot be decomposed is refused by every rank with what to do", "[mpi]") {
  if (!have_mpirun()) return;
  RuntimeDir rt;
  ChildProcess run(mpirun_argv(2, bin("cuview-compute"), {"--name", "gs", "--backend", "host", "--sim", "grayscott"}),
                   -1, true);
  const auto code = run.wait_for(60s);
  REQUIRE(code.has_value());
  CHECK(*code != 0);
  CHECK_THAT(run.err(), Catch::Contains("--sim grayscott cannot run over several ranks") &&
                            Catch::Contains("lbm") && Catch::Contains("without mpirun"));
  CHECK(list_running_instances().empty());
}

TEST_CASE("a decomposed volume may be deeper than one process may hold; each part is held to the caps", "[mpi]") {
  if (!have_mpirun()) return;
  RuntimeDir rt;
  auto args = [](const std::string& name, const std::string& size) {
    return std::vector<std::string>{"--name", name, "--size", size, "--backend", "host", "--sim", "lbm3d", "--paused"};
  };
  // 4096 layers: too deep for one process, two parts of 2048 each.
  auto alone = args("one", "8x8x4096");
  alone.insert(alone.begin(), bin("cuview-compute"));
  ChildProcess one(alone, -1, true);
  REQUIRE(one.wait_for(60s).value_or(0) != 0);
  CHECK_THAT(one.err(), Catch::Contains("--size 8x8x4096 is out of range: each side of the grid must be 8 to 2048"));
  {
    auto run = start_parts("deep", 2, Backend::host, {"--sim", "lbm3d", "--paused", "--no-final-checkpoint"}, "8x8x4096");
    auto c = Client::attach({.name = "deep", .client = "test", .import = Import::control_only, .part = 0});
    CHECK(c.description().part->count == 2u);
    c.shutdown();
    wait_exit(run, "mpirun");
  }
  ChildProcess over(mpirun_argv(2, bin("cuview-compute"), args("over", "8x8x4098")), -1, true);
  REQUIRE(over.wait_for(60s).value_or(0) != 0);
  CHECK_THAT(over.err(), Catch::Contains("--size 8x8x4098 over 2 ranks is out of range: each side of each rank's "
                                         "part must be 8 to 2048 cells"));
  CHECK(list_running_instances().empty());
}

TEST_CASE("parts other than 0 answer what they show and send steering to part 0", "[mpi]") {
  if (!have_mpirun()) return;
  RuntimeDir rt;
  auto run = start_parts("steer", 2, Backend::host, {"--sim", "lbm", "--paused"});
  auto part1 = Client::attach({.name = "steer", .client = "test", .import = Import::control_only, .part = 1});
  const auto& d = part1.description();
  REQUIRE(d.part.has_value());
  CHECK(d.part->index == 1);
  CHECK(d.part->count == 2);
  CHECK(d.part->offset.at(0) == 32);
  CHECK(d.dims.at(0) == 32);
  CHECK(d.part->global_dims.at(0) == 64);
  CHECK(d.part->rank == 1);
  CHECK_THROWS_WITH(part1.set({{"viscosity", 0.1}}), Catch::Contains("part 1 of 'steer'") &&
                                                         Catch::Contains("steered through part 0"));
  auto part0 = Client::attach({.name = "steer", .client = "test", .import = Import::control_only, .part = 0});
  CHECK(part0.description().part->group == d.part->group);
  part0.set({{"viscosity", 0.1}});
  // Every rank applies it in the next turn; part 1's stats say so.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (part1.stats().params.at("viscosity") != 0.1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  CHECK(part1.stats().params.at("viscosity") == 0.1);
  CHECK(part1.stats().paused);
  CHECK_THROWS_WITH(Client::attach({.name = "steer", .client = "test", .import = Import::control_only}),
                    Catch::Contains("runs as 2 parts"));
  part0.shutdown();
  wait_exit(run, "mpirun");
}

TEST_CASE("a decomposed run restores with the rank count that wrote it and refuses another", "[mpi]") {
  if (!have_mpirun()) return;
  RuntimeDir rt;
  const std::string dir = (rt.path() / "ckpt").string();
  {
    auto run = start_parts("r", 3, Backend::host, {"--sim", "lbm", "--paused", "--checkpoint-dir", dir});
    auto c = Client::attach({.name = "r", .client = "test", .import = Import::control_only, .part = 0});
    step_to(c, 40, 40);
    c.shutdown();
    wait_exit(run, "mpirun");
  }
  {
    ChildProcess run(mpirun_argv(2, bin("cuview-compute"), {"--name", "r", "--backend", "host", "--sim", "lbm",
                                                            "--size", "96x64", "--checkpoint-dir", dir, "--restore",
                                                            "latest"}),
                     -1, true);
    const auto code = run.wait_for(60s);
    REQUIRE(code.has_value());
    CHECK(*code != 0);
    CHECK_THAT(run.err(), Catch::Contains("written by 3 ranks; this run has 2") && Catch::Contains("mpirun -n 3"));
  }
  auto run = start_parts("r", 3, Backend::host,
                         {"--sim", "lbm", "--paused", "--checkpoint-dir", dir, "--restore", "latest"});
  auto c = Client::attach({.name = "r", .client = "test", .import = Import::control_only, .part = 0});
  CHECK(c.stats().step == 40);
  auto part2 = Client::attach({.name = "r", .client = "test", .import = Import::control_only, .part = 2});
  CHECK(part2.stats().step == 40);
  c.shutdown();
  wait_exit(run, "mpirun");
}

TEST_CASE("killing one rank ends the run, and its other parts say which rank died", "[mpi]") {
  if (!have_mpirun()) return;
  RuntimeDir rt;
  auto run = start_parts("kill", 3, Backend::host, {"--sim", "lbm"});
  auto part0 = Client::attach({.name = "kill", .client = "test", .part = 0});
  auto part1 = Client::attach({.name = "kill", .client = "test", .import = Import::control_only, .part = 1});
  const pid_t victim = part1.hello().daemon_pid;
  const auto segments = segments_of_part("kill", 0);
  REQUIRE(!segments.empty());
  REQUIRE(::kill(victim, SIGKILL) == 0);
  const auto code = run.wait_for(20s);
  INFO("mpirun output:\n" << run.out() << run.err());
  REQUIRE(code.has_value());
  CHECK(*code != 0);
  CHECK_THAT(run.err(), Catch::Contains("rank 1 (pid " + std::to_string(victim)) && Catch::Contains("died"));
  CHECK(running_parts("kill") == 0);
  CHECK_THROWS_AS(part0.next_frame(2s), Error);
  for (const auto& s : segments) CHECK_FALSE(shm_exists(s));  // nothing left in /dev/shm
}

TEST_CASE("two CUDA ranks on one GPU are refused with what to do", "[mpi][gpu]") {
  if (!have_mpirun()) return;
  RuntimeDir rt;
  // Every rank is given GPU 0: NCCL needs distinct GPUs, and cuview says so before NCCL does.
  ChildProcess run(mpirun_argv(2, bin("cuview-compute"), {"--name", "one-gpu", "--backend", "cuda", "--sim", "lbm",
                                                          "--device", "0"}),
                   -1, true);
  const auto code = run.wait_for(60s);
  REQUIRE(code.has_value());
  CHECK(*code != 0);
  CHECK_THAT(run.err(), Catch::Contains("ranks 0 and 1 both run on") && Catch::Contains("one rank per GPU"));
}

// A program of its own split over ranks (examples/embed-mpi, cuview/mpi_parts.hpp): steering sent
// to part 0 reaches every rank in the same turn, and every part publishes the same steps.
TEST_CASE("embed-mpi: part 0's steering reaches every rank at one step and the parts publish the same steps", "[mpi]") {
  if (!have_mpirun()) return;
  if (!fs::exists(bin("embed-mpi"))) {
    WARN("bin/embed-mpi was not built (no MPI development files): cuview/mpi_parts.hpp is not tested here");
    return;
  }
  RuntimeDir rt;
  auto run = start_program_parts("emb", 2, "embed-mpi", {"--name", "emb", "--size", "96x64"});
  auto part0 = Client::attach({.name = "emb", .client = "test", .import = Import::control_only, .part = 0});
  auto part1 = Client::attach({.name = "emb", .client = "test", .import = Import::control_only, .part = 1});
  const auto d1 = part1.description();
  REQUIRE(d1.part.has_value());
  CHECK(d1.part->offset.at(0) == 32);
  CHECK(d1.part->global_dims.at(0) == 64);
  CHECK(d1.part->group.size() == 16);
  CHECK(part0.description().part->group == d1.part->group);
  const auto until = [](auto done) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!done() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(20ms);
    return done();
  };

  // Pause and a parameter reach part 1 through the turn; both parts stop at one step.
  part0.pause();
  REQUIRE(until([&] { return part1.stats().paused; }));
  part0.set({{"diffusivity", 0.1}});
  REQUIRE(until([&] { return part1.stats().params.at("diffusivity") == 0.1; }));
  const std::uint64_t step = part0.stats().step;
  CHECK(part1.stats().step == step);
  CHECK_THROWS_WITH(part1.set({{"diffusivity", 0.05}}), Catch::Contains("steered through part 0"));

  // Readers of both parts get the paused step; a stroke in part 1's rows (global y = 50) drawn
  // through part 0 shows there at once; `step 8` moves both parts to one step.
  auto reader0 = Client::attach({.name = "emb", .client = "test reader", .part = 0});
  auto reader1 = Client::attach({.name = "emb", .client = "test reader", .part = 1});
  const auto hot = [](const Frame& f) { return f.host_field(0)[(50 - 32) * 96 + 10] == 1.0f; };
  {
    auto f0 = reader0.next_frame(5s), f1 = reader1.next_frame(5s);
    REQUIRE((f0 && f1));
    CHECK(f0->info().step == step);
    CHECK(f1->info().step == step);
    CHECK(!hot(*f1));
  }
  part0.draw({"heat", 10.5, 50.5, 2, 1});
  CHECK(until([&] {
    auto f = reader1.next_frame(100ms);
    return f && hot(*f);
  }));
  part0.step(8);
  for (Client* reader : {&reader0, &reader1})
    CHECK(until([&] {
      auto f = reader->next_frame(100ms);
      return f && f->info().step == step + 8;
    }));

  // Running with readers of both parts: intact frames; paused again, both show the same step.
  part0.resume();
  std::uint64_t newest[2] = {0, 0};
  for (int i = 0; i < 10; ++i)
    for (int k : {0, 1}) {
      auto f = (k == 0 ? reader0 : reader1).next_frame(5s);
      REQUIRE(f);
      CHECK(f->info().step >= step + 8);  // the first may be the paused step's, published again
      CHECK(!f->verify());
      newest[k] = f->info().step;
    }
  CHECK(newest[0] > step + 8);
  CHECK(newest[1] > step + 8);
  part0.pause();
  REQUIRE(until([&] { return part1.stats().paused; }));
  const std::uint64_t paused_at = part0.stats().step;
  CHECK(part1.stats().step == paused_at);
  for (Client* reader : {&reader0, &reader1})
    CHECK(until([&] {
      auto f = reader->next_frame(100ms);
      return f && f->info().step == paused_at;
    }));
  CHECK(part1.stats().frames_published > 0);
  part0.shutdown();
  wait_exit(run, "mpirun -n 2 embed-mpi");
}

TEST_CASE("the viewer in a real window draws a 2-rank flow as the 1-process run, pixel for pixel", "[mpi][window]") {
  if (!have_mpirun()) return;
  const char* xvfb_run = "/usr/bin/xvfb-run";
  if (::access(xvfb_run, X_OK) != 0 || !fs::exists(bin("cuview-gui"))) {
    WARN("xvfb-run or cuview-gui is missing: the real-window comparison is not run here");
    return;
  }
  RuntimeDir rt;
  const std::vector<std::string> args{"--sim", "lbm", "--paused", "--fps", "0"};
  auto one = start_daemon("one", Backend::host, args, "240x96");
  auto two = start_parts("two", 2, Backend::host, args, "240x96");
  auto c1 = Client::attach({.name = "one", .client = "test", .import = Import::control_only});
  auto c2 = Client::attach({.name = "two", .client = "test", .import = Import::control_only, .part = 0});
  step_to(c1, 300, 300);
  step_to(c2, 300, 300);
  ::setenv("QT_QPA_PLATFORM", "xcb", 1);
  auto grab = [&](const std::string& name) {
    const fs::path png = rt.path() / (name + ".png");
    ChildProcess gui({xvfb_run, "-a", "-s", "-screen 0 1200x800x24", bin("cuview-gui"), "--name", name,
                      "--screenshot", png.string(), "--frames", "1"},
                     -1, true);
    const auto code = gui.wait_for(60s);
    INFO("cuview-gui --name " << name << ":\n" << gui.out() << gui.err());
    REQUIRE(code.has_value());
    REQUIRE(*code == 0);
    std::ifstream in(png, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  // Compared when the two views were laid out alike (the status rows wrap with their texts).
  std::string whole, parts;
  for (int attempt = 0; attempt < 5; ++attempt) {
    whole = grab("one"), parts = grab("two");
    if (size_of(whole) == size_of(parts)) break;
  }
  ::unsetenv("QT_QPA_PLATFORM");
  REQUIRE(whole.size() > 1000);
  REQUIRE(size_of(whole) == size_of(parts));
  // The same picture, encoded the same way: no seam at the border between the ranks' rows, no
  // row drawn twice or lost.
  CHECK(parts == whole);
}

TEST_CASE("the volume view of a 2-rank 3-D flow is the 1-process run's, pixel for pixel, in every mode",
          "[mpi][window]") {
  if (!have_mpirun()) return;
  const char* xvfb_run = "/usr/bin/xvfb-run";
  if (::access(xvfb_run, X_OK) != 0 || !fs::exists(bin("cuview-gui"))) {
    WARN("xvfb-run or cuview-gui is missing: the real-window comparison is not run here");
    return;
  }
  RuntimeDir rt;
  const std::vector<std::string> args{"--sim", "lbm3d", "--paused", "--fps", "0"};
  auto one = start_daemon("one3", Backend::host, args, "48x32x32");
  auto two = start_parts("two3", 2, Backend::host, args, "48x32x32");
  auto c1 = Client::attach({.name = "one3", .client = "test", .import = Import::control_only});
  auto c2 = Client::attach({.name = "two3", .client = "test", .import = Import::control_only, .part = 0});
  step_to(c1, 200, 200);
  step_to(c2, 200, 200);
  ::setenv("QT_QPA_PLATFORM", "xcb", 1);
  std::map<std::string, std::string> said;  // what each viewer said when it saved its shot
  auto grab = [&](const std::string& name, const std::vector<std::string>& view) {
    const fs::path png = rt.path() / (name + ".png");
    std::vector<std::string> argv{xvfb_run, "-a", "-s", "-screen 0 1200x800x24", bin("cuview-gui"), "--name", name,
                                  "--screenshot", png.string(), "--frames", "1", "--field", "speed",
                                  "--camera", "35,25"};
    argv.insert(argv.end(), view.begin(), view.end());
    // The shot is of the viewer's own brick. Once the camera has rested 150 ms the viewer shows the
    // run's own picture instead (each part's cast, composited: the same picture within rounding,
    // not byte for byte); where that came first (a loaded machine), the shot is taken again.
    for (int attempt = 0; attempt < 5; ++attempt) {
      ChildProcess gui(argv, -1, true);
      const auto code = gui.wait_for(60s);
      INFO("cuview-gui --name " << name << ":\n" << gui.out() << gui.err());
      REQUIRE(code.has_value());
      REQUIRE(*code == 0);
      if (gui.err().find("cast by the run") != std::string::npos) continue;
      said[name] = gui.err();
      std::ifstream in(png, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(in), {});
    }
    FAIL("cuview-gui --name " << name << " showed the run's picture before its brick's, 5 times");
    return std::string();
  };
  // Each part's cells fill one brick of the whole grid; the rays are cast once over it, so no
  // compositing of separately rendered blocks (and no seam at the ranks' border) is needed. With a
  // brick of 16 cells (every 3rd), the whole run writes only those cells (Client::read_every) and
  // the parts write whole frames: the same picture.
  for (const auto& view : std::vector<std::vector<std::string>>{
           {"--volume", "mip"}, {"--volume", "emission", "--opacity", "peak"}, {"--volume", "isosurface", "--level", "0.03"},
           {"--volume", "emission", "--opacity", "peak", "--brick", "16"}}) {
    INFO(view[1] << " " << view.back());
    // The window's status rows wrap with their texts' lengths (timings among them), so the view's
    // height may differ by a row between two windows: the shots are compared when the two views
    // were laid out alike (the PNG header's width and height), taken again otherwise.
      std::string whole, parts;
    for (int attempt = 0; attempt < 5; ++attempt) {
      whole = grab("one3", view), parts = grab("two3", view);
      if (size_of(whole) == size_of(parts)) break;
    }
    REQUIRE(whole.size() > 1000);
    INFO("one3: " << said["one3"] << "two3: " << said["two3"]);
    REQUIRE(size_of(whole) == size_of(parts));
    CHECK(parts == whole);
  }
  ::unsetenv("QT_QPA_PLATFORM");
}
