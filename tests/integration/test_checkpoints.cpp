// Checkpoints as a user meets them: a run continued from a checkpoint gives the same bits as one
// that never stopped (every simulation, both backends); damaged, truncated and mismatched files
// are refused naming the file and the problem, with nothing started; a daemon killed while it
// writes always leaves a checkpoint that loads.
#include <hdf5.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <thread>

#include "backend_test.hpp"
#include "cuview/client.hpp"
#include "cuview/runtime_dir.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {
/// The fields (and particle attributes) of the frame of `step`: the slot up to its trailer.
std::vector<std::byte> state_at(const std::string& name, std::uint64_t step) {
  auto c = attach(name);
  const auto& d = c.description();
  for (int tries = 0; tries < 400; ++tries) {
    auto f = c.next_frame(10s);
    REQUIRE(f);
    if (f->info().step != step) continue;
    REQUIRE_FALSE(f->verify());
    std::vector<std::byte> slot(d.slot_bytes);
    f->copy_to_host(slot);
    slot.resize(d.trailer_offset);
    return slot;
  }
  FAIL("no frame of step " << step << " from '" << name << "'");
  return {};
}

void step_to(const std::string& name, std::uint64_t from, std::uint64_t to) {
  REQUIRE(ctl(name, {"step", std::to_string(to - from)}).code == 0);
  (void)wait_stats(name, [&](const StatsView& s) { return s.step == to; });
}

/// What each simulation is run with, and a steering action taken halfway (a parameter, a stroke).
struct Case {
  std::string sim, size;
  std::vector<std::string> args;
  std::vector<std::string> steer;  // a cuview-ctl command
};
const Case kCases[] = {
    {"grayscott", "64x48", {"--sim", "grayscott"}, {"set", "F=0.05"}},
    {"lbm", "96x40", {"--sim", "lbm"}, {"draw", "obstacles", "60", "20", "--radius", "4"}},
    {"lbm-fp16s",
     "96x40",
     {"--sim", "lbm", "--sim-option", "storage=fp16s"},
     {"draw", "obstacles", "60", "20", "--radius", "4"}},
    {"nbody", "64x64", {"--sim", "nbody", "--sim-option", "bodies=700"}, {"draw", "bodies", "20", "20"}},
    {"grayscott3d", "24x16x12", {"--sim", "grayscott3d"}, {"set", "F=0.05"}},
    {"lbm3d", "48x20x16", {"--sim", "lbm3d"}, {"draw", "obstacles", "30", "10", "8", "--radius", "3"}},
    {"lbm3d-fp16s",
     "48x20x16",
     {"--sim", "lbm3d", "--sim-option", "storage=fp16s"},
     {"draw", "obstacles", "30", "10", "8", "--radius", "3"}},
};

/// Runs cuview-compute to its end (a refusal), returning its exit code and stderr.
std::pair<int, std::string> refused(std::vector<std::string> args) {
  args.insert(args.begin(), bin("cuview-compute"));
  ChildProcess p(args);
  const auto code = p.wait_for(60s);
  REQUIRE(code);
  return {*code, p.err()};
}
}  // namespace

BACKEND_TEST("a run continued from a checkpoint equals the run that never stopped, bit for bit",
             "[integration][checkpoint]") {
  RuntimeDir rt;
  for (const auto& c : kCases) {
    SECTION(c.sim) {
      constexpr std::uint64_t kHalf = 20;
      auto args = c.args;
      args.push_back("--paused");
      // Straight through: half, steer, half.
      std::vector<std::byte> straight;
      {
        auto a = start_daemon("straight", backend, args, c.size);
        step_to("straight", 0, kHalf);
        REQUIRE(ctl("straight", c.steer).code == 0);
        step_to("straight", kHalf, 2 * kHalf);
        straight = state_at("straight", 2 * kHalf);
        a.signal(SIGKILL);
      }
      // Half, steer, checkpoint, stop; a new daemon restores it and does the other half.
      const fs::path file = rt.path() / (c.sim + ".h5");
      {
        auto b = start_daemon("split", backend, args, c.size);
        step_to("split", 0, kHalf);
        REQUIRE(ctl("split", c.steer).code == 0);
        const auto r = ctl("split", {"checkpoint", file.string()});
        INFO(r.out << r.err);
        REQUIRE(r.code == 0);
        CHECK_THAT(r.out, Catch::Contains("step 20 written to " + file.string()));
        b.signal(SIGTERM);
        REQUIRE(b.wait_for(30s) == 0);
      }
      auto restore = args;
      restore.insert(restore.end(), {"--restore", file.string()});
      auto b2 = start_daemon("split", backend, restore, c.size);
      const auto s = stats("split");
      CHECK(s.step == kHalf);
      if (c.sim == "grayscott") CHECK(s.params.at("F") == Approx(0.05));
      step_to("split", kHalf, 2 * kHalf);
      const auto continued = state_at("split", 2 * kHalf);
      REQUIRE(continued.size() == straight.size());
      CHECK(std::memcmp(continued.data(), straight.data(), straight.size()) == 0);
    }
  }
}

TEST_CASE("a SIGTERM writes a final checkpoint that --restore latest resumes from", "[integration][checkpoint]") {
  RuntimeDir rt;
  const fs::path dir = rt.path() / "ckpt";
  {
    auto d =
        start_daemon("fin", Backend::host, {"--sim", "lbm", "--paused", "--checkpoint-dir", dir.string()}, "64x32");
    step_to("fin", 0, 33);
    d.signal(SIGTERM);
    REQUIRE(d.wait_for(30s) == 0);
    CHECK_THAT(d.err(), Catch::Contains("final checkpoint: " + (dir / "step-000000000033.h5").string()));
  }
  auto d = start_daemon("fin", Backend::host,
                        {"--sim", "lbm", "--paused", "--checkpoint-dir", dir.string(), "--restore", "latest"}, "64x32");
  CHECK(stats("fin").step == 33);
  // The default directory is per instance under XDG_STATE_HOME.
  {
    auto e = start_daemon("dflt", Backend::host, {"--paused"}, "32x32");
    step_to("dflt", 0, 5);
    REQUIRE(ctl("dflt", {"shutdown"}).code == 0);
    REQUIRE(e.wait_for(30s) == 0);
  }
  CHECK(fs::exists(rt.path() / "state" / "cuview" / "dflt" / "step-000000000005.h5"));
  // --no-final-checkpoint skips it; a program with nothing to save refuses the request.
  {
    auto e = start_daemon("nofin", Backend::host, {"--paused", "--no-final-checkpoint"}, "32x32");
    e.signal(SIGTERM);
    REQUIRE(e.wait_for(30s) == 0);
  }
  CHECK_FALSE(fs::exists(rt.path() / "state" / "cuview" / "nofin" / "step-000000000000.h5"));
  auto w = start_embed_wave("wave", Backend::host);
  const auto r = ctl("wave", {"checkpoint"});
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Catch::Contains("does not write checkpoints") && Catch::Contains("[unsupported]"));
  const auto here = fs::absolute("cuview-test-relative.h5");  // ctl makes a relative path absolute
  const auto rel = ctl("fin", {"checkpoint", "cuview-test-relative.h5"});
  CHECK(rel.code == 0);
  CHECK(fs::exists(here));
  fs::remove(here);
}

TEST_CASE("damaged, truncated and mismatched checkpoints are refused, naming the file and the problem",
          "[integration][checkpoint]") {
  RuntimeDir rt;
  const fs::path dir = rt.path() / "ckpt";
  const std::vector<std::string> lbm = {"--name", "r", "--backend", "host", "--sim", "lbm", "--size", "64x32"};
  {
    auto d = start_daemon("w", Backend::host, {"--sim", "lbm", "--paused", "--checkpoint-dir", dir.string()}, "64x32");
    step_to("w", 0, 10);
    REQUIRE(ctl("w", {"checkpoint"}).code == 0);
    step_to("w", 10, 20);
    REQUIRE(ctl("w", {"checkpoint"}).code == 0);
    d.signal(SIGKILL);
  }
  const fs::path good = dir / "step-000000000010.h5", newest = dir / "step-000000000020.h5";
  REQUIRE(fs::exists(good));
  REQUIRE(fs::exists(newest));
  auto with = [&](std::vector<std::string> extra) {
    auto args = lbm;
    args.insert(args.end(), extra.begin(), extra.end());
    return refused(args);
  };
  auto copy = [&](const std::string& name) {
    const fs::path p = rt.path() / name;
    fs::copy_file(good, p, fs::copy_options::overwrite_existing);
    return p;
  };
  SECTION("truncated") {
    const auto p = copy("truncated.h5");
    fs::resize_file(p, fs::file_size(p) / 2);
    const auto [code, err] = with({"--restore", p.string()});
    CHECK(code == 1);
    CHECK_THAT(err, Catch::Contains("checkpoint " + p.string() + " is damaged") && Catch::Contains("truncated"));
  }
  SECTION("a flipped bit in the state") {
    const auto p = copy("flipped.h5");
    {
      std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(static_cast<std::streamoff>(fs::file_size(p) / 2));
      char b = 0;
      f.read(&b, 1);
      f.seekp(static_cast<std::streamoff>(fs::file_size(p) / 2));
      b = static_cast<char>(b ^ 0x10);
      f.write(&b, 1);
    }
    const auto [code, err] = with({"--restore", p.string()});
    CHECK(code == 1);
    CHECK_THAT(err, Catch::Contains(p.string()) && Catch::Contains("'populations' does not match its checksum"));
  }
  SECTION("altered metadata") {
    const auto p = copy("altered.h5");
    {
      const hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
      REQUIRE(f >= 0);
      const hid_t g = H5Gopen2(f, "checkpoint", H5P_DEFAULT);
      const hid_t a = H5Aopen(g, "step", H5P_DEFAULT);
      const std::uint64_t step = 999;
      REQUIRE(H5Awrite(a, H5T_NATIVE_UINT64, &step) >= 0);
      H5Aclose(a), H5Gclose(g), H5Fclose(f);
    }
    const auto [code, err] = with({"--restore", p.string()});
    CHECK(code == 1);
    CHECK_THAT(err, Catch::Contains(p.string()) && Catch::Contains("metadata") && Catch::Contains("checksum"));
  }
  SECTION("not a checkpoint, or missing") {
    const fs::path p = rt.path() / "text.h5";
    std::ofstream(p) << "not hdf5\n";
    auto [code, err] = with({"--restore", p.string()});
    CHECK(code == 1);
    CHECK_THAT(err, Catch::Contains(p.string()) && Catch::Contains("not an HDF5 file"));
    std::tie(code, err) = with({"--restore", (rt.path() / "nothing.h5").string()});
    CHECK(code == 1);
    CHECK_THAT(err, Catch::Contains("nothing.h5 does not exist"));
    std::tie(code, err) = with({"--restore", "latest", "--checkpoint-dir", (rt.path() / "empty").string()});
    CHECK(code == 1);
    CHECK_THAT(err, Catch::Contains("no usable checkpoint in"));
  }
  SECTION("another simulation, grid or option") {
    auto [code, err] = refused({"--name", "r", "--backend", "host", "--size", "64x32", "--restore", good.string()});
    CHECK(code == 1);
    CHECK_THAT(err, Catch::Contains("checkpoint of simulation 'lbm', not 'grayscott'; start with --sim lbm"));
    std::tie(code, err) =
        refused({"--name", "r", "--backend", "host", "--sim", "lbm", "--size", "64x40", "--restore", good.string()});
    CHECK(code == 1);
    CHECK_THAT(err, Catch::Contains(good.string()) && Catch::Contains("written for a 64x32 grid, not 64x40"));
    std::tie(code, err) = with({"--sim-option", "flow=periodic", "--restore", good.string()});
    CHECK(code == 1);
    CHECK_THAT(err, Catch::Contains("simulation options"));
  }
  SECTION("latest skips a damaged newest checkpoint, saying so") {
    fs::resize_file(newest, fs::file_size(newest) - 1000);
    auto d =
        start_daemon("r", Backend::host,
                     {"--sim", "lbm", "--paused", "--checkpoint-dir", dir.string(), "--restore", "latest"}, "64x32");
    CHECK(stats("r").step == 10);
    d.signal(SIGTERM);
    REQUIRE(d.wait_for(30s));
    CHECK_THAT(d.err(), Catch::Contains("skipping checkpoint " + newest.string() + " is damaged"));
  }
  // Nothing was half-started: no instance is left behind by the refusals.
  CHECK(list_running_instances().empty());
}

TEST_CASE("a 3-D flow's checkpoint says which storage it holds, and a run of the other storage is refused by name",
          "[integration][checkpoint]") {
  RuntimeDir rt;
  const fs::path file = rt.path() / "fp16s.h5";
  {
    auto d = start_daemon("w", Backend::host, {"--sim", "lbm3d", "--paused", "--sim-option", "storage=fp16s"},
                          "24x12x10");
    step_to("w", 0, 10);
    REQUIRE(ctl("w", {"checkpoint", file.string()}).code == 0);
    d.signal(SIGKILL);
  }
  const auto [code, err] = refused({"--name", "r", "--backend", "host", "--sim", "lbm3d", "--size", "24x12x10",
                                    "--restore", file.string()});
  CHECK(code == 1);
  CHECK_THAT(err, Catch::Contains(file.string()) && Catch::Contains("storage=fp16s") &&
                      Catch::Contains("start with the same --sim-option values"));
  ChildProcess verify({bin("cuview-compute"), "--verify-checkpoint", file.string()});
  REQUIRE(verify.wait_for(60s) == 0);
  CHECK_THAT(verify.out(), Catch::Contains("storage=fp16s") && Catch::Contains("state populations: float16"));
}

TEST_CASE("a daemon killed at random moments while it writes checkpoints always leaves one that loads",
          "[integration][checkpoint][kill]") {
  RuntimeDir rt;
  const fs::path dir = rt.path() / "ckpt";
  std::mt19937 rng(20261122);
  std::uniform_int_distribution<int> delay_ms(30, 300);
  std::uint64_t newest_step = 0;
  int writes_seen = 0;
  for (int kill = 0; kill < 50; ++kill) {
    // 512² Gray–Scott: 2 MiB of state, a write after every batch of steps (20 ms period).
    std::vector<std::string> args = {
        "--checkpoint-dir", dir.string(), "--checkpoint-every", "20ms", "--keep", "3", "--fps", "10"};
    if (kill > 0) args.insert(args.end(), {"--restore", "latest"});
    auto d = start_daemon("k", Backend::host, args, "512x512");
    if (kill > 0) {
      INFO("kill " << kill << ": " << d.err());
      // The newest complete checkpoint, never a torn one.
      CHECK_THAT(d.err(), Catch::Contains("restored step " + std::to_string(newest_step) + " "));
      CHECK_THAT(d.err(), !Catch::Contains("skipping"));
    } else {
      for (int i = 0; i < 500 && !fs::exists(dir / "step-000000000016.h5"); ++i) std::this_thread::sleep_for(10ms);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    d.signal(SIGKILL);
    REQUIRE(d.wait_for(10s));
    const auto files = [&] {
      std::vector<fs::path> v;
      for (const auto& e : fs::directory_iterator(dir))
        if (std::regex_match(e.path().filename().string(), std::regex(R"(step-\d+\.h5)"))) v.push_back(e.path());
      std::sort(v.begin(), v.end());
      return v;
    }();
    REQUIRE_FALSE(files.empty());
    const auto verified = refused({"--verify-checkpoint", files.back().string()});
    INFO(verified.second);
    REQUIRE(verified.first == 0);
    newest_step = std::stoull(files.back().filename().string().substr(5, 12));
    for (const auto& e : fs::directory_iterator(dir))
      writes_seen += e.path().filename().string().find(".tmp-") != std::string::npos;
  }
  std::printf("checkpoint kill campaign: 50 SIGKILLs, %d caught a write in progress, every newest checkpoint loaded\n",
              writes_seen);
  INFO("kills that caught a write in progress: " << writes_seen);
  CHECK(writes_seen > 0);  // the campaign did kill daemons mid-write
}
