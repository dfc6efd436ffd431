// cuview-compute and its clients, with real processes: attaching, receiving verified frames,
// detaching, and what cuview-ctl reports about a daemon and the simulations it can run.
#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "backend_test.hpp"
#include "cuview/client.h"
#include "cuview/client.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;

namespace {
/// What Python's status() reads: the C API's stats as JSON.
std::string cuview_json_of_stats(const char* name) {
  cuview_client* c = nullptr;
  REQUIRE(cuview_attach(name, "test (C API)", 1, 3000, &c) == CUVIEW_OK);
  const char* json = nullptr;
  REQUIRE(cuview_stats_json(c, &json) == CUVIEW_OK);
  std::string out = json;
  cuview_detach(c);
  return out;
}
}  // namespace

BACKEND_TEST("a client attaches and receives verified frames", "[integration][attach]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  auto r = ctl("t", {"attach", "--frames", "30", "--verify"});
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("received 30 frames") && Catch::Contains("30 verified intact"));
  CHECK_THAT(r.out, Catch::Contains(std::string("on ") + to_string(backend)));
}

BACKEND_TEST("a frame's trailer names the frame and when it was complete", "[integration][attach]") {
  RuntimeDir rt;
  auto d = start_daemon("t", backend);
  auto c = attach("t");
  auto f = c.next_frame(10s);
  REQUIRE(f);
  f->wait();
  const auto t = f->trailer();
  CHECK(t.seq == f->info().seq);
  CHECK(t.step == f->info().step);
  CHECK(t.done_ns != 0);
  if (backend == Backend::host) {  // the copy ends just before the frame is stamped and published
    const auto done = static_cast<std::int64_t>(t.done_ns);
    CHECK(done <= f->info().stamp_ns);
    CHECK(f->info().stamp_ns - done < 1'000'000'000);
  }  // on CUDA done_ns is the GPU's own timer (cuview-bench calibrates it against CLOCK_REALTIME)
}

BACKEND_TEST("status --json reports the running simulation", "[integration][ctl]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  (void)wait_stats("t", [](const StatsView& s) { return s.step > 0; });
  auto r = ctl("t", {"status", "--json"});
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("backend") == to_string(backend));
  CHECK(j.at("sim") == "grayscott");
  CHECK(j.at("step").get<std::uint64_t>() > 0);
  CHECK(j.at("paused") == false);
  CHECK(j.at("clients").get<int>() == 1);  // cuview-ctl itself
  CHECK(j.at("frames_published").get<std::uint64_t>() == 0);  // nobody has read: nothing was copied
  CHECK(j.at("readers").get<int>() == 0);
  CHECK(j.at("width") == 128);
  // Every field Python's status() and the C API's cuview_stats_json give, by the same names.
  CHECK(j.at("checkpoint").contains("answered"));
  CHECK(j.at("checkpoint").contains("error_ticket"));
  const auto c_api = nlohmann::json::parse(cuview_json_of_stats("t"));
  for (const auto& [key, value] : c_api.items()) {
    INFO("field " << key);
    CHECK(j.contains(key));
    if (value.is_object())
      for (const auto& [inner, ignored] : value.items()) {
        INFO("field " << key << "." << inner);
        CHECK(j.at(key).contains(inner));
      }
  }
  auto text = ctl("t", {"status"});
  CHECK_THAT(text.out, Catch::Contains("none while nobody reads"));
}

BACKEND_TEST("no reader, no copy: the run goes on, nothing is published, and a reader gets the run as it is now",
             "[integration][attach]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  // Steps go on while nobody reads, and no frame is published.
  (void)wait_stats("t", [](const StatsView& s) { return s.step > 200; });
  CHECK(stats("t").frames_published == 0);
  std::uint64_t last_seq = 0;
  for (int round = 0; round < 3; ++round) {
    const auto before = stats("t");
    auto c = attach("t");
    // The daemon publishes for it at the loop's next turn (a minute is only a failure guard),
    // never the frame left in the ring when the previous reader went: it is of a step at least
    // as late as the moment this reader arrived, and newer than any frame taken before.
    auto f = c.next_frame(60s);
    REQUIRE(f);
    CHECK(f->info().step >= before.step);
    CHECK(f->info().seq > last_seq);
    CHECK_FALSE(f->verify());
    last_seq = f->info().seq;
    // Frames flow while it reads.
    f.reset();
    auto g = c.next_frame(10s);
    REQUIRE(g);
    CHECK(g->info().seq > last_seq);
    last_seq = g->info().seq;
    g.reset();
    c.detach();
    // Gone: publishing stops while the steps go on.
    const auto gone = wait_stats("t", [](const StatsView& s) { return s.readers == 0; });
    (void)wait_stats("t", [&](const StatsView& s) { return s.step > gone.step + 100; });
    const auto idle = stats("t").frames_published;
    (void)wait_stats("t", [&](const StatsView& s) { return s.step > gone.step + 300; });
    CHECK(stats("t").frames_published == idle);
  }
}

BACKEND_TEST("a reader attaching to a paused daemon gets its frame at once", "[integration][attach]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend, {"--paused"});
  (void)wait_stats("t", [](const StatsView& s) { return s.paused; });
  CHECK(stats("t").frames_published == 0);
  for (int i = 0; i < 2; ++i) {  // and again after the first reader left
    auto c = attach("t");
    auto f = c.next_frame(5s);
    REQUIRE(f);
    CHECK(f->info().step == 0);
    CHECK_FALSE(f->verify());
  }
  // A second frame does not come while it is paused: cuview-ctl says so and what to look at.
  auto r = ctl("t", {"attach", "--frames", "2", "--frame-timeout", "0.5"});
  CHECK(r.code != 0);
  CHECK_THAT(r.err, Catch::Contains("no frame from 't' within 0.5 s") && Catch::Contains("cuview-ctl --name t resume") &&
                        Catch::Contains("cuview-ctl --name t status"));
}

BACKEND_TEST("50 attach/detach cycles leave no client, lease or held slot behind", "[integration][attach]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  for (int i = 0; i < 50; ++i) {
    auto c = attach("t");
    auto f = c.next_frame(10s);
    REQUIRE(f);
    REQUIRE_FALSE(f->verify());
  }
  auto s = stats("t");
  CHECK(s.clients == 1);  // the stats query itself
  CHECK(s.readers == 0);
  CHECK(s.held_slots == 0);
  CHECK(ctl("t", {"attach", "--frames", "5", "--verify"}).code == 0);
}

TEST_CASE("attaching to a daemon that does not exist names it and what to do", "[integration][ctl]") {
  RuntimeDir rt;
  auto r = ctl("nobody", {"attach", "--frames", "1"});
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Catch::Contains("'nobody'") && Catch::Contains("cuview-compute --name nobody"));
}

TEST_CASE("cuview-ctl sims lists what --sim runs, with fields and parameters; describe agrees", "[integration][ctl]") {
  RuntimeDir rt;
  auto r = ctl("", {"sims", "--json"});
  REQUIRE(r.code == 0);
  const auto sims = nlohmann::json::parse(r.out);
  REQUIRE(sims.is_array());
  const auto gs = std::find_if(sims.begin(), sims.end(), [](const auto& s) { return s.at("name") == "grayscott"; });
  REQUIRE(gs != sims.end());
  CHECK((*gs)["fields"][0]["name"] == "u");
  CHECK((*gs)["fields"][1]["name"] == "v");
  CHECK((*gs)["fields"][0]["dtype"] == "float32");
  bool has_f = false;
  for (const auto& p : (*gs)["params"])
    if (p["name"] == "F") has_f = p["min"] == 0.0 && p["max"] == 0.1 && p["default"] == 0.0545;
  CHECK(has_f);
  auto text = ctl("", {"sims"});
  REQUIRE(text.code == 0);
  CHECK_THAT(text.out, Catch::Contains("grayscott") && Catch::Contains("steps_per_frame") && Catch::Contains("coral"));

  // A running daemon describes the same fields, each a C-contiguous float32 array in its slot.
  auto daemon = start_daemon("t", Backend::host, {}, "40x24");
  auto c = Client::attach(AttachOptions{.name = "t", .client = "test", .import = Import::control_only});
  const auto& d = c.description();
  REQUIRE(d.fields.size() == 2);
  CHECK(d.fields[1].name == "v");
  CHECK(d.fields[1].shape == std::vector<std::uint32_t>{24, 40});
  CHECK(d.fields[1].strides == std::vector<std::uint64_t>{160, 4});
  CHECK(d.fields[1].bytes == 40 * 24 * 4);
  CHECK(d.fields[1].offset % 256 == 0);
  CHECK(d.fields[1].offset >= d.fields[0].offset + d.fields[0].bytes);

  auto unknown = ChildProcess({bin("cuview-compute"), "--name", "x", "--sim", "lattice"});
  const auto code = unknown.wait_for(30s);
  REQUIRE(code);
  CHECK(*code != 0);
  CHECK_THAT(unknown.err(), Catch::Contains("lattice") && Catch::Contains("grayscott"));
}
