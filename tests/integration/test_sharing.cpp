// How frames cross processes: --sharing and its refusals, the descriptor socket (who gets
// descriptors and who is refused), and that nothing leaks. On CUDA the mechanism under test is
// the one CUVIEW_SHARING names (scripts/gpu-check.sh runs the [gpu] tests once per mechanism).
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#ifdef CUVIEW_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include <cstring>
#include <filesystem>
#include <set>
#include <nlohmann/json.hpp>
#include <thread>
#include <zmq.hpp>

#include "backend_test.hpp"
#include "protocol_client.hpp"
#include "cuview/client.hpp"
#include "cuview/fd_passing.hpp"
#include "cuview/publisher.hpp"
#include "cuview/runtime_dir.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

/// The mechanism a daemon on `backend` uses by default in this run.
std::string expected_sharing(Backend backend) {
  if (backend == Backend::host) return "shm";
  const char* env = std::getenv("CUVIEW_SHARING");
  return env != nullptr && *env != '\0' ? env : "legacy";
}

struct Asked {
  proto::FdReply reply;
  std::vector<UniqueFd> fds;
};
Asked ask_fds(const std::string& path, const std::string& request_bytes) {
  Asked a;
  UniqueFd s = connect_fd_socket(path);
  send_with_fds(s.get(), request_bytes, {}, "test request");
  const auto bytes = receive_with_fds(s.get(), a.fds, 5000ms, "test reply");
  a.reply = proto::decode_bytes<proto::FdReply>(bytes, "descriptor reply");
  return a;
}
Asked ask_fds(const std::string& path, const proto::FdRequest& r) { return ask_fds(path, proto::encode(r)); }

/// Runs `body` in a forked child (no threads of ours run there) and returns what it wrote.
std::string in_child(const std::function<std::string()>& body) {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(p[0]);
    std::string out;
    try {
      out = body();
    } catch (const std::exception& e) {
      out = std::string("threw: ") + e.what();
    }
    (void)!::write(p[1], out.data(), out.size());
    ::_exit(0);
  }
  ::close(p[1]);
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
  ::close(p[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return got;
}

std::size_t open_fds(pid_t pid) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) ++n;
  return n;
}

}  // namespace

TEST_CASE("--sharing refuses a mechanism the backend does not offer, saying what would work",
          "[integration][sharing][host]") {
  RuntimeDir rt;
  for (const char* m : {"legacy", "vmm", "pool"}) {
    ChildProcess d({bin("cuview-compute"), "--name", "s", "--backend", "host", "--sharing", m});
    const auto code = d.wait_for(30s);
    REQUIRE(code);
    CHECK(*code != 0);
    INFO(d.err());
    CHECK_THAT(d.err(), Catch::Contains(std::string("sharing '") + m + "'") && Catch::Contains("host backend") &&
                            Catch::Contains("--sharing auto"));
    CHECK_FALSE(daemon_running("s"));
  }
  ChildProcess bogus({bin("cuview-compute"), "--name", "s", "--backend", "host", "--sharing", "carrier-pigeon"});
  REQUIRE(bogus.wait_for(30s));
  CHECK_THAT(bogus.err(), Catch::Contains("--sharing") && Catch::Contains("carrier-pigeon"));

  // The embedded publisher refuses the same way, and unknown names as such.
  try {
    Publisher pub({.name = "s", .backend = "host", .sharing = "vmm"});
    FAIL("a host publisher accepted sharing 'vmm'");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::unsupported);
    CHECK_THAT(e.what(), Catch::Contains("'vmm'") && Catch::Contains("POSIX shared memory"));
  }
  try {
    Publisher pub({.name = "s", .backend = "host", .sharing = "fax"});
    FAIL("a publisher accepted sharing 'fax'");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::bad_value);
    CHECK_THAT(e.what(), Catch::Contains("'fax'") && Catch::Contains("legacy") && Catch::Contains("pool"));
  }
  // A host daemon ignores CUVIEW_SHARING (it names a CUDA mechanism) and shares by shm.
  ::setenv("CUVIEW_SHARING", "vmm", 1);
  auto daemon = start_daemon("s", Backend::host);
  ::unsetenv("CUVIEW_SHARING");
  auto r = ctl("s", {"status", "--json"});
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["sharing"] == "shm");
}

BACKEND_TEST("the descriptor socket hands descriptors only to the process that said hello, in this session",
             "[integration][sharing]") {
  RuntimeDir rt;
  auto daemon = start_daemon("fd", backend);
  ProtocolClient raw("fd", "raw sharing test");
  const auto h = raw.call<proto::HandlesResult>("handles", proto::NoArgs{});
  CHECK(h.sharing == expected_sharing(backend));
  const bool needs_fds = h.sharing == "vmm" || h.sharing == "pool";
  CHECK(h.fds == (needs_fds ? 1u : 0u));
  CHECK(h.fd_numbers.size() == h.fds);
  REQUIRE(h.fd_socket == InstancePaths("fd").fds.string());
  struct stat st {};
  REQUIRE(::stat(h.fd_socket.c_str(), &st) == 0);
  CHECK(S_ISSOCK(st.st_mode));
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(h.fd_token.size() == 32);

  SECTION("the client that said hello gets the descriptors, as often as it asks, past a silent connection") {
    UniqueFd silent = connect_fd_socket(h.fd_socket);  // connects and never asks: must not hold anyone up
    for (int i = 0; i < 3; ++i) {
      auto a = ask_fds(h.fd_socket, {proto::kVersion, raw.session, h.fd_token});
      INFO(a.reply.code << ": " << a.reply.message);
      CHECK(a.reply.code.empty());
      CHECK(a.fds.size() == h.fds);
      for (const auto& fd : a.fds) {
        struct stat fs {};
        CHECK(::fstat(fd.get(), &fs) == 0);
      }
    }
  }
  SECTION("a token no client holds is refused: say hello first") {
    auto a = ask_fds(h.fd_socket, {proto::kVersion, raw.session, "00112233445566778899aabbccddeeff"});
    CHECK(a.reply.code == "not_attached");
    CHECK_THAT(a.reply.message, Catch::Contains("hello") && Catch::Contains("handles"));
    CHECK(a.fds.empty());
  }
  SECTION("a session of an earlier run is refused") {
    auto a = ask_fds(h.fd_socket, {proto::kVersion, "0123456789abcdef0123456789abcdef", h.fd_token});
    CHECK(a.reply.code == "stale_session");
    CHECK_THAT(a.reply.message, Catch::Contains("earlier run") && Catch::Contains("attach again"));
    CHECK(a.fds.empty());
  }
  SECTION("a version from before the stable protocol is refused, naming both") {
    auto a = ask_fds(h.fd_socket, {proto::kFirstStable - 1, raw.session, h.fd_token});
    CHECK(a.reply.code == "version_mismatch");
    CHECK_THAT(a.reply.message, Catch::Contains("protocol " + std::to_string(proto::kFirstStable - 1)) &&
                                    Catch::Contains("protocols " + std::to_string(proto::kFirstStable)));
    CHECK(a.fds.empty());
  }
  SECTION("bytes that are not a request are refused") {
    auto a = ask_fds(h.fd_socket, std::string("\xc1 garbage"));
    CHECK(a.reply.code == "bad_message");
    CHECK(a.fds.empty());
  }
  SECTION("another process presenting the token is refused: each fetches its own") {
    const std::string request = proto::encode(proto::FdRequest{proto::kVersion, raw.session, h.fd_token});
    const std::string got = in_child([&] {
      Asked a = ask_fds(h.fd_socket, request);
      return a.reply.code + "|" + std::to_string(a.fds.size()) + "|" + a.reply.message;
    });
    INFO(got);
    CHECK_THAT(got, Catch::StartsWith("access|0|") && Catch::Contains("each process fetches its own"));
  }
  SECTION("another user cannot even connect") {
    if (::geteuid() != 0) {
      WARN("not root: cannot run a client as another user here; the socket's mode (0600) is checked above");
    } else {
      const std::string got = in_child([&] {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) return std::string("setuid failed");
        try {
          (void)connect_fd_socket(h.fd_socket);
          return std::string("connected");
        } catch (const Error& e) {
          return std::string(to_string(e.code())) + "|" + e.what();
        }
      });
      INFO(got);
      CHECK_THAT(got, Catch::StartsWith("access|") && Catch::Contains("another user"));
    }
  }
  SECTION("after detach the token is worthless") {
    (void)raw.call<proto::NoArgs>("detach", proto::NoArgs{});
    auto a = ask_fds(h.fd_socket, {proto::kVersion, raw.session, h.fd_token});
    CHECK(a.reply.code == "not_attached");
    CHECK(a.fds.empty());
  }
  // The daemon serves on, frames intact.
  CHECK(daemon.running());
  CHECK(ctl("fd", {"attach", "--frames", "3", "--verify"}).code == 0);
}

BACKEND_TEST("clients killed at any moment, and idle descriptor-socket connections, leak nothing in the daemon",
             "[integration][sharing][faults]") {
  RuntimeDir rt;
  auto daemon = start_daemon("leak", backend);
  REQUIRE(ctl("leak", {"attach", "--frames", "2", "--verify"}).code == 0);
  wait_stats("leak", [](const StatsView& s) { return s.clients == 1; });  // only this status query
  // The daemon's end of a connection that just closed goes away on ZeroMQ's I/O thread, a moment
  // later: count once the number holds still.
  std::size_t before = open_fds(daemon.pid());
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(100ms);
    const std::size_t now = open_fds(daemon.pid());
    if (now == before) break;
    before = now;
  }
  for (int i = 0; i < 12; ++i) {
    ChildProcess viewer({bin("cuview-ctl"), "--name", "leak", "attach", "--frames", "1000000"});
    std::this_thread::sleep_for(std::chrono::milliseconds(40 * (i % 6)));  // before, during and after import
    viewer.signal(SIGKILL);
    (void)viewer.wait_for(5s);
  }
  for (int i = 0; i < 8; ++i) {  // connect and say nothing, or hang up at once
    UniqueFd s = connect_fd_socket(InstancePaths("leak").fds);
    if (i % 2 == 0) std::this_thread::sleep_for(300ms);
  }
  const auto s = wait_stats("leak", [](const StatsView& v) { return v.clients == 1 && v.held_slots == 0; });
  CHECK(s.readers == 0);
  std::size_t after = open_fds(daemon.pid());
  for (int i = 0; i < 40 && after != before; ++i) {  // silent connections are dropped after a second
    std::this_thread::sleep_for(100ms);
    after = open_fds(daemon.pid());
  }
  CHECK(after == before);
  CHECK(ctl("leak", {"attach", "--frames", "3", "--verify"}).code == 0);
}

BACKEND_TEST("attaching and detaching 10 times leaves this client's descriptors and mappings flat",
             "[integration][sharing]") {
  RuntimeDir rt;
  auto daemon = start_daemon("flat", backend);
  auto once = [] {
    AttachOptions o;
    o.name = "flat";
    o.client = "flat test";
    auto c = Client::attach(o);
    auto f = c.next_frame(10s);
    REQUIRE(f);
    CHECK_FALSE(f->verify());
    return c.sharing();
  };
  CHECK(once() == expected_sharing(backend));  // the first one creates CUDA's context: count after it
  const std::size_t before = open_fds(::getpid());
  for (int i = 0; i < 10; ++i) (void)once();
  CHECK(open_fds(::getpid()) == before);
}

BACKEND_TEST("a client's first frame maps one slot; the others are mapped as frames in them are taken",
             "[integration][sharing]") {
  RuntimeDir rt;
  auto daemon = start_daemon("lazy", backend);
  AttachOptions o;
  o.name = "lazy";
  o.client = "lazy test";
  auto c = Client::attach(o);
  const std::uint32_t slots = c.description().slots;
  REQUIRE(slots >= 3);
  CHECK(c.mapped_slots() == 0);  // attached: nothing mapped yet
  const bool whole = c.sharing() == "vmm";  // one allocation, mapped whole
  {
    auto f = c.next_frame(10s);
    REQUIRE(f);
    CHECK_FALSE(f->verify());
    CHECK(c.mapped_slots() == (whole ? slots : 1u));
    INFO(c.attach_phases());
    CHECK_THAT(c.attach_phases(), Catch::Contains("hello and description") && Catch::Contains("until the first frame") &&
                                      Catch::Contains("mapping slot " + std::to_string(f->info().slot)));
  }
  // Frames in other slots map them as they come, each verified; never more than the ring holds.
  std::set<std::uint32_t> seen;
  for (int i = 0; i < 200 && seen.size() < slots; ++i) {
    auto f = c.next_frame(10s);
    REQUIRE(f);
    CHECK_FALSE(f->verify());
    seen.insert(f->info().slot);
    CHECK(c.mapped_slots() <= slots);
  }
  CHECK(c.mapped_slots() >= (whole ? slots : static_cast<std::uint32_t>(seen.size())));
}

TEST_CASE("a frame holds the fields its readers read, and two readers of different fields both get theirs",
          "[integration][sharing][host]") {
  RuntimeDir rt;
  auto daemon = start_daemon("r", Backend::host);
  // Alone, a reader of v gets frames holding v only (the daemon copies nothing else), verified.
  auto only = ctl("r", {"attach", "--frames", "3", "--verify", "--read", "v"});
  INFO(only.out << only.err);
  CHECK(only.code == 0);
  CHECK_THAT(only.out, Catch::Contains("3 verified intact") && Catch::Contains("the last frame held the fields: v\n"));
  // Two at once: each gets frames holding its own field (and the other's while both read).
  ChildProcess slow({bin("cuview-ctl"), "--name", "r", "attach", "--frames", "12", "--hold-ms", "100", "--verify",
                     "--read", "u"});
  auto quick = ctl("r", {"attach", "--frames", "6", "--verify", "--read", "v"});
  const auto code = slow.wait_for(60s);
  INFO(slow.out() << slow.err() << quick.out << quick.err);
  CHECK(code == 0);
  CHECK(quick.code == 0);
  CHECK_THAT(slow.out(), Catch::Contains("12 verified intact") && Catch::Contains("the last frame held the fields: u"));
  CHECK_THAT(quick.out, Catch::Contains("6 verified intact"));
  CHECK_THAT(quick.out, Catch::Matches("(.|\n)*the last frame held the fields: (u, )?v\n(.|\n)*"));
  // A reader that names no field reads every one, as before; one that names a field the daemon
  // lacks is told which it has.
  auto all = ctl("r", {"attach", "--frames", "2", "--verify"});
  CHECK(all.code == 0);
  auto bad = ctl("r", {"attach", "--frames", "1", "--read", "w"});
  CHECK(bad.code != 0);
  CHECK_THAT(bad.err, Catch::Contains("no field or particle set 'w'") && Catch::Contains("it has: u, v"));
  daemon.signal(SIGTERM);
  CHECK(daemon.wait_for(30s) == 0);
  // A simulation that writes its fields itself (the flow's moments, checksummed as written).
  auto flow = start_daemon("l", Backend::host, {"--sim", "lbm"}, "96x64");
  auto speed = ctl("l", {"attach", "--frames", "3", "--verify", "--read", "speed"});
  INFO(speed.out << speed.err);
  CHECK(speed.code == 0);
  CHECK_THAT(speed.out, Catch::Contains("3 verified intact") && Catch::Contains("the last frame held the fields: speed\n"));
  flow.signal(SIGTERM);
  CHECK(flow.wait_for(30s) == 0);
}

TEST_CASE("every CUDA mechanism this GPU offers carries verified frames to cuview-ctl", "[integration][sharing][gpu]") {
  require_backend(Backend::cuda);
  RuntimeDir rt;
  for (const char* m : {"legacy", "vmm", "pool"}) {
    INFO("--sharing " << m);
    auto daemon = start_daemon("m", Backend::cuda, {"--sharing", m});
    auto r = ctl("m", {"attach", "--frames", "20", "--verify"});
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains(std::string("shared by ") + m));
    // Only what is read is copied: a reader of v alone gets frames that hold v alone, intact.
    auto only = ctl("m", {"attach", "--frames", "5", "--verify", "--read", "v"});
    INFO(only.out << only.err);
    CHECK(only.code == 0);
    CHECK_THAT(only.out, Catch::Contains("5 verified intact") && Catch::Contains("the last frame held the fields: v\n"));
    {  // the flow's moments are written and checksummed by its own kernel: only the held ones count
      auto flow = start_daemon("l", Backend::cuda, {"--sharing", m, "--sim", "lbm3d"}, "64x48x40");
      for (const char* field : {"speed", "velocity,density"}) {
        auto f = ctl("l", {"attach", "--frames", "3", "--verify", "--read", field});
        INFO(f.out << f.err);
        CHECK(f.code == 0);
        CHECK_THAT(f.out, Catch::Contains("3 verified intact"));
      }
      flow.signal(SIGTERM);
      CHECK(flow.wait_for(30s) == 0);
      auto flat = start_daemon("l", Backend::cuda, {"--sharing", m, "--sim", "lbm"}, "256x128");
      auto f = ctl("l", {"attach", "--frames", "3", "--verify", "--read", "vorticity"});
      INFO(f.out << f.err);
      CHECK(f.code == 0);
      CHECK_THAT(f.out, Catch::Contains("the last frame held the fields: vorticity\n"));
      flat.signal(SIGTERM);
      CHECK(flat.wait_for(30s) == 0);
    }
    auto st = ctl("m", {"status", "--json"});
    CHECK(nlohmann::json::parse(st.out)["sharing"] == m);
    if (std::string(m) != "legacy") {
      // The second path: pidfd_getfd works where ptrace is allowed, and says why where not.
      ::setenv("CUVIEW_FD_TRANSFER", "pidfd", 1);
      auto p = ctl("m", {"attach", "--frames", "5", "--verify"});
      ::unsetenv("CUVIEW_FD_TRANSFER");
      INFO(p.out << p.err);
      if (p.code == 0)
        CHECK_THAT(p.out, Catch::Contains(std::string("shared by ") + m));
      else
        CHECK_THAT(p.err, Catch::Contains("pidfd_getfd") && Catch::Contains("ptrace"));
    }
    daemon.signal(SIGTERM);
    CHECK(daemon.wait_for(30s) == 0);
  }
}

#ifdef CUVIEW_HAVE_CUDA
namespace {
/// The calling thread's current CUDA context (the driver's view), through the runtime's entry
/// point table as the library reaches the driver.
void* current_context() {
  using GetCurrent = int (*)(void**);
  static GetCurrent get = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult status{};
    REQUIRE(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &p, 12000, cudaEnableDefault, &status) ==
            cudaSuccess);
    return reinterpret_cast<GetCurrent>(p);
  }();
  void* ctx = nullptr;
  REQUIRE(get(&ctx) == 0);
  return ctx;
}
}  // namespace

TEST_CASE("attaching, reading frames and detaching leave the caller's current GPU and context as they were",
          "[integration][sharing][gpu]") {
  require_backend(Backend::cuda);
  RuntimeDir rt;
  int gpus = 0;
  REQUIRE(cudaGetDeviceCount(&gpus) == cudaSuccess);
  const char* sharing = std::getenv("CUVIEW_SHARING");
  INFO("sharing " << (sharing ? sharing : "legacy") << ", " << gpus << " GPU(s)");
  auto daemon = start_daemon("keep", Backend::cuda, {}, "256x128");
  // A thread that never used CUDA: no context current, and none made current by the library.
  std::thread([&] {
    void* const before = current_context();
    CHECK(before == nullptr);
    {
      auto client = attach("keep");
      auto frame = client.next_frame(5s);
      REQUIRE(frame);
      CHECK_FALSE(frame->verify());
      CHECK(current_context() == before);
      std::vector<std::byte> row(64);
      frame->copy_to_host(0, row);
      frame->synchronize_device();
      CHECK(current_context() == before);
    }
    CHECK(current_context() == before);
  }).join();
  // A thread that made the last GPU current (GPU 1 of two, as a PyTorch user may): it stays current.
  std::thread([&] {
    const int mine = gpus - 1;
    REQUIRE(cudaSetDevice(mine) == cudaSuccess);
    void* const context = current_context();
    auto check_unmoved = [&](const char* after) {
      INFO("after " << after);
      int now = -1;
      REQUIRE(cudaGetDevice(&now) == cudaSuccess);
      CHECK(now == mine);
      CHECK(current_context() == context);
    };
    {
      auto client = attach("keep");
      check_unmoved("attach");
      auto frame = client.next_frame(5s);
      REQUIRE(frame);
      check_unmoved("next_frame");
      frame->wait();
      check_unmoved("wait");
      CHECK_FALSE(frame->verify());
      check_unmoved("verify");
      frame.reset();
      check_unmoved("release");
    }
    check_unmoved("detach");
  }).join();
  daemon.signal(SIGTERM);
  CHECK(daemon.wait_for(30s) == 0);
}
#endif
