// A publisher decomposed into parts (an MPI run, played here by embedded publishers in threads
// of this process): cuview::Group attaches every part, hands out frames of one step from all of
// them, never a torn group, places each block where its part says, and names the part that went.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#ifdef CUVIEW_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "backend_test.hpp"
#include "cuview/client.hpp"
#include "cuview/publisher.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {
constexpr std::uint32_t kWidth = 40, kHeight = 50;  // 50 rows split unevenly over 3 parts

/// What every cell shows at a step: its global row and column, and the step.
float value(std::uint32_t row, std::uint32_t col, std::uint64_t step) {
  return static_cast<float>(row * 1000 + col + step);
}

struct RunOptions {
  std::uint32_t parts = 2;
  std::uint32_t slots = 3;
  double max_fps = 0;
  double max_cost = 1;  ///< no budget: every step can be a frame (the budget's own tests are in test_embedded)
  std::vector<std::string> groups{};  ///< per part; empty: one id for all
  bool threads = true;              ///< publish continuously from one thread per part
  /// Per part: the XDG_RUNTIME_DIR it publishes in (two "hosts" on one machine); empty: the test's.
  std::vector<std::filesystem::path> runtime_dirs{};
  std::string backend = "host";  ///< "cuda": the same host buffers, published into device slots
};

/// The parts of one run: part k owns rows [k·H/N, (k+1)·H/N) of a kWidth × kHeight grid, a field
/// "u" whose cells are value(row, col, step). With `threads`, every part publishes steps 1, 2, …
/// from its own thread, the parts kept in lock step by a barrier as MPI ranks are by their halo
/// exchange; without, the test publishes each part's steps itself.
class MpiRun {
 public:
  MpiRun(const std::string& name, RunOptions o) : o_(std::move(o)), sync_(o_.parts, Stop{this}) {
    for (std::uint32_t k = 0; k < o_.parts; ++k) {
      const std::uint32_t y0 = k * kHeight / o_.parts, y1 = (k + 1) * kHeight / o_.parts;
      PartOptions p{.index = k,
                    .count = o_.parts,
                    .offset = {y0, 0},
                    .global_dims = {kHeight, kWidth},
                    .group = o_.groups.empty() ? "run-1" : o_.groups[k],
                    .rank = static_cast<int>(k),
                    .host = k % 2 == 0 ? "host-a" : "host-b"};
      const std::string home = std::getenv("XDG_RUNTIME_DIR");
      if (!o_.runtime_dirs.empty()) ::setenv("XDG_RUNTIME_DIR", o_.runtime_dirs[k].c_str(), 1);
      pubs_.push_back(std::make_unique<Publisher>(PublisherOptions{
          .name = name, .backend = o_.backend, .title = "rows", .slots = o_.slots, .max_fps = o_.max_fps, .max_cost = o_.max_cost, .part = p}));
      rows_.push_back({y0, y1});
      data_.emplace_back(std::size_t{kWidth} * (y1 - y0));
      pubs_[k]->add_field({"u", data_[k].data(), data_[k].size() * sizeof(float), {y1 - y0, kWidth}, DType::float32, 1,
                           Memory::host, "row * 1000 + col + step"});
      pubs_[k]->add_param({"gain", 1, 0, 10, false, "a parameter to steer"});
      pubs_[k]->start();
      ::setenv("XDG_RUNTIME_DIR", home.c_str(), 1);
    }
    if (o_.threads)
      for (std::uint32_t k = 0; k < o_.parts; ++k) threads_.emplace_back([this, k] { loop(k); });
  }
  ~MpiRun() { stop(); }

  /// Ends the publishing threads (the publishers stay until the MpiRun goes).
  void stop() {
    stop_ = true;
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  /// Publishes `step` from part k (an MpiRun without threads).
  bool publish(std::uint32_t k, std::uint64_t step) {
    fill(k, step);
    return pubs_[k]->publish(step, static_cast<double>(step) / 10);
  }
  Publisher& part(std::uint32_t k) { return *pubs_[k]; }
  [[nodiscard]] std::pair<std::uint32_t, std::uint32_t> rows(std::uint32_t k) const { return rows_[k]; }

 private:
  /// Runs between phases, before any part goes on: every part reads the same decisions.
  struct Stop {
    MpiRun* run;
    void operator()() noexcept {
      run->stopping_ = run->stop_.load();
      const bool over = run->over_budget_.exchange(false);
      run->publish_now_ = run->want_.exchange(false) && !over;
    }
  };

  void fill(std::uint32_t k, std::uint64_t step) {
    auto& d = data_[k];
    for (std::uint32_t r = rows_[k].first; r < rows_[k].second; ++r)
      for (std::uint32_t c = 0; c < kWidth; ++c) d[std::size_t{r - rows_[k].first} * kWidth + c] = value(r, c, step);
  }

  /// As an MPI program does: the parts agree whether to publish this step (any part wanting a
  /// frame), so that all publish the same steps whatever each one's clock says; the other steps
  /// are recorded for `stats`. Publishing every step (max_fps 0) they publish every step anyway.
  void loop(std::uint32_t k) {
    for (std::uint64_t step = 1;; ++step) {
      if (pubs_[k]->frame_wanted()) want_ = true;
      if (!pubs_[k]->within_budget()) over_budget_ = true;
      sync_.arrive_and_wait();
      if (stopping_) return;
      if (publish_now_) {
        pubs_[k]->publish_next_now();
        publish(k, step);
      } else if (o_.max_fps > 0) {
        pubs_[k]->record_step(step, static_cast<double>(step) / 10);
      } else {
        publish(k, step);
      }
    }
  }

  RunOptions o_;
  std::vector<std::unique_ptr<Publisher>> pubs_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> rows_;
  std::vector<std::vector<float>> data_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> want_{false}, over_budget_{false};
  bool stopping_ = false, publish_now_ = false;
  std::barrier<Stop> sync_;
  std::vector<std::thread> threads_;
};

/// The message of the cuview::Error that `f` throws, and its code (fails the test when none).
template <class F>
std::pair<std::string, Errc> error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.what(), e.code()};
  }
  FAIL("no cuview::Error was thrown");
  return {};
}

/// Fails the check unless every cell of `g`'s global field is value(row, col, g.step()).
void check_assembled(const FrameGroup& g) {
  std::vector<float> global(std::size_t{kWidth} * kHeight, -1.0f);
  g.copy_field_to_host(0, std::as_writable_bytes(std::span(global)));
  std::size_t wrong = 0;
  for (std::uint32_t r = 0; r < kHeight; ++r)
    for (std::uint32_t c = 0; c < kWidth; ++c) wrong += global[std::size_t{r} * kWidth + c] != value(r, c, g.step());
  INFO("group of step " << g.step());
  CHECK(wrong == 0);
}

AttachOptions options(const std::string& name, Import import = Import::frames) {
  return AttachOptions{.name = name, .client = "group test", .import = import};
}
}  // namespace

TEST_CASE("a group attaches every part and places each block where its part says", "[integration][group][host]") {
  const std::uint32_t n = GENERATE(2u, 3u);
  RuntimeDir rt;
  MpiRun run("flow", {.parts = n});
  auto g = Group::attach(options("flow"));
  REQUIRE(g.decomposed());
  REQUIRE(g.size() == n);
  CHECK(g.extent().dims == Axes{kHeight, kWidth});
  CHECK(g.group_id() == "run-1");
  for (std::uint32_t k = 0; k < n; ++k) {
    const auto& p = g.part_desc(k);
    CHECK(p.index == k);
    CHECK(p.count == n);
    CHECK(p.offset == Axes{run.rows(k).first, 0});
    CHECK(p.rank == static_cast<int>(k));
    CHECK(g.part(k).description().dims == Axes{run.rows(k).second - run.rows(k).first, kWidth});
    // As a block of the global grid: rows first, then columns.
    CHECK(g.block(k) == Block{{run.rows(k).first, 0}, {run.rows(k).second - run.rows(k).first, kWidth}});
  }
  CHECK(g.extent() == Extent{{kHeight, kWidth}, 1});
  CHECK(&g.leader() == &g.part(0));
  CHECK(error_of([&] { (void)g.part_desc(n); }).second == Errc::out_of_range);
  auto f = g.next(10s);
  REQUIRE(f);
  REQUIRE(f->size() == n);
  for (std::uint32_t k = 0; k < n; ++k) CHECK(f->part(k).info().step == f->step());
  for (std::uint32_t k = 0; k < n; ++k) CHECK(f->block(k) == g.block(k));
  CHECK(f->extent() == g.extent());
  CHECK(f->verify() == std::nullopt);
  check_assembled(*f);
}

TEST_CASE("groups are never torn while the parts publish as fast as they can into two slots",
          "[integration][group][host]") {
  const std::uint32_t n = GENERATE(2u, 3u);
  RuntimeDir rt;
  MpiRun run("fast", {.parts = n, .slots = 2, .max_fps = 0});
  auto g = Group::attach(options("fast"));
  // Another reader holds a frame of part 0 throughout: that part writes into its one free slot.
  auto other = Client::attach(AttachOptions{.name = "fast", .client = "holder", .part = 0});
  auto held = other.next_frame(10s);
  REQUIRE(held);
  std::uint64_t last = 0, groups = 0;
  const auto until = std::chrono::steady_clock::now() + 60s;
  while (groups < 300 && std::chrono::steady_clock::now() < until) {
    auto f = g.next(5s);
    REQUIRE(f);
    CHECK(f->step() > last);
    last = f->step();
    for (std::uint32_t k = 0; k < n; ++k) REQUIRE(f->part(k).info().step == f->step());
    // Assembled while the writers go on: a block overwritten under the hold would show it.
    check_assembled(*f);
    if (groups % 16 == 0) std::this_thread::sleep_for(2ms);
    ++groups;
  }
  CHECK(groups == 300);
  REQUIRE(held->verify() == std::nullopt);  // the other reader's frame was never written either
}

TEST_CASE("a part that skipped a step makes the group take the newest step every part has",
          "[integration][group][host]") {
  RuntimeDir rt;
  MpiRun run("skip", {.parts = 2, .slots = 3, .threads = false});
  auto g = Group::attach(options("skip"));
  for (std::uint64_t step = 1; step <= 2; ++step)
    for (std::uint32_t k = 0; k < 2; ++k) REQUIRE(run.publish(k, step));
  REQUIRE(run.publish(0, 3));  // part 1 skips step 3 (its slots were held, say)
  auto f = g.next(5s);
  REQUIRE(f);
  CHECK(f->step() == 2);
  check_assembled(*f);
  f.reset();
  CHECK_FALSE(g.next(200ms));  // step 3 is not in part 1, and step 2 was handed out
  REQUIRE(run.publish(1, 3));
  f = g.next(5s);
  REQUIRE(f);
  CHECK(f->step() == 3);
  check_assembled(*f);
}

TEST_CASE("a part that goes away makes next() say which part, where it ran and why",
          "[integration][group][host]") {
  RuntimeDir rt;
  MpiRun run("gone", {.parts = 3, .threads = false});
  auto g = Group::attach(options("gone"));
  for (std::uint32_t k = 0; k < 3; ++k) REQUIRE(run.publish(k, 1));
  REQUIRE(g.next(5s));
  CHECK(g.alive());
  CHECK(g.gone_reason() == std::nullopt);
  // The group hears a part's goodbye on its notice socket, which takes a moment to connect (a
  // part that goes within milliseconds of the attach is reported without its reason).
  std::this_thread::sleep_for(200ms);
  run.part(1).close("rank 1 lost its GPU");
  const auto [message, code] = error_of([&] { (void)g.next(5s); });
  CHECK(code == Errc::daemon_gone);
  CHECK_THAT(message, Contains("part 1 of 'gone'") && Contains("rank 1") && Contains("host-b") &&
                          Contains("pid " + std::to_string(::getpid())) && Contains("shut down") &&
                          Contains("rank 1 lost its GPU"));
  CHECK_FALSE(g.alive());
  REQUIRE(g.gone_reason());
  CHECK_THAT(*g.gone_reason(), Contains("part 1 of 'gone'"));
}

TEST_CASE("a run is steered through part 0; the other parts refuse steering, naming part 0",
          "[integration][group][host]") {
  RuntimeDir rt;
  MpiRun run("steer", {.parts = 2, .threads = false});
  auto g = Group::attach(options("steer", Import::control_only));
  const auto [message, code] = error_of([&] { g.part(1).set({{"gain", 2}}); });
  CHECK(code == Errc::unsupported);
  CHECK_THAT(message, Contains("part 1 of 'steer'") && Contains("part 0") && Contains("cuview-ctl"));
  g.leader().set({{"gain", 2}});
  CHECK(run.part(0).poll().params.at("gain") == 2);
  CHECK(run.part(1).poll().params.empty());
  // Frames were not imported: next() says so.
  CHECK(error_of([&] { (void)g.next(10ms); }).second == Errc::not_attached);
}

TEST_CASE("parts of two runs are never combined into one group", "[integration][group][host]") {
  RuntimeDir rt;
  MpiRun run("mixed", {.parts = 3, .groups = {"run-a", "run-a", "run-b"}, .threads = false});
  auto o = options("mixed");
  o.timeout = 500ms;
  const auto start = std::chrono::steady_clock::now();
  const auto [message, code] = error_of([&] { (void)Group::attach(o); });
  CHECK(code == Errc::stale_session);
  CHECK_THAT(message, Contains("part 2 of 'mixed' is from another run") && Contains("run-b") && Contains("run-a"));
  CHECK(std::chrono::steady_clock::now() - start >= 400ms);  // retried until the timeout
}

TEST_CASE("a single client is told to attach to a decomposed name as a group, or to one part",
          "[integration][group][host]") {
  RuntimeDir rt;
  MpiRun run("whole", {.parts = 2, .threads = false});
  const auto [message, code] = error_of([] { (void)Client::attach(options("whole")); });
  CHECK(code == Errc::bad_value);
  CHECK_THAT(message, Contains("runs as 2 parts") && Contains("cuview::Group"));
  auto one = Client::attach(AttachOptions{.name = "whole", .client = "test", .part = 1});
  REQUIRE(one.description().part);
  CHECK(one.description().part->index == 1);
  CHECK(one.description().part->offset.at(0) == run.rows(1).first);
}

TEST_CASE("a group of a whole publisher is a group of one part", "[integration][group][host]") {
  RuntimeDir rt;
  std::vector<float> u(std::size_t{kWidth} * kHeight);
  Publisher pub({.name = "single", .backend = "host", .max_fps = 0});
  pub.add_field({"u", u.data(), u.size() * sizeof(float), {kHeight, kWidth}, DType::float32, 1, Memory::host, ""});
  pub.start();
  auto g = Group::attach(options("single"));
  CHECK_FALSE(g.decomposed());
  REQUIRE(g.size() == 1);
  CHECK(g.part_desc(0).global_dims == Axes{kHeight, kWidth});
  CHECK(g.part_desc(0).count == 1);
  for (std::uint32_t r = 0; r < kHeight; ++r)
    for (std::uint32_t c = 0; c < kWidth; ++c) u[std::size_t{r} * kWidth + c] = value(r, c, 7);
  REQUIRE(pub.publish(7));
  auto f = g.next(5s);
  REQUIRE(f);
  CHECK(f->step() == 7);
  check_assembled(*f);
  // Host memory has no GPU copy: the message says which copy to use.
  std::vector<float> out(u.size());
  const auto [message, code] = error_of([&] { f->copy_field_to_device(0, out.data(), out.size() * sizeof(float)); });
  CHECK(code == Errc::unsupported);
  CHECK_THAT(message, Contains("host backend") && Contains("copy_field_to_host"));
}

#ifdef CUVIEW_HAVE_CUDA
TEST_CASE("a CUDA run's fields copied into GPU memory are the bytes copied into host memory",
          "[integration][group][gpu]") {
  require_backend(Backend::cuda);
  RuntimeDir rt;
  auto daemon = start_daemon("flow", Backend::cuda, {"--sim", "lbm"}, "96x64");
  const auto run = open(OpenOptions{.name = "flow", .client = "group test"});
  auto f = run->next(10s);
  REQUIRE(f);
  for (std::size_t field = 0; field < run->leader().description().fields.size(); ++field) {
    const std::size_t bytes = f->global_field_bytes(field);
    std::vector<std::byte> host(bytes), back(bytes, std::byte{0x5a});
    f->copy_field_to_host(field, host);
    void* device = nullptr;
    REQUIRE(cudaMalloc(&device, bytes) == cudaSuccess);
    f->copy_field_to_device(field, device, bytes);
    REQUIRE(cudaMemcpy(back.data(), device, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
    cudaFree(device);
    INFO("field " << run->leader().description().fields[field].name);
    CHECK(back == host);
  }
  int current = -1;
  REQUIRE(cudaGetDevice(&current) == cudaSuccess);
  CHECK(current == 0);  // as the test left it
}
#endif

TEST_CASE("parts of a volume, split along depth, assemble into the volume", "[integration][group][host]") {
  RuntimeDir rt;
  constexpr std::uint32_t D = 5, H = 3, W = 4;
  auto value = [](std::uint32_t z, std::uint32_t y, std::uint32_t x) { return float(z * 100 + y * 10 + x); };
  const std::uint32_t split = 2;  // part 0: layers 0-1, part 1: layers 2-4
  std::vector<std::vector<float>> data(2);
  std::vector<std::unique_ptr<Publisher>> pubs;
  for (std::uint32_t k = 0; k < 2; ++k) {
    const std::uint32_t z0 = k == 0 ? 0 : split, depth = k == 0 ? split : D - split;
    for (std::uint32_t z = z0; z < z0 + depth; ++z)
      for (std::uint32_t y = 0; y < H; ++y)
        for (std::uint32_t x = 0; x < W; ++x) data[k].push_back(value(z, y, x));
    PartOptions p{.index = k, .count = 2, .group = "vol-1", .rank = static_cast<int>(k), .host = {}};
    p.offset = {z0, 0, 0};
    p.global_dims = {D, H, W};
    pubs.push_back(std::make_unique<Publisher>(
        PublisherOptions{.name = "vol", .backend = "host", .title = "slabs", .max_fps = 0, .part = p}));
    pubs[k]->add_field({"u", data[k].data(), data[k].size() * 4, {depth, H, W}, DType::float32, 1, Memory::host, ""});
    pubs[k]->start();
  }
  const auto run = open(OpenOptions{.name = "vol", .client = "group test"});
  REQUIRE(run->decomposed());
  CHECK(run->extent() == Extent{{D, H, W}});
  CHECK(run->block(1) == Block{{split, 0, 0}, {D - split, H, W}});
  for (auto& p : pubs) REQUIRE(p->publish(9));
  auto f = run->next(5s);
  REQUIRE(f);
  std::vector<float> volume(D * H * W, -1.0f);
  f->copy_field_to_host(0, std::as_writable_bytes(std::span(volume)));
  std::size_t wrong = 0;
  for (std::uint32_t z = 0; z < D; ++z)
    for (std::uint32_t y = 0; y < H; ++y)
      for (std::uint32_t x = 0; x < W; ++x) wrong += volume[(std::size_t{z} * H + y) * W + x] != value(z, y, x);
  CHECK(wrong == 0);
  // A block that leaves the global volume is refused when the part starts, naming the sizes.
  PartOptions bad{.index = 0, .count = 1, .group = "bad", .rank = -1, .host = {}};
  bad.offset = {4, 0, 0};
  bad.global_dims = {D, H, W};
  Publisher outside({.name = "outside", .backend = "host", .max_fps = 0, .part = bad});
  outside.add_field({"u", data[1].data(), data[1].size() * 4, {D - split, H, W}, DType::float32, 1, Memory::host, ""});
  CHECK_THAT(error_of([&] { outside.start(); }).first,
             Contains("block of 4x3x3 cells at (0, 0, 4) does not fit in the global grid of 4x3x5"));
}

TEST_CASE("a reader killed while holding a group frees its slot in every part", "[integration][group][host]") {
  RuntimeDir rt;
  MpiRun run("held", {.parts = 3, .max_fps = 200});
  auto watch = Group::attach(options("held", Import::control_only));
  auto held_in_all = [&](std::uint32_t want) {
    for (const auto& s : watch.stats())
      if (s.held_slots != want) return false;
    return true;
  };
  ChildProcess holder({bin("cuview-ctl"), "--name", "held", "attach", "--frames", "2", "--hold-ms", "60000"});
  auto until = std::chrono::steady_clock::now() + 20s;
  while (!held_in_all(1) && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(20ms);
  INFO(holder.out() << holder.err());
  REQUIRE(held_in_all(1));
  holder.signal(SIGKILL);
  until = std::chrono::steady_clock::now() + 2s;
  while (!held_in_all(0) && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(20ms);
  CHECK(held_in_all(0));
}

TEST_CASE("cuview-ctl shows a run of parts part by part and steers it through part 0",
          "[integration][group][ctl][host]") {
  RuntimeDir rt;
  MpiRun run("ctlrun", {.parts = 3, .max_fps = 200});
  const auto status = ctl("ctlrun", {"status"});
  INFO(status.out << status.err);
  REQUIRE(status.code == 0);
  CHECK_THAT(status.out, Contains("40x50 in 3 parts") && Contains("group run-1"));
  for (int k = 0; k < 3; ++k) CHECK_THAT(status.out, Contains("  part " + std::to_string(k) + "  rank "));
  CHECK_THAT(status.out, Contains("rows 16-32") && Contains("on host-b"));
  CHECK_THAT(status.out, Contains("3 parts: steps"));
  CHECK_THAT(status.out, !Contains("  step 0 "));  // every part reports its own progress

  const auto js = ctl("ctlrun", {"status", "--json"});
  REQUIRE(js.code == 0);
  const auto parts = nlohmann::json::parse(js.out);
  REQUIRE(parts.is_array());
  REQUIRE(parts.size() == 3);
  for (int k = 0; k < 3; ++k) {
    CHECK(parts[k]["part"]["index"] == k);
    CHECK(parts[k]["part"]["count"] == 3);
  }
  CHECK(parts[2]["part"]["offset_y"] == 33);

  const auto describe = ctl("ctlrun", {"describe"});  // part 0's, saying where its block lies
  CHECK(describe.code == 0);
  CHECK_THAT(describe.out, Contains("40x16") && Contains("part 0 of 3") && Contains("global grid of 40x50"));

  const auto list = ctl("ctlrun", {"list"});
  CHECK_THAT(list.out, Contains("ctlrun (3 parts)"));

  const auto set = ctl("ctlrun", {"set", "gain=3"});
  INFO(set.err);
  CHECK(set.code == 0);
  auto watch = Group::attach(options("ctlrun", Import::control_only));
  CHECK(watch.leader().stats().params.at("gain") == 3);

  const auto att = ctl("ctlrun", {"attach", "--frames", "5", "--verify"});
  INFO(att.out << att.err);
  REQUIRE(att.code == 0);
  CHECK_THAT(att.out, Contains("in 3 parts") && Contains("part 2 (rank 2 on host-a") &&
                          Contains("received 5 groups") && Contains("5 verified intact"));
  CHECK_THAT(att.out, Contains("step ") && Contains("part 1 seq "));
}

namespace {
/// Fails the check unless every sample of `v` that shows a cell holds value(row, col, step) of
/// that cell at the view's step: one step from every part, no seam, no block of another step.
void check_view(const RemoteView& v) {
  std::size_t wrong = 0, shown = 0;
  const auto& r = v.view.region;
  for (int py = 0; py < r.view_h; ++py)
    for (int px = 0; px < r.view_w; ++px) {
      int cx = 0, cy = 0;
      const float got = v.view.values[std::size_t(py) * r.view_w + px];
      if (!r.cell_at(px, py, cx, cy)) {
        wrong += !std::isnan(got);
        continue;
      }
      ++shown;
      wrong += got != value(cy, cx, v.header.step);
    }
  INFO("view of step " << v.header.step << ", " << shown << " samples showing cells");
  CHECK(shown > 0);
  CHECK(wrong == 0);
}
}  // namespace

BACKEND_TEST("a run of parts on two hosts is one picture through the gateways of both",
             "[integration][group][remote]") {
  RuntimeDir rt;
  const auto a = host_dir(rt.path() / "host-a"), b = host_dir(rt.path() / "host-b");
  // Parts 0 and 2 on host A, part 1 on host B, each host with its own gateway. 60 frames a
  // second, as cuview-compute publishes; the parts agree on the steps they publish.
  MpiRun run("rows", {.parts = 3, .max_fps = 60, .runtime_dirs = {a, b, a}, .backend = to_string(backend)});
  auto gateway_a = on_host(a, [] { return start_gateway(); });
  auto gateway_b = std::make_optional(on_host(b, [] { return start_gateway(); }));
  const std::string url_a = on_host(a, [] { return gateway_url(); }), url_b = on_host(b, [] { return gateway_url(); });

  SECTION("each gateway lists the parts on its host") {
    auto list_a = RemoteHost::connect(url_a).publishers();
    auto list_b = RemoteHost::connect(url_b).publishers();
    REQUIRE(list_a.size() == 2);
    CHECK(list_a[0].name == "rows/part-0");
    CHECK(list_a[1].name == "rows/part-2");
    REQUIRE(list_b.size() == 1);
    CHECK(list_b[0].name == "rows/part-1");
  }

  SECTION("the group finds every part, and its views are of one step, seamless, at any zoom") {
    auto g = RemoteGroup::attach(options("rows", Import::control_only), {url_b, url_a});
    REQUIRE(g.decomposed());
    REQUIRE(g.via() == std::vector<std::string>{url_b, url_a});
    REQUIRE(g.size() == 3);
    CHECK(g.extent().dims == Axes{kHeight, kWidth});
    for (std::uint32_t k = 0; k < 3; ++k) {
      CHECK(g.part_desc(k).index == k);
      CHECK(g.part_desc(k).host == (k % 2 == 0 ? "host-a" : "host-b"));
    }
    {
      // Frames through the gateways: every part's block of one step, fetched whole.
      auto frames = g.next(10s);
      REQUIRE(frames);
      REQUIRE(frames->size() == 3);
      for (std::size_t k = 0; k < 3; ++k) CHECK(frames->part(k).info().step == frames->step());
      REQUIRE_FALSE(frames->verify());
      check_assembled(*frames);  // every cell of that one step, exact
    }
    // One sample per cell, lossless; then zoomed into part 0's rows only (the other parts send
    // empty rectangles), and a view straddling the border of parts 0 and 1.
    const std::vector<ViewRegion> regions{ViewRegion::fit(kWidth, kHeight, kWidth, kHeight, 1, kWidth / 2.0, kHeight / 2.0),
                                          ViewRegion::fit(kWidth, kHeight, 64, 64, 4, 10, 5),
                                          ViewRegion::fit(kWidth, kHeight, 90, 70, 2.5, 20, 16.5)};
    for (const auto& region : regions) {
      g.watch(ViewWatch{"u", region, "f32"});
      std::uint64_t last = 0;
      for (int i = 0; i < 5; ++i) {
        RemoteView v;
        REQUIRE(g.next_view(v, 10s));
        CHECK(v.header.encoding == "f32");
        CHECK(v.header.error_bound == 0);
        CHECK(v.header.step > last);
        CHECK(!v.header.rect);
        last = v.header.step;
        check_view(v);
      }
    }
    // Quantised: the picture states the largest error bound of its parts and holds to it.
    g.watch(ViewWatch{"u", regions[0], "u8"});
    RemoteView v;
    REQUIRE(g.next_view(v, 10s));
    CHECK(v.header.encoding == "u8");
    CHECK(v.header.error_bound > 0);
    std::size_t beyond = 0;
    for (std::uint32_t r = 0; r < kHeight; ++r)
      for (std::uint32_t c = 0; c < kWidth; ++c)
        beyond += std::abs(v.view.values[std::size_t{r} * kWidth + c] - value(r, c, v.header.step)) >
                  v.header.error_bound * 1.0001;
    CHECK(beyond == 0);

    // Steering goes to part 0 through host A's gateway (which hands it to every rank: here, the
    // run's threads do not); the other parts refuse it, through their own gateway too.
    g.leader().set({{"gain", 4}});
    CHECK(g.leader().stats().params.at("gain") == 4);
    CHECK(error_of([&] { g.part(1).set({{"gain", 5}}); }).second == Errc::unsupported);

    // Host B's gateway goes: the viewer hears which part it lost.
    gateway_b.reset();
    const auto [what, code] = error_of([&] {
      for (auto until = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < until;)
        (void)g.next_view(v, 200ms);
    });
    CHECK(code == Errc::daemon_gone);
    CHECK_THAT(what, Contains("part 1 of 'rows'"));
  }

  SECTION("a gateway left out is named with the parts it serves") {
    const auto [what, code] = error_of([&] { (void)RemoteGroup::attach(options("rows", Import::control_only), {url_a}); });
    CHECK(code == Errc::no_daemon);
    CHECK_THAT(what, Contains("part 1 of 'rows'") && Contains("a run of 3 parts") && Contains(url_a) &&
                         Contains("add the gateway of every host"));
    const auto [what0, code0] = error_of([&] { (void)RemoteGroup::attach(options("rows", Import::control_only), {url_b}); });
    CHECK(code0 == Errc::no_daemon);
    CHECK_THAT(what0, Contains("part 0 of 'rows'") && Contains("rank 0 runs"));
  }

  SECTION("cuview-ctl reaches the run through both gateways") {
    const auto status = ctl("rows", {"--remote", url_a, "--remote", url_b, "status"});
    INFO(status.out << status.err);
    REQUIRE(status.code == 0);
    CHECK_THAT(status.out, Contains("40x50 in 3 parts") && Contains("on host-b"));
    const auto list = ctl("rows", {"--remote", url_a, "--remote", url_b, "list"});
    INFO(list.out << list.err);
    CHECK_THAT(list.out, Contains("rows (3 parts)"));
    const auto att = ctl("rows", {"--remote", url_a, "--remote", url_b, "attach", "--frames", "4", "--encoding", "f32"});
    INFO(att.out << att.err);
    REQUIRE(att.code == 0);
    CHECK_THAT(att.out, Contains("40x50") && Contains("part 1 (rank 1 on host-b") && Contains("received 4 views") &&
                            Contains("largest error bound 0"));
  }
}
