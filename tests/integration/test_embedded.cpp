// The embedded publisher: a program with its own loop (examples/embed-wave, or this test process
// itself) is attached, verified and steered exactly like cuview-compute; steering reaches the
// program only when it polls; every misuse is refused with a message naming what is wrong.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numeric>
#include <thread>

#include "backend_test.hpp"
#include "cuview/client.hpp"
#include "cuview/publisher.hpp"
#include "cuview/run.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;

namespace {
/// The message of the cuview::Error that `f` throws (fails the test when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  FAIL("no cuview::Error was thrown");
  return {};
}

FieldDecl host_field(const std::string& name, const std::vector<float>& data, std::uint32_t w, std::uint32_t h) {
  return {name, data.data(), data.size() * sizeof(float), {h, w}, DType::float32, 1, Memory::host, "test data"};
}
}  // namespace

BACKEND_TEST("a program embedding the publisher is attached, verified, steered, paused and stepped like the daemon",
             "[integration][embedded]") {
  RuntimeDir rt;
  auto wave = start_embed_wave("w", backend);
  CHECK(ctl("w", {"attach", "--frames", "10", "--verify"}).code == 0);
  {
    auto c = Client::attach(AttachOptions{.name = "w", .client = "test"});
    const auto& d = c.description();
    CHECK(d.sim == "wave");
    CHECK(d.backend == to_string(backend));
    REQUIRE(d.fields.size() == 2);
    CHECK(d.fields[0].name == "u");
    CHECK(d.fields[0].shape == std::vector<std::uint32_t>{96, 128});
    CHECK(d.fields[1].name == "v");
    auto f = c.next_frame(5s);
    REQUIRE(f);
    CHECK(f->verify() == std::nullopt);
  }

  REQUIRE(ctl("w", {"set", "c=0.3"}).code == 0);
  CHECK(stats("w").params.at("c") == 0.3);
  const auto refused = ctl("w", {"set", "c=0.9"});
  CHECK(refused.code != 0);
  CHECK_THAT(refused.err, Contains("c=0.9 is out of range [0.05, 0.7]"));
  CHECK(stats("w").params.at("c") == 0.3);

  // Paused, the program's loop holds still; `step 5` lets it take exactly five steps.
  // A pause takes effect when the program next polls: the batch under way when it came (8 steps)
  // may still finish after `stats` says paused, and nothing after it.
  REQUIRE(ctl("w", {"pause"}).code == 0);
  const auto acked = wait_stats("w", [](const StatsView& v) { return v.paused; });
  std::this_thread::sleep_for(300ms);
  const auto held = stats("w");
  CHECK(held.step <= acked.step + 8);
  std::this_thread::sleep_for(300ms);
  CHECK(stats("w").step == held.step);
  REQUIRE(ctl("w", {"step", "5"}).code == 0);
  (void)wait_stats("w", [&](const StatsView& v) { return v.step == held.step + 5; });
  REQUIRE(ctl("w", {"reset"}).code == 0);
  (void)wait_stats("w", [](const StatsView& v) { return v.step == 0; });
  REQUIRE(ctl("w", {"resume"}).code == 0);
  (void)wait_stats("w", [](const StatsView& v) { return !v.paused && v.step > 100; });

  REQUIRE(ctl("w", {"shutdown"}).code == 0);
  const auto code = wave.wait_for(10s);
  REQUIRE(code);
  CHECK(*code == 0);
  CHECK_THAT(wave.out(), Contains("stopped at step"));
  CHECK_FALSE(daemon_running("w"));
}

TEST_CASE("an embedded publisher publishes the program's buffers and hands steering over only when polled",
          "[integration][embedded][host]") {
  RuntimeDir rt;
  Publisher pub({.name = "inproc", .backend = "host", .title = "ramp", .max_fps = 0, .max_cost = 1});
  std::vector<float> ramp(16 * 8);
  std::iota(ramp.begin(), ramp.end(), 0.0f);
  std::vector<std::int32_t> ids(10);
  std::iota(ids.begin(), ids.end(), 100);
  pub.add_field(host_field("ramp", ramp, 16, 8));
  pub.add_particles({"dots", 10, {{"id", ids.data(), 40, {}, DType::int32, 1, Memory::host, "id"}}, "dots", {}});
  pub.add_param({"gain", 1, 0, 10, false, "gain"});
  CHECK_FALSE(pub.publish(6, 0.4));  // nobody reads: the step is recorded, nothing is copied
  CHECK(Client::attach(AttachOptions{.name = "inproc", .client = "test", .import = Import::control_only})
            .stats()
            .frames_published == 0);

  auto c = Client::attach(AttachOptions{.name = "inproc", .client = "test"});
  REQUIRE(pub.publish(7, 0.5));  // a reader came: published at once, max_fps or not
  CHECK(c.description().sim == "ramp");
  REQUIRE(c.description().particles.size() == 1);
  ramp[3] = -1;  // the program changes its buffer: the next frame has it, the published one not
  REQUIRE(pub.publish(8, 0.6));
  auto f = c.next_frame(5s);
  REQUIRE(f);
  CHECK(f->info().step == 8);
  CHECK(f->info().sim_time == 0.6);
  CHECK(f->verify() == std::nullopt);
  CHECK(std::memcmp(f->host_field(0), ramp.data(), ramp.size() * sizeof(float)) == 0);
  const auto* published_ids = reinterpret_cast<const std::int32_t*>(f->host_field(1));
  CHECK(std::vector<std::int32_t>(published_ids, published_ids + 10) == ids);

  // A change is validated at once, but the program sees it only at poll().
  c.set({{"gain", 2.5}});
  CHECK(pub.params().at("gain") == 1);
  CHECK(c.stats().params.at("gain") == 2.5);
  const Requests r = pub.poll();
  CHECK(r.params.at("gain") == 2.5);
  CHECK(pub.params().at("gain") == 2.5);
  CHECK(pub.poll().params.empty());
  CHECK_THAT(error_of([&] { c.set({{"gain", 11}}); }), Contains("gain=11 is out of range [0, 10]"));
  CHECK(pub.poll().params.empty());

  // Pause and step reach the loop through steps_allowed(); reset and shutdown through poll().
  CHECK(pub.steps_allowed(8) == 8);
  c.pause();
  CHECK(pub.paused());
  CHECK(pub.steps_allowed(8) == 0);
  c.step(3);
  // Granted from the next poll(): a stroke or a change sent before the step reaches the program
  // first, as the client sent them.
  CHECK(pub.steps_allowed(8) == 0);
  (void)pub.poll();
  CHECK(pub.steps_allowed(8) == 3);
  CHECK(pub.steps_allowed(8) == 0);
  c.reset();
  CHECK(pub.poll().reset);
  c.shutdown();
  CHECK(pub.poll().shutdown);

  // Closing tells the attached client at once.
  pub.close();
  CHECK_THROWS_AS(c.next_frame(2s), Error);
}

TEST_CASE("a program that records its steps a batch at a time is shown its step rate, not a count of batches",
          "[integration][embedded][host]") {
  // 100 steps every 0.3 s: a half-second window holds one record or two, which read as 200 or
  // 400 steps/s; the rate shown must be the steps between two records over the time between
  // them. The publisher stamps a record inside record_step, so the stamp lies between the
  // program's clock readings either side of the call (the same monotonic clock).
  RuntimeDir rt;
  Publisher pub({.name = "batches", .backend = "host", .max_fps = 0, .max_cost = 1});
  std::vector<float> u(16 * 8, 1.0f);
  pub.add_field(host_field("u", u, 16, 8));
  struct Record {
    std::uint64_t step;
    std::chrono::steady_clock::time_point before, after;
  };
  std::vector<Record> records;
  std::mutex m;
  std::atomic<bool> stop{false};
  std::thread program([&] {
    for (std::uint64_t step = 100; !stop; step += 100) {
      const auto before = std::chrono::steady_clock::now();
      pub.record_step(step, static_cast<double>(step));
      const auto after = std::chrono::steady_clock::now();
      {
        std::lock_guard lock(m);
        records.push_back({step, before, after});
      }
      std::this_thread::sleep_for(300ms);
    }
  });
  auto c = Client::attach(AttachOptions{.name = "batches", .client = "test", .import = Import::control_only});
  std::vector<double> shown;
  for (int k = 0; k < 4; ++k) {  // several readings, each from a later window
    std::this_thread::sleep_for(k == 0 ? 2000ms : 700ms);
    shown.push_back(c.stats().steps_per_second);
  }
  stop = true;
  program.join();
  const auto seconds = [](auto d) { return std::chrono::duration<double>(d).count(); };
  double longest_gap = 0;  // a machine under load may hold the program back: then 0 is its rate
  for (std::size_t i = 1; i < records.size(); ++i)
    longest_gap = std::max(longest_gap, seconds(records[i].after - records[i - 1].before));
  for (const double rate : shown) {
    INFO("shown " << rate << " steps/s; the program recorded 100 steps every ~0.3 s, " << records.size()
                  << " records, at most " << longest_gap << " s apart");
    if (rate == 0) {
      CHECK(longest_gap > 0.5);
      continue;
    }
    bool some_pair = false;  // the steps between two records over the time between them
    for (std::size_t i = 0; i < records.size(); ++i)
      for (std::size_t j = i + 1; j < records.size(); ++j) {
        const double steps = static_cast<double>(records[j].step - records[i].step);
        const double fastest = steps / seconds(records[j].before - records[i].after);
        const double slowest = steps / seconds(records[j].after - records[i].before);
        some_pair = some_pair || (rate >= slowest * (1 - 1e-9) && rate <= fastest * (1 + 1e-9));
      }
    CHECK(some_pair);
  }
}

TEST_CASE("a publisher of a volume describes its dims and a client reads it cell for cell",
          "[integration][embedded][host]") {
  RuntimeDir rt;
  constexpr std::uint32_t D = 4, H = 5, W = 6;
  auto value = [](std::uint32_t z, std::uint32_t y, std::uint32_t x) { return float(z * 100 + y * 10 + x); };
  std::vector<float> u(D * H * W), velocity(D * H * W * 3);
  for (std::uint32_t z = 0; z < D; ++z)
    for (std::uint32_t y = 0; y < H; ++y)
      for (std::uint32_t x = 0; x < W; ++x) {
        const std::size_t i = (std::size_t{z} * H + y) * W + x;
        u[i] = value(z, y, x);
        for (std::uint32_t c = 0; c < 3; ++c) velocity[i * 3 + c] = value(z, y, x) + 0.25f * float(c + 1);
      }
  Publisher pub({.name = "volume", .backend = "host", .title = "box", .max_fps = 0, .max_cost = 1});
  pub.add_field({"u", u.data(), u.size() * 4, {D, H, W}, DType::float32, 1, Memory::host, "a scalar"});
  pub.add_field({"velocity", velocity.data(), velocity.size() * 4, {D, H, W}, DType::float32, 3, Memory::host, "a vector"});
  pub.start();

  auto c = Client::attach(AttachOptions{.name = "volume", .client = "test"});
  const auto& d = c.description();
  CHECK(d.dims == std::vector<std::uint32_t>{D, H, W});
  REQUIRE(d.fields.size() == 2);
  CHECK(d.fields[0].shape == std::vector<std::uint32_t>{D, H, W});
  CHECK(d.fields[0].strides == std::vector<std::uint64_t>{H * W * 4, W * 4, 4});
  CHECK(d.fields[1].shape == std::vector<std::uint32_t>{D, H, W, 3});
  CHECK(d.fields[1].strides == std::vector<std::uint64_t>{H * W * 12, W * 12, 12, 4});
  REQUIRE(pub.publish(3, 0.1));
  auto f = c.next_frame(5s);
  REQUIRE(f);
  CHECK(f->verify() == std::nullopt);
  CHECK(std::memcmp(f->host_field(0), u.data(), u.size() * 4) == 0);
  CHECK(std::memcmp(f->host_field(1), velocity.data(), velocity.size() * 4) == 0);

  // What a person reads: the size as they would type it, fastest axis first, and each field's shape.
  const auto described = ctl("volume", {"describe"});
  CHECK(described.code == 0);
  CHECK_THAT(described.out, Contains("box 6x5x4 on host") && Contains("[4, 5, 6]") && Contains("[4, 5, 6, 3]"));
  CHECK_THAT(ctl("volume", {"status"}).out, Contains("box 6x5x4 on host"));
  const auto json = nlohmann::json::parse(ctl("volume", {"describe", "--json"}).out);
  CHECK(json["dims"] == nlohmann::json::array({D, H, W}));
}

TEST_CASE("a field of 4 components (an RGBA colour) is published and read back; one of 5 is refused by name",
          "[integration][embedded][host]") {
  RuntimeDir rt;
  constexpr std::uint32_t H = 5, W = 6;
  std::vector<float> rgba(H * W * 4), five(H * W * 5);
  std::iota(rgba.begin(), rgba.end(), 0.5f);
  Publisher pub({.name = "rgba", .backend = "host", .max_fps = 0, .max_cost = 1});
  const auto refused = error_of([&] {
    pub.add_field({"five", five.data(), five.size() * 4, {H, W}, DType::float32, 5, Memory::host, ""});
  });
  CHECK_THAT(refused, Contains("field 'five' has 5 components") && Contains("1 to 4"));
  pub.add_field({"colour", rgba.data(), rgba.size() * 4, {H, W}, DType::float32, 4, Memory::host, "RGBA"});
  pub.start();

  auto c = Client::attach(AttachOptions{.name = "rgba", .client = "test"});
  const auto& d = c.description();
  REQUIRE(d.fields.size() == 1);
  CHECK(d.fields[0].components == 4);
  CHECK(d.fields[0].shape == std::vector<std::uint32_t>{H, W, 4});
  REQUIRE(pub.publish(1, 0.1));
  auto f = c.next_frame(5s);
  REQUIRE(f);
  CHECK(f->verify() == std::nullopt);
  CHECK(std::memcmp(f->host_field(0), rgba.data(), rgba.size() * 4) == 0);
  CHECK_THAT(ctl("rgba", {"describe"}).out, Contains("[5, 6, 4]"));
}

TEST_CASE("a grid of 1 or 3 axes is declared by its dims alone, and every field shares it",
          "[integration][embedded][host]") {
  RuntimeDir rt;
  Publisher pub({.name = "dims", .backend = "host", .max_fps = 0, .max_cost = 1});
  std::vector<float> line(32), cube(8 * 8 * 8);
  CHECK_THAT(error_of([&] {
               pub.add_field({"4d", cube.data(), cube.size() * 4, {2, 4, 8, 8}, DType::float32, 1, Memory::host, ""});
             }),
             Contains("a grid of 4 axes") && Contains("give dims of 1 to 3 axes"));
  CHECK_THAT(error_of([&] {
               pub.add_field({"short", cube.data(), 100, {8, 8, 8}, DType::float32, 1, Memory::host, ""});
             }),
             Contains("8x8x8 cells of 1 float32 need 2048"));
  pub.add_field({"line", line.data(), line.size() * 4, {32}, DType::float32, 1, Memory::host, ""});
  CHECK_THAT(error_of([&] {
               pub.add_field({"cube", cube.data(), cube.size() * 4, {8, 8, 8}, DType::float32, 1, Memory::host, ""});
             }),
             Contains("is 8x8x8 but field 'line' is 32") && Contains("lies on a grid of its own: declare one (add_grid)"));
  pub.start();
  auto c = Client::attach(AttachOptions{.name = "dims", .client = "test"});
  CHECK(c.description().dims == std::vector<std::uint32_t>{32});
  CHECK(c.description().fields[0].shape == std::vector<std::uint32_t>{32});
}

TEST_CASE("misuse of the publisher is refused with a message naming what is wrong", "[integration][embedded][host]") {
  RuntimeDir rt;
  std::vector<float> a(64), b(32);
  Publisher pub({.name = "misuse", .backend = "host"});
  // A C++ caller reads C++'s calls (the C API, Fortran and Python theirs: tests/c, tests/python).
  CHECK_THAT(error_of([&] { pub.publish(0); }),
             Contains("no field is declared") && Contains("declare at least one with add_field() before start()"));
  auto wrong_size = host_field("u", a, 8, 8);
  wrong_size.bytes = 100;
  CHECK_THAT(error_of([&] { pub.add_field(wrong_size); }), Contains("buffer of 100 bytes") && Contains("need 256"));
  CHECK_THAT(error_of([&] {
               pub.add_field({"d", a.data(), 256, {8, 8}, DType::float32, 1, Memory::device, ""});
             }),
             Contains("host backend") && Contains("Memory::host"));
  pub.add_field(host_field("u", a, 8, 8));
  CHECK_THAT(error_of([&] { pub.add_field(host_field("u", a, 8, 8)); }), Contains("field 'u' is declared twice"));
  CHECK_THAT(error_of([&] { pub.add_field(host_field("w", b, 8, 4)); }), Contains("is 8x4 but field 'u' is 8x8") && Contains("a grid of its own"));
  CHECK_THAT(error_of([&] { pub.add_param({"k", 5, 0, 1, false, ""}); }), Contains("outside its range"));
  pub.add_field({"late", nullptr, 256, {8, 8}, DType::float32, 1, Memory::host, "written by a FieldWriter"});
  CHECK_THAT(error_of([&] { pub.publish(0); }),
             Contains("'late' was declared without data") && Contains("pass publish() a FieldWriter"));
  // Nobody reads: a FieldWriter is not called, and the publisher has started.
  CHECK_FALSE(pub.publish(0, 0, [&](const std::vector<FieldTarget>&) { FAIL("written with no reader"); }));
  CHECK_THAT(error_of([&] { pub.add_field(host_field("x", a, 8, 8)); }),
             Equals("publisher 'misuse': cannot declare field 'x' after publishing began; declare every field, "
                    "parameter, preset and input before start() or the first publish()"));
  CHECK_THAT(error_of([&] { Publisher second({.name = "misuse", .backend = "host"}); }), Contains("misuse"));
  try {
    Publisher second({.name = "misuse", .backend = "host"});
    FAIL("a second publisher of the same name started");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::already_running);
  }
  CHECK_THAT(error_of([] { Publisher bad({.name = "bad name!"}); }), Contains("bad name!"));
  CHECK_THAT(error_of([] { Publisher free({.name = "free", .backend = "host", .max_cost = 0}); }),
             Contains("max_cost") && Contains("1: no budget"));
}

TEST_CASE("a publisher copies only the fields its readers read, and a frame says which it holds",
          "[integration][embedded][host]") {
  RuntimeDir rt;
  Publisher pub({.name = "fields", .backend = "host", .max_fps = 0, .max_cost = 1});
  std::vector<float> u(64, 1), v(64, 2), w(64, 3);
  pub.add_field(host_field("u", u, 8, 8));
  pub.add_field({"v", nullptr, 256, {8, 8}, DType::float32, 1, Memory::host, "written by the writer"});
  pub.add_field(host_field("w", w, 8, 8));
  pub.start();
  std::vector<bool> asked;  // what the writer was told is read, per publish
  const FieldWriter writer = [&](const std::vector<FieldTarget>& t) {
    asked = {t[0].read, t[1].read, t[2].read};
    std::memcpy(t[0].data, u.data(), 256);  // a writer may write every field whatever is read
    if (t[1].read) std::memcpy(t[1].data, v.data(), 256);
    std::memcpy(t[2].data, w.data(), 256);
  };
  auto a = Group::attach(AttachOptions{.name = "fields", .client = "reads u"});
  auto b = Client::attach(AttachOptions{.name = "fields", .client = "reads w"});
  a.read_fields({"u"});
  b.read_fields({"w"});
  CHECK_THAT(error_of([&] { b.read_fields({"x"}); }), Contains("no field or particle set 'x'") && Contains("u, v, w"));
  REQUIRE(pub.publish(1, 0, writer));
  CHECK(asked == std::vector<bool>{true, false, true});
  auto fa = a.next(5s);
  REQUIRE(fa);
  const Frame& frame = fa->part(0);
  CHECK(frame.holds(0));
  CHECK_FALSE(frame.holds(1));
  CHECK(frame.holds(2));
  CHECK(frame.verify() == std::nullopt);  // the checksum covers what the frame holds
  CHECK(frame.host_field(1) == nullptr);
  std::vector<std::byte> out(256);
  fa->copy_field_to_host(0, out);
  CHECK(std::memcmp(out.data(), u.data(), 256) == 0);
  CHECK_THAT(error_of([&] { fa->copy_field_to_host(1, out); }),
             Contains("does not hold field 'v'") && Contains("read_fields"));
  auto fb = b.next_frame(5s);
  REQUIRE(fb);
  CHECK(std::memcmp(fb->host_field(2), w.data(), 256) == 0);
  fa.reset();
  fb.reset();
  // Reading v instead: the next frame holds it (a frame from before is skipped, never shown).
  a.read_fields({"v"});
  REQUIRE(pub.publish(2, 0, writer));
  auto again = a.next(5s);
  REQUIRE(again);
  CHECK(again->step() == 2);
  CHECK(again->part(0).holds(1));
  CHECK(again->part(0).verify() == std::nullopt);
  again->copy_field_to_host(1, out);
  CHECK(std::memcmp(out.data(), v.data(), 256) == 0);
  again.reset();
  // Every field again once a reader asks for all (the default).
  b.read_fields({});
  REQUIRE(pub.publish(3, 0, writer));
  CHECK(asked == std::vector<bool>{true, true, true});
  auto all = b.next_frame(5s);
  REQUIRE(all);
  CHECK(all->info().fields == kAllBlocks);
  CHECK(all->verify() == std::nullopt);
}

TEST_CASE("a frame changed after it was published fails verify(), which names the frame and the checksum",
          "[integration][embedded][host]") {
  // A writer that keeps writing after publish() returned (its own thread, a stream it forgot to
  // order): the reader's verify() is how it finds out. The CUDA path: tests/python/test_client.py.
  RuntimeDir rt;
  Publisher pub({.name = "late", .backend = "host", .max_fps = 0, .max_cost = 1});
  pub.add_field({"u", nullptr, 256, {8, 8}, DType::float32, 1, Memory::host, "written by the writer"});
  pub.start();
  std::vector<float> u(64, 1.5f);
  void* slot_field = nullptr;
  const FieldWriter writer = [&](const std::vector<FieldTarget>& t) {
    std::memcpy(t[0].data, u.data(), 256);
    slot_field = t[0].data;
  };
  auto c = Client::attach(AttachOptions{.name = "late", .client = "verifier"});
  REQUIRE(pub.publish(1, 0, writer));
  auto f = c.next_frame(5s);
  REQUIRE(f);
  CHECK(f->verify() == std::nullopt);
  const float late = 2.5f;
  std::memcpy(static_cast<std::byte*>(slot_field) + 4 * 17, &late, sizeof late);  // the reader still holds the slot
  const auto problem = f->verify();
  REQUIRE(problem);
  CHECK_THAT(*problem, Contains("frame " + std::to_string(f->info().seq)) && Contains("checksum mismatch"));
  std::memcpy(static_cast<std::byte*>(slot_field) + 4 * 17, &u[17], sizeof late);  // as it was: intact again
  CHECK(f->verify() == std::nullopt);
}

TEST_CASE("a publisher keeps to its cost budget and says when the budget sets the frame rate",
          "[integration][embedded][host]") {
  RuntimeDir rt;
  // Each frame's publishing takes at least 2 ms (its writer sleeps): at a budget of 0.01 % the
  // next frame may start only 20 s after one, so a loop of quick steps publishes one frame.
  Publisher pub({.name = "budget", .backend = "host", .max_fps = 0, .max_cost = 0.0001});
  std::vector<float> u(64, 1.5f);
  pub.add_field({"u", nullptr, 256, {8, 8}, DType::float32, 1, Memory::host, "written by a slow writer"});
  const FieldWriter slow = [&](const std::vector<FieldTarget>& t) {
    std::memcpy(t[0].data, u.data(), 256);
    std::this_thread::sleep_for(2ms);
  };
  pub.start();
  auto c = Client::attach(AttachOptions{.name = "budget", .client = "test"});
  int published = 0;
  for (std::uint64_t step = 1; step <= 30; ++step) published += pub.publish(step, 0, slow) ? 1 : 0;
  CHECK(published == 1);
  auto f = c.next_frame(5s);
  REQUIRE(f);
  CHECK(f->info().step == 1);
  CHECK(f->verify() == std::nullopt);
  std::this_thread::sleep_for(700ms);  // a rate window closes: stats measures the cost over it
  (void)pub.publish(31, 0, slow);      // hands the frames' measured costs over
  const auto s = c.stats();
  CHECK(s.limited_by == "budget");
  CHECK(s.max_cost == 0.0001);
  CHECK(s.cost > 0);
  const auto st = ctl("budget", {"status"});  // as a person reads it
  INFO(st.out);
  CHECK_THAT(st.out, Contains("(budget 0.01 %)") && Contains("the budget sets the frame rate"));
  // A frame the program insists on (after a reset, or agreed by parts) is published whatever it costs.
  pub.publish_next_now();
  CHECK(pub.publish(32, 0, slow));
}

#ifdef CUVIEW_HAVE_CUDA
TEST_CASE(
    "an embedded publisher on CUDA copies device buffers into frames and refuses host pointers declared as device",
    "[integration][embedded][gpu]") {
  require_backend(Backend::cuda);
  RuntimeDir rt;
  Publisher pub({.name = "gpu", .backend = "cuda", .max_fps = 0});
  std::vector<float> host(64 * 32);
  std::iota(host.begin(), host.end(), 1.0f);
  CHECK_THAT(error_of([&] {
               pub.add_field({"h", host.data(), host.size() * 4, {32, 64}, DType::float32, 1, Memory::device, ""});
             }),
             Contains("its pointer is host memory"));
  void* device = nullptr;
  REQUIRE(cudaMalloc(&device, host.size() * 4) == cudaSuccess);
  REQUIRE(cudaMemcpy(device, host.data(), host.size() * 4, cudaMemcpyHostToDevice) == cudaSuccess);
  CHECK_THAT(error_of([&] {
               pub.add_field({"d", device, host.size() * 4, {32, 64}, DType::float32, 1, Memory::host, ""});
             }),
             Contains("declared as host memory but its pointer is device memory"));
  pub.add_field({"d", device, host.size() * 4, {32, 64}, DType::float32, 1, Memory::device, "device data"});
  pub.add_field({"h", host.data(), host.size() * 4, {32, 64}, DType::float32, 1, Memory::host, "host data"});
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  CHECK_FALSE(pub.publish(5, 1.0, stream));  // nobody reads yet

  // CUDA IPC opens only in another process: this one is told so, cuview-ctl reads the frame,
  // published by the next publish() after it arrived.
  CHECK_THAT(error_of([] { (void)Client::attach(AttachOptions{.name = "gpu", .client = "test"}); }),
             Contains("published by this same process"));
  auto control = Client::attach(AttachOptions{.name = "gpu", .client = "test", .import = Import::control_only});
  const auto& d = control.description();
  const auto saved = (rt.path() / "frame.bin").string();
  ChildProcess reader({bin("cuview-ctl"), "--name", "gpu", "attach", "--frames", "1", "--verify", "--save", saved});
  for (int i = 0; i < 1000 && reader.running(); ++i) {
    (void)pub.publish(5, 1.0, stream);
    std::this_thread::sleep_for(10ms);
  }
  const auto code = reader.wait_for(10s);
  INFO(reader.out() << reader.err());
  REQUIRE(code == 0);
  std::ifstream in(saved, std::ios::binary);
  std::vector<char> slot(d.slot_bytes);
  REQUIRE(in.read(slot.data(), static_cast<std::streamsize>(slot.size())));
  CHECK(std::memcmp(slot.data() + d.fields[0].offset, host.data(), host.size() * 4) == 0);  // from device memory
  CHECK(std::memcmp(slot.data() + d.fields[1].offset, host.data(), host.size() * 4) == 0);  // from host memory
  pub.close();
  cudaStreamDestroy(stream);
  cudaFree(device);
}
#endif
