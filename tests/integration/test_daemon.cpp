// End-to-end behaviour of cuview-compute and its clients, with real processes.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#ifdef CUVIEW_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <span>
#include <thread>
#include <zmq.hpp>

#include "backend_test.hpp"
#include "cuview/client.hpp"
#include "cuview/posix.hpp"
#include "cuview/runtime_dir.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

struct Unknown {  // `step` arguments with a field no version of the protocol has
  std::uint64_t n = 1;
  int colour = 3;
  MSGPACK_DEFINE_MAP(n, colour);
};

/// A raw DEALER on the daemon's control socket: sends whatever bytes a test wants.
struct RawPeer {
  zmq::context_t ctx;
  zmq::socket_t sock{ctx, zmq::socket_type::dealer};
  explicit RawPeer(const std::string& name) {
    sock.set(zmq::sockopt::linger, 0);
    sock.set(zmq::sockopt::rcvtimeo, 10000);
    sock.connect(InstancePaths(name).control_endpoint());
  }
  proto::Reply send(const std::vector<std::string>& parts) {
    for (std::size_t i = 0; i < parts.size(); ++i)
      sock.send(zmq::buffer(parts[i]), i + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
    zmq::message_t m;
    REQUIRE(sock.recv(m));
    return proto::decode_reply(m.to_string_view());
  }
  proto::Reply send(const std::string& bytes) { return send(std::vector<std::string>{bytes}); }
};
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
  CHECK(j.at("frames_published").get<std::uint64_t>() > 0);
  CHECK(j.at("width") == 128);
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

BACKEND_TEST("a client SIGKILLed mid-frame 20 times leaves the daemon stepping with flat memory",
             "[integration][faults]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  std::uint64_t last_step = 0, rss_after_warmup = 0;
  for (int i = 0; i < 20; ++i) {
    ChildProcess viewer(
        {bin("cuview-ctl"), "--name", "t", "attach", "--frames", "1000000", "--verify", "--hold-ms", "30"});
    // Mid-frame: the viewer holds a slot when it dies.
    (void)wait_stats("t", [](const StatsView& s) { return s.readers == 1 && s.held_slots == 1; });
    viewer.signal(SIGKILL);
    REQUIRE(viewer.wait_for(10s) == 128 + SIGKILL);
    auto s = wait_stats("t", [](const StatsView& v) { return v.readers == 0 && v.held_slots == 0; });
    CHECK(s.step > last_step);
    last_step = s.step;
    if (i == 4) rss_after_warmup = s.rss_kib;
  }
  auto end = stats("t");
  INFO("daemon RSS after 5 kills: " << rss_after_warmup << " KiB, after 20: " << end.rss_kib << " KiB");
  CHECK(end.rss_kib <= rss_after_warmup + 2048);
  CHECK(daemon.running());
  CHECK(ctl("t", {"attach", "--frames", "5", "--verify"}).code == 0);
}

BACKEND_TEST("a SIGSTOPped client holding a frame does not stop the daemon or other clients", "[integration][faults]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  ChildProcess frozen({bin("cuview-ctl"), "--name", "t", "attach", "--frames", "2", "--hold-ms", "600000"});
  (void)wait_stats("t", [](const StatsView& s) { return s.held_slots == 1; });
  frozen.signal(SIGSTOP);
  const auto before = stats("t");
  auto c = attach("t");
  std::uint64_t prev = 0;
  for (int i = 0; i < 20; ++i) {
    auto f = c.next_frame(10s);
    REQUIRE(f);
    CHECK(f->info().seq > prev);
    prev = f->info().seq;
    REQUIRE_FALSE(f->verify());
  }
  const auto after = stats("t");
  CHECK(after.step > before.step);
  // The first of our 20 frames may predate `before`; the other 19 were published since.
  CHECK(after.frames_published >= before.frames_published + 19);
  CHECK(after.held_slots <= 2);  // the frozen viewer's slot, and possibly ours
  frozen.signal(SIGCONT);
}

BACKEND_TEST("a killed daemon is noticed, stale sessions are refused, and clients re-attach",
             "[integration][restart]") {
  RuntimeDir rt;
  auto daemon = std::make_unique<ChildProcess>(start_daemon("t", backend));
  auto c = attach("t");
  const std::string old_session = c.hello().session;
  {
    auto f = c.next_frame(10s);
    REQUIRE(f);
  }
  daemon->signal(SIGKILL);
  REQUIRE(daemon->wait_for(10s));
  // Noticed within a second: the wait below must end with daemon_gone, not with its timeout.
  try {
    (void)c.next_frame(1000ms);
    FAIL("next_frame returned although the daemon was killed");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::daemon_gone);
  }
  CHECK_FALSE(c.daemon_alive());
  CHECK_THROWS_AS(c.stats(), Error);

  daemon = std::make_unique<ChildProcess>(start_daemon("t", backend));
  RawPeer raw("t");
  auto reply = raw.send(proto::encode_request("handles", 1, old_session, proto::NoArgs{}));
  CHECK_FALSE(reply.ok);
  CHECK(reply.error.code == "stale_session");
  CHECK_THAT(reply.error.message, Catch::Contains(old_session) && Catch::Contains("attach again"));

  auto fresh = attach("t");
  CHECK(fresh.hello().session != old_session);
  auto f = fresh.next_frame(10s);
  REQUIRE(f);
  CHECK_FALSE(f->verify());
}

BACKEND_TEST("cuview-ctl attach --reattach follows a daemon killed or stopped mid-attach", "[integration][restart]") {
  const int sig = GENERATE(SIGKILL, SIGTERM);
  INFO("daemon ended with signal " << sig);
  RuntimeDir rt;
  auto daemon = std::make_unique<ChildProcess>(start_daemon("t", backend, {"--fps", "20"}));
  ChildProcess viewer({bin("cuview-ctl"), "--name", "t", "attach", "--frames", "60", "--verify", "--reattach"});
  // `readers` counts a client once it has asked for the handles, before it opened them: the
  // daemon goes while the viewer is still importing its ring.
  (void)wait_stats("t", [](const StatsView& s) { return s.readers == 1; });
  daemon->signal(sig);
  REQUIRE(daemon->wait_for(10s));
  daemon = std::make_unique<ChildProcess>(start_daemon("t", backend, {"--fps", "20"}));
  auto code = viewer.wait_for(60s);
  INFO(viewer.out() << viewer.err());
  REQUIRE(code);
  CHECK(*code == 0);
  CHECK_THAT(viewer.out(), Catch::Contains("60 verified intact"));
  // It ended on the new daemon (killed mid-import, the first session may never have completed).
  const std::string out = viewer.out();
  const std::string attached = "attached to 't' session ";
  const auto at = out.rfind(attached);
  REQUIRE(at != std::string::npos);
  CHECK(out.substr(at + attached.size(), 32) == stats("t").session);
}

BACKEND_TEST("a second daemon with the same name is refused and the first keeps running", "[integration][lock]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  const auto s = stats("t");
  ChildProcess second({bin("cuview-compute"), "--name", "t", "--backend", "host", "--size", "64x64"});
  auto code = second.wait_for(30s);
  REQUIRE(code);
  CHECK(*code == 3);
  CHECK_THAT(second.err(), Catch::Contains("already running") && Catch::Contains("--name"));
  CHECK(stats("t").session == s.session);
  CHECK(ctl("t", {"attach", "--frames", "3", "--verify"}).code == 0);
}

BACKEND_TEST("bad requests get specific errors and the daemon keeps its state", "[integration][bad-input]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  const auto before = stats("t");
  RawPeer raw("t");
  struct Case {
    std::string bytes;
    const char* code;
    const char* says;
  };
  const std::string hello = proto::encode_request("hello", 1, "", proto::HelloArgs{"raw", ::getpid()});
  const std::vector<Case> cases{
      {"\xc1 not msgpack", "bad_message", "MessagePack"},
      {hello.substr(0, hello.size() / 2), "bad_message", "truncated"},
      {proto::encode(std::vector<int>{1, 2}), "bad_message", "map"},
      {proto::encode_request("stats", 2, before.session, proto::NoArgs{}, 99), "version_mismatch", "protocol 99"},
      {proto::encode_request("fly", 3, before.session, proto::NoArgs{}), "unknown_op", "'fly'"},
      {proto::encode_request("handles", 4, before.session, proto::NoArgs{}), "not_attached", "hello"},
      {proto::encode_request("stats", 5, "", proto::NoArgs{}), "missing_field", "session"},
      {proto::encode_request("hello", 6, "", proto::HelloArgs{"raw", 999999999}), "bad_value", "999999999"},
  };
  for (const auto& c : cases) {
    auto r = raw.send(c.bytes);
    INFO("expected " << c.code << ", got " << r.error.code << ": " << r.error.message);
    CHECK_FALSE(r.ok);
    CHECK(r.error.code == c.code);
    CHECK_THAT(r.error.message, Catch::Contains(c.says));
  }
  REQUIRE(raw.send(hello).ok);
  const std::vector<Case> attached{
      {proto::encode_request("step", 7, before.session, Unknown{}), "unknown_field", "'colour'"},
      {proto::encode_request("step", 8, before.session, proto::StepArgs{0}), "out_of_range", "step 0"},
      {proto::encode_request("set", 9, before.session, proto::SetArgs{std::map<std::string, double>{{"F", 7.0}}, {}}),
       "out_of_range", "F=7"},
      {proto::encode_request("set", 10, before.session,
                             proto::SetArgs{std::map<std::string, double>{{"F", 0.01}, {"warp", 9.0}}, {}}),
       "bad_value", "'warp'"},
      {proto::encode_request("stats", 11, "0123456789abcdef0123456789abcdef", proto::NoArgs{}), "stale_session",
       "never issued"},
      // protocol.md: a session that is not this run's is refused before the op is looked at.
      {proto::encode_request("fly", 12, "0123456789abcdef0123456789abcdef", proto::NoArgs{}), "stale_session",
       "earlier run"},
  };
  for (const auto& c : attached) {
    auto r = raw.send(c.bytes);
    INFO("expected " << c.code << ", got " << r.error.code << ": " << r.error.message);
    CHECK_FALSE(r.ok);
    CHECK(r.error.code == c.code);
    CHECK_THAT(r.error.message, Catch::Contains(c.says));
  }
  auto parts = raw.send(std::vector<std::string>{"a", "b", "c"});
  CHECK(parts.error.code == "bad_message");
  CHECK_THAT(parts.error.message, Catch::Contains("3 parts"));

  // State intact: same session, F untouched by the refused `set`s, still stepping and serving.
  const auto after = wait_stats("t", [&](const StatsView& s) { return s.step > before.step; });
  CHECK(after.session == before.session);
  CHECK(after.F == before.F);
  CHECK(daemon.running());
  CHECK(ctl("t", {"attach", "--frames", "3", "--verify"}).code == 0);
}

BACKEND_TEST("pause, step, set and reset from a client take effect", "[integration][ctl]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  REQUIRE(ctl("t", {"pause"}).code == 0);
  CHECK(stats("t").paused);
  // The batch under way when the pause came may still finish; then the step holds still.
  std::this_thread::sleep_for(300ms);
  const auto paused = stats("t");
  std::this_thread::sleep_for(300ms);
  CHECK(stats("t").step == paused.step);
  REQUIRE(ctl("t", {"step", "5"}).code == 0);
  (void)wait_stats("t", [&](const StatsView& s) { return s.step == paused.step + 5; });
  REQUIRE(ctl("t", {"set", "F=0.03"}).code == 0);
  CHECK(stats("t").F == 0.03);
  auto bad = ctl("t", {"set", "F=2"});
  CHECK(bad.code != 0);
  CHECK_THAT(bad.err, Catch::Contains("out of range"));
  REQUIRE(ctl("t", {"reset"}).code == 0);
  CHECK(stats("t").step == 0);
  REQUIRE(ctl("t", {"resume"}).code == 0);
  (void)wait_stats("t", [](const StatsView& s) { return !s.paused && s.step > 0; });
}

BACKEND_TEST("SIGTERM shuts down gracefully: clients are told, files and segments are removed",
             "[integration][lifecycle]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", backend);
  auto segments = segments_of("t");
  REQUIRE_FALSE(segments.empty());
  auto c = attach("t");
  daemon.signal(SIGTERM);
  REQUIRE(daemon.wait_for(30s) == 0);
  try {
    (void)c.next_frame(1000ms);
    FAIL("next_frame returned after shutdown");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::daemon_gone);
  }
  for (const auto& s : segments) CHECK_FALSE(shm_exists(s));
  CHECK_FALSE(fs::exists(InstancePaths("t").control));
  CHECK_FALSE(daemon_running("t"));
  auto r = ctl("t", {"status"});
  CHECK(r.code != 0);
  CHECK_THAT(r.err, Catch::Contains("no cuview-compute daemon named 't'"));
}

BACKEND_TEST("a crashed daemon's leftovers are removed by the next start", "[integration][lifecycle]") {
  RuntimeDir rt;
  auto daemon = std::make_unique<ChildProcess>(start_daemon("t", backend));
  auto segments = segments_of("t");
  daemon->signal(SIGKILL);
  REQUIRE(daemon->wait_for(10s));
  for (const auto& s : segments) CHECK(shm_exists(s));
  daemon = std::make_unique<ChildProcess>(start_daemon("t", backend));
  for (const auto& s : segments) CHECK_FALSE(shm_exists(s));
  CHECK(ctl("t", {"attach", "--frames", "3", "--verify"}).code == 0);
}

TEST_CASE("a runtime directory open to other users makes the daemon refuse to start", "[integration][access]") {
  RuntimeDir rt;
  const auto dir = rt.path() / "cuview" / "t";
  fs::create_directories(dir);
  fs::permissions(rt.path() / "cuview", fs::perms::owner_all);
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                           fs::perms::others_exec);
  ChildProcess d({bin("cuview-compute"), "--name", "t", "--backend", "host"});
  auto code = d.wait_for(30s);
  REQUIRE(code);
  CHECK(*code == 1);
  CHECK_THAT(d.err(), Catch::Contains("0755") && Catch::Contains("chmod 700"));
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

TEST_CASE("host frames hold no subnormal values, which would slow the CPU several times", "[integration][host]") {
  // Regression: a fresh field diffuses ever tinier v into its zero background; without
  // flush-to-zero the host backend spent most of its time on subnormal arithmetic.
  RuntimeDir rt;
  auto daemon = start_daemon("t", Backend::host, {"--paused"});
  REQUIRE(ctl("t", {"step", "400"}).code == 0);
  (void)wait_stats("t", [](const StatsView& s) { return s.step == 400 && s.frames_published >= 2; });
  auto c = Client::attach(AttachOptions{.name = "t", .client = "subnormal check"});
  auto f = c.next_frame(10s);
  REQUIRE(f);
  REQUIRE(f->info().step == 400);
  std::size_t subnormal = 0, tiny_but_nonzero = 0;
  for (std::size_t field = 0; field < 2; ++field) {
    const float* x = f->host_field(field);
    for (std::size_t i = 0; i < 128 * 128; ++i) {
      subnormal += std::fpclassify(x[i]) == FP_SUBNORMAL;
      tiny_but_nonzero += x[i] != 0 && std::abs(x[i]) < 1e-30f;
    }
  }
  CHECK(subnormal == 0);
  CHECK(tiny_but_nonzero < 128 * 128);  // the diffusion front exists but is flushed, not denormal
}

TEST_CASE("the CUDA backend computes what the host backend computes", "[integration][gpu]") {
  require_backend(Backend::cuda);
  RuntimeDir rt;
  auto host = start_daemon("h", Backend::host, {"--paused", "--seed", "9"});
  auto gpu = start_daemon("g", Backend::cuda, {"--paused", "--seed", "9"});
  REQUIRE(ctl("h", {"step", "200"}).code == 0);
  REQUIRE(ctl("g", {"step", "200"}).code == 0);
  (void)wait_stats("h", [](const StatsView& s) { return s.step == 200 && s.frames_published >= 2; });
  (void)wait_stats("g", [](const StatsView& s) { return s.step == 200 && s.frames_published >= 2; });
  auto ch = attach("h");
  auto cg = attach("g");
  auto fh = ch.next_frame(10s);
  auto fg = cg.next_frame(10s);
  REQUIRE(fh);
  REQUIRE(fg);
  REQUIRE(fh->info().step == 200);
  REQUIRE(fg->info().step == 200);
  const auto bytes = ch.description().slot_bytes;
  std::vector<std::byte> a(bytes), b(bytes);
  fh->copy_to_host(a);
  fg->copy_to_host(b);
  const auto* x = reinterpret_cast<const float*>(a.data());
  const auto* y = reinterpret_cast<const float*>(b.data());
  const std::size_t stride = ch.description().fields.at(1).offset / sizeof(float);
  double worst = 0;
  for (std::size_t f = 0; f < 2; ++f)
    for (std::size_t i = 0; i < 128 * 128; ++i)
      worst = std::max(worst, double(std::abs(x[f * stride + i] - y[f * stride + i])));
  INFO("largest host/CUDA difference after 200 steps: " << worst);
  CHECK(worst < 1e-4);  // only floating-point contraction differs
}

TEST_CASE("every steps-per-launch setting gives the same bits, on any grid size", "[integration][gpu]") {
  require_backend(Backend::cuda);
  // 100x37 is no multiple of the fused kernel's 64x32 tile; 8x8 is smaller than its halo-padded
  // tile, so the periodic wrap is taken more than once. 203 steps leave a remainder for every K.
  const auto [size, cells] =
      GENERATE(std::pair<std::string, std::size_t>{"100x37", 100 * 37}, std::pair<std::string, std::size_t>{"8x8", 64},
               std::pair<std::string, std::size_t>{"256x256", 256 * 256});
  RuntimeDir rt;
  std::vector<std::vector<float>> results;
  for (int k = 1; k <= 4; ++k) {
    const std::string name = std::string("k").append(std::to_string(k));
    auto d =
        start_daemon(name, Backend::cuda, {"--paused", "--seed", "5", "--steps-per-launch", std::to_string(k)}, size);
    REQUIRE(ctl(name, {"step", "203"}).code == 0);
    (void)wait_stats(name, [](const StatsView& s) { return s.step == 203; });
    auto c = attach(name);
    std::optional<Frame> f;
    while (auto g = c.next_frame(2s)) f = std::move(g);  // the newest frame: step 203
    REQUIRE(f);
    REQUIRE(f->info().step == 203);
    REQUIRE_FALSE(f->verify());
    std::vector<std::byte> raw(c.description().slot_bytes);
    f->copy_to_host(raw);
    const std::size_t stride = c.description().fields.at(1).offset;
    std::vector<float> both(2 * cells);
    std::memcpy(both.data(), raw.data(), cells * sizeof(float));
    std::memcpy(both.data() + cells, raw.data() + stride, cells * sizeof(float));
    results.push_back(std::move(both));
  }
  for (std::size_t k = 1; k < results.size(); ++k) {
    std::size_t differ = 0;
    for (std::size_t i = 0; i < results[0].size(); ++i) differ += results[k][i] != results[0][i];
    INFO(size << ": " << k + 1 << " steps per launch against 1: " << differ << " of " << results[0].size()
              << " values differ");
    CHECK(differ == 0);
  }
}

namespace {
/// The float32 cell (x, y) of scalar field `name` in `frame` (copied to the host).
float cell(const Frame& frame, const proto::DescribeResult& d, const std::string& name, std::uint32_t x,
           std::uint32_t y) {
  const auto f = std::find_if(d.fields.begin(), d.fields.end(), [&](const auto& f) { return f.name == name; });
  REQUIRE(f != d.fields.end());
  float v = 0;
  frame.copy_to_host(f->offset + (std::size_t{y} * d.width + x) * sizeof v, std::as_writable_bytes(std::span(&v, 1)));
  return v;
}
}  // namespace

BACKEND_TEST("a stroke, a set or a reset on a paused simulation shows in a new frame at once",
             "[integration][ctl][steering]") {
  RuntimeDir rt;
  auto daemon = start_daemon("p", backend, {"--sim", "lbm", "--paused"}, "128x64");
  auto c = attach("p");
  const auto& d = c.description();
  auto first = c.next_frame(10s);
  REQUIRE(first);
  const auto step = first->info().step;
  CHECK(cell(*first, d, "speed", 20, 10) > 0);  // fluid, moving with the inflow
  first.reset();
  CHECK_FALSE(c.next_frame(300ms));  // paused: nothing new by itself

  REQUIRE(ctl("p", {"draw", "obstacles", "20", "10", "--radius", "3"}).code == 0);
  auto drawn = c.next_frame(10s);
  REQUIRE(drawn);
  CHECK(drawn->info().step == step);
  CHECK(cell(*drawn, d, "speed", 20, 10) == 0);  // the stroke is in it: a solid cell does not move
  drawn.reset();

  const auto& p = d.params.front();
  REQUIRE(ctl("p", {"set", p.name + "=" + std::to_string((p.min + p.max) / 2)}).code == 0);
  auto set = c.next_frame(10s);
  REQUIRE(set);
  CHECK(set->info().step == step);
  set.reset();

  REQUIRE(ctl("p", {"step", "3"}).code == 0);
  auto stepped = c.next_frame(10s);
  REQUIRE(stepped);
  CHECK(stepped->info().step == step + 3);
  stepped.reset();
  REQUIRE(ctl("p", {"reset"}).code == 0);
  auto reset = c.next_frame(10s);
  REQUIRE(reset);
  CHECK(reset->info().step == 0);
  CHECK(stats("p").paused);
}

BACKEND_TEST("a paused embedded program shows a set or a reset in a new frame at once",
             "[integration][embedded][steering]") {
  RuntimeDir rt;
  auto wave = start_embed_wave("w", backend);
  REQUIRE(ctl("w", {"pause"}).code == 0);
  (void)wait_stats("w", [](const StatsView& s) { return s.paused; });
  auto c = attach("w");
  while (c.next_frame(500ms)) {
  }  // whatever was published before the pause took effect
  REQUIRE(ctl("w", {"set", "rain=10"}).code == 0);
  auto set = c.next_frame(10s);
  REQUIRE(set);
  set.reset();
  REQUIRE(ctl("w", {"reset"}).code == 0);
  auto reset = c.next_frame(10s);
  REQUIRE(reset);
  CHECK(reset->info().step == 0);
}

BACKEND_TEST("after a reset the step rate stays a rate, for cuview-compute and an embedded program",
             "[integration][ctl][steering]") {
  RuntimeDir rt;
  auto daemon = start_daemon("r", backend);
  auto wave = start_embed_wave("w", backend);
  for (const char* name : {"r", "w"}) {
    INFO(name);
    (void)wait_stats(name, [](const StatsView& s) { return s.step > 400; });
    auto c = Client::attach({.name = name, .client = "rate test", .import = Import::control_only});
    REQUIRE(ctl(name, {"reset"}).code == 0);
    const auto until = std::chrono::steady_clock::now() + 1500ms;  // past the rate's half-second window
    while (std::chrono::steady_clock::now() < until) {
      const auto s = c.stats();
      INFO("step " << s.step << ", " << s.steps_per_second << " steps/s");
      REQUIRE(s.steps_per_second >= 0);
      REQUIRE(s.steps_per_second < 1e9);
      std::this_thread::sleep_for(20ms);
    }
    auto st = ctl(name, {"status"});  // as a person reads it: "step N (t = T), R steps/s"
    REQUIRE(st.code == 0);
    std::smatch m;
    REQUIRE(std::regex_search(st.out, m, std::regex(R"(, (\d+) steps/s)")));
    INFO(st.out);
    CHECK(m[1].length() < 10);
  }
}

TEST_CASE("--device names the GPU; on the host backend, or with no usable GPU, asking for one is refused",
          "[integration][device][host]") {
  RuntimeDir rt;
  ChildProcess host({bin("cuview-compute"), "--name", "d", "--backend", "host", "--device", "1"});
  auto code = host.wait_for(30s);
  REQUIRE(code);
  CHECK(*code == 1);
  CHECK_THAT(host.err(), Catch::Contains("GPU 1") && Catch::Contains("host backend runs on the CPU"));
  std::string why;
  if (!cuda_usable(&why)) {  // CI: auto must not quietly run on the CPU when a GPU was asked for
    ChildProcess gpu({bin("cuview-compute"), "--name", "d", "--device", "0"});
    code = gpu.wait_for(30s);
    REQUIRE(code);
    CHECK(*code == 1);
    CHECK_THAT(gpu.err(), Catch::Contains("GPU 0"));
  }
  auto bad = ChildProcess({bin("cuview-compute"), "--name", "d", "--device", "-1"});
  code = bad.wait_for(30s);
  REQUIRE(code);
  CHECK(*code != 0);
}

#ifdef CUVIEW_HAVE_CUDA
TEST_CASE("--device N runs on GPU N, named with its PCI id; a GPU that does not exist is refused naming those that do",
          "[integration][device][gpu]") {
  require_backend(Backend::cuda);
  RuntimeDir rt;
  ChildProcess none({bin("cuview-compute"), "--name", "d", "--backend", "cuda", "--device", "99"});
  auto code = none.wait_for(30s);
  REQUIRE(code);
  CHECK(*code == 1);
  CHECK_THAT(none.err(), Catch::Contains("no GPU 99") && Catch::Contains("0 (") && Catch::Contains("PCI"));
  int gpus = 0;
  REQUIRE(cudaGetDeviceCount(&gpus) == cudaSuccess);
  for (int n = 0; n < gpus; ++n) {
    const std::string gpu = "GPU " + std::to_string(n) + ": ";
    INFO(gpu);
    auto daemon = start_daemon("d", Backend::cuda, {"--device", std::to_string(n)}, "64x64");
    auto st = ctl("d", {"status"});
    CHECK_THAT(st.out, Catch::Contains(gpu) && Catch::Contains("(PCI "));
    auto c = attach("d");
    CHECK_THAT(c.description().device, Catch::Contains(gpu));
    auto f = c.next_frame(10s);
    REQUIRE(f);
    CHECK_FALSE(f->verify());
    const std::string& named = c.description().device;
    const auto pci = named.find("PCI ") + 4;
    int here = -1;  // the frame's GPU in this process, found by the PCI id the daemon named
    REQUIRE(cudaDeviceGetByPCIBusId(&here, named.substr(pci, named.find(')', pci) - pci).c_str()) == cudaSuccess);
    CHECK(f->device() == here);
    f.reset();
    daemon.signal(SIGTERM);
    CHECK(daemon.wait_for(30s) == 0);
    CHECK_THAT(daemon.err(), Catch::Contains(gpu));  // the log names it too
  }
}
#endif
