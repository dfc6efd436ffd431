// cuview-faults: the reliability campaign. Drives real daemons, viewers and hostile peers,
// and prints, for each scenario, how many trials ran, how many failed and the worst figure seen.
//   cuview-faults [--config short|long] [--backend host|cuda] [--only NAME]... [--out FILE]
// Exit status: 0 when no trial failed. docs/reliability.md holds the results.
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>
#include <zmq.hpp>

#include "cuview/client.hpp"
#include "cuview/runtime_dir.hpp"
#include "process.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct Config {
  Backend backend = Backend::host;
  std::string size = "256x256";
  int ctl_kills = 40, gui_kills = 10, daemon_kills = 5, many_viewers = 16, embedded_kills = 20;
  std::chrono::seconds freeze{3}, slow{3}, hostile{5}, baseline{2};
  std::uint64_t seed = 1;
};

struct Row {
  explicit Row(std::string name) : scenario(std::move(name)) {}
  std::string scenario;
  int trials = 0, failures = 0;
  std::string worst;
  std::vector<std::string> problems;  // the first few failures, in words
  void fail(const std::string& why) {
    ++failures;
    if (problems.size() < 3) problems.push_back(why);
  }
};

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::string fmt(double v, int digits = 1) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << v;
  return s.str();
}

ChildProcess daemon_for(const Config& c, const std::string& name) { return start_daemon(name, c.backend, {}, c.size); }

/// One line of a Markdown table cell.
std::string cell(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '|', '/');
  return s;
}

/// Steps per second measured over `window` from the daemon's own step counter.
double step_rate(const std::string& name, std::chrono::seconds window) {
  const auto a = stats(name);
  const auto t = Clock::now();
  std::this_thread::sleep_for(window);
  const auto b = stats(name);
  return static_cast<double>(b.step - a.step) / (ms_since(t) / 1000.0);
}

/// Device memory in use on GPU 0, MiB (CUDA builds with a usable GPU), else -1.
double device_used_mib(const Config& c) {
#ifdef CUVIEW_HAVE_CUDA
  if (c.backend == Backend::cuda) {
    std::size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) == cudaSuccess) return static_cast<double>(total - free) / (1 << 20);
  }
#endif
  (void)c;
  return -1;
}

// ------------------------------------------------------------------ viewer death

/// Viewers killed at random moments against `publisher` (cuview-compute, or a program embedding
/// the publisher): the publisher keeps its step rate and memory, and every lease comes back.
std::vector<Row> viewer_death(const Config& c, const std::string& publisher, int ctl_kills, int gui_kills,
                              const std::string& sim = "") {
  RuntimeDir rt;
  const bool embedded = publisher == "embed-wave";
  auto daemon = embedded ? start_embed_wave("f", c.backend, c.size)
                : sim.empty()
                    ? daemon_for(c, "f")
                    : start_daemon("f", c.backend, {"--sim", sim}, c.backend == Backend::cuda ? "1024x512" : "128x64");
  const double rate0 = step_rate("f", c.baseline);
  const auto s0 = stats("f");
  const double dev0 = device_used_mib(c);
  std::mt19937_64 rng(c.seed);
  std::vector<Row> rows;
  for (const bool gui : {false, true}) {
    Row row{std::string(gui ? "viewer death: SIGKILL `cuview-gui --screenshot` at a random moment"
                            : "viewer death: SIGKILL `cuview-ctl attach --verify` at a random moment") +
            (embedded ? ", against embed-wave (embedded publisher)" : "") +
            (sim.empty() ? "" : ", against cuview-compute --sim " + sim)};
    const int n = gui ? gui_kills : ctl_kills;
    double worst_reclaim = 0;
    for (int i = 0; i < n; ++i) {
      std::vector<std::string> argv =
          gui ? std::vector<std::string>{bin("cuview-gui"),
                                         "--name",
                                         "f",
                                         "--screenshot",
                                         (rt.path() / "x.png").string(),
                                         "--frames",
                                         "1000000",
                                         "--timeout",
                                         "600"}
              : std::vector<std::string>{bin("cuview-ctl"), "--name",   "f",         "attach", "--frames",
                                         "1000000",         "--verify", "--hold-ms", "3"};
      ChildProcess viewer(argv);
      // Anywhere from before its hello to deep into its frames: mid-attach and mid-frame both.
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % (gui ? 1500 : 400)));
      viewer.signal(SIGKILL);
      (void)viewer.wait_for(10s);
      ++row.trials;
      const auto t = Clock::now();
      try {
        (void)wait_stats(
            "f", [](const StatsView& v) { return v.readers == 0 && v.held_slots == 0 && v.clients <= 1; }, 5s);
        worst_reclaim = std::max(worst_reclaim, ms_since(t));
      } catch (const std::exception& e) {
        row.fail(std::string("after kill ") + std::to_string(i + 1) + ": " + e.what());
      }
      if (!daemon.running()) {
        row.fail("the " + publisher + " exited: " + daemon.err());
        break;
      }
    }
    const double rate1 = step_rate("f", c.baseline);
    const auto s1 = stats("f");
    const double dev1 = device_used_mib(c);
    for (int k = 0; k < 3; ++k) {
      auto r = ctl("f", {"attach", "--frames", "5", "--verify"}, 60s);
      if (r.code != 0) row.fail("a later attach failed: " + r.err);
    }
    row.worst = "lease reclaimed ≤ " + fmt(worst_reclaim, 0) + " ms after the kill; " + publisher + " RSS " +
                std::to_string(static_cast<long long>(s1.rss_kib) - static_cast<long long>(s0.rss_kib)) +
                " KiB vs before; step rate " + fmt(rate1 / rate0, 2) + "× before";
    if (dev0 >= 0) row.worst += "; device memory " + fmt(dev1 - dev0, 1) + " MiB vs before";
    if (s1.held_slots != 0) row.fail(std::to_string(s1.held_slots) + " slot(s) still held");
    // Flat: generous bounds (a 2-core CI machine is noisy), far inside what a leak per kill or a
    // publisher slowed by its dead viewers would show.
    if (s1.rss_kib > s0.rss_kib + 16 * 1024)
      row.fail(publisher + " grew by " + std::to_string(s1.rss_kib - s0.rss_kib) + " KiB over the kills");
    if (rate1 < 0.5 * rate0) row.fail(publisher + " steps at " + fmt(rate1 / rate0, 2) + "× its rate before the kills");
    rows.push_back(row);
  }
  return rows;
}

// ------------------------------------------------------------------ frozen, slow and many viewers

std::vector<Row> frozen_and_slow(const Config& c) {
  RuntimeDir rt;
  auto daemon = daemon_for(c, "f");
  const double rate0 = step_rate("f", c.freeze);
  std::vector<Row> rows;
  auto judge = [&](Row& row, const StatsView& a, const StatsView& b, double rate) {
    ++row.trials;
    if (b.step <= a.step) row.fail("the simulation stopped stepping");
    if (b.frames_published <= a.frames_published) row.fail("the daemon stopped publishing frames");
    if (!daemon.running()) row.fail("the daemon exited");
    row.worst = "step rate " + fmt(rate, 0) + "/s = " + fmt(rate / rate0, 3) + "× the rate with no viewer (" +
                fmt(rate0, 0) + "/s)";
  };
  {
    Row row{"frozen viewer: SIGSTOP for " + std::to_string(c.freeze.count()) + " s while it holds a frame"};
    ChildProcess v({bin("cuview-ctl"), "--name", "f", "attach", "--frames", "1000000", "--verify"});
    (void)wait_stats("f", [](const StatsView& s) { return s.readers == 1; });
    v.signal(SIGSTOP);
    const auto a = stats("f");
    const double rate = step_rate("f", c.freeze);
    judge(row, a, stats("f"), rate);
    v.signal(SIGCONT);
    rows.push_back(row);
  }
  {
    Row row{"slow viewer: reads one frame per second"};
    ChildProcess v(
        {bin("cuview-ctl"), "--name", "f", "attach", "--frames", "1000000", "--verify", "--hold-ms", "1000"});
    (void)wait_stats("f", [](const StatsView& s) { return s.readers == 1; });
    const auto a = stats("f");
    const double rate = step_rate("f", c.slow);
    judge(row, a, stats("f"), rate);
    rows.push_back(row);
  }
  (void)wait_stats("f", [](const StatsView& s) { return s.readers == 0; });
  {
    Row row{std::to_string(c.many_viewers) + " viewers at once, each verifying every frame"};
    std::vector<ChildProcess> viewers;
    for (int i = 0; i < c.many_viewers; ++i)
      viewers.emplace_back(
          std::vector<std::string>{bin("cuview-ctl"), "--name", "f", "attach", "--frames", "1000000", "--verify"});
    const int n = c.many_viewers;
    (void)wait_stats(
        "f", [n](const StatsView& s) { return static_cast<int>(s.readers) == n; }, 60s);
    const auto a = stats("f");
    const double rate = step_rate("f", c.slow);
    judge(row, a, stats("f"), rate);
    for (auto& v : viewers) {
      if (!v.running()) row.fail("a viewer exited early: " + v.err());
    }
    rows.push_back(row);
  }
  return rows;
}

// ------------------------------------------------------------------ daemon death under viewers

std::vector<Row> daemon_death(const Config& c) {
  RuntimeDir rt;
  Row row{"daemon death: SIGKILL under 3 attached viewers, then a new daemon"};
  Row lock_row{"a live daemon's lock: a second daemon of the same name is refused"};
  double worst_notice = 0, worst_reattach = 0;
  for (int i = 0; i < c.daemon_kills; ++i) {
    auto daemon = std::make_unique<ChildProcess>(daemon_for(c, "f"));
    const std::string old_session = stats("f").session;
    const auto old_segments = segments_of("f");
    std::atomic<int> ready{0};
    std::atomic<std::int64_t> kill_ns{0};
    std::mutex mu;
    std::vector<double> notice_ms, reattach_ms;
    std::vector<std::string> problems;
    std::vector<std::thread> viewers;
    for (int v = 0; v < 3; ++v) {
      viewers.emplace_back([&] {
        auto report = [&](const std::string& p) {
          std::lock_guard lock(mu);
          problems.push_back(p);
        };
        try {
          auto client = Client::attach(AttachOptions{.name = "f", .client = "faults viewer"});
          bool counted = false;
          for (;;) {
            try {
              auto f = client.next_frame(10s);
              if (!f) return report("no frame within 10 s before the kill");
              if (auto bad = f->verify()) return report(*bad);
              if (!counted) ++ready, counted = true;
            } catch (const Error& e) {
              if (e.code() != Errc::daemon_gone) return report(std::string("unexpected error: ") + e.what());
              break;
            }
          }
          const double noticed = static_cast<double>(monotonic_ns() - kill_ns.load()) * 1e-6;
          if (kill_ns.load() == 0) return report("daemon_gone before the daemon was killed");
          // The old attachment must refuse to work; a new one must be a new session.
          try {
            (void)client.stats();
            return report("a request on the old session succeeded");
          } catch (const Error&) {
          }
          const auto t = Clock::now();
          std::optional<Client> fresh;
          while (!fresh) {
            try {
              fresh.emplace(Client::attach(AttachOptions{.name = "f", .client = "faults viewer", .timeout = 1000ms}));
            } catch (const Error&) {
              if (ms_since(t) > 30'000) return report("no re-attach within 30 s");
              std::this_thread::sleep_for(20ms);
            }
          }
          if (fresh->hello().session == old_session) return report("re-attached to the old session");
          auto f = fresh->next_frame(10s);
          if (!f) return report("no frame from the new daemon");
          if (auto bad = f->verify()) return report(*bad);
          std::lock_guard lock(mu);
          notice_ms.push_back(noticed);
          reattach_ms.push_back(ms_since(t));
        } catch (const std::exception& e) {
          report(e.what());
        }
      });
    }
    const auto t0 = Clock::now();
    while (ready.load() < 3 && ms_since(t0) < 30'000) std::this_thread::sleep_for(5ms);
    kill_ns = monotonic_ns();
    daemon->signal(SIGKILL);
    (void)daemon->wait_for(10s);
    daemon = std::make_unique<ChildProcess>(daemon_for(c, "f"));
    for (auto& t : viewers) t.join();
    ++row.trials;
    for (const auto& p : problems) row.fail(p);
    for (double n : notice_ms) {
      worst_notice = std::max(worst_notice, n);
      if (n > 1000) row.fail("a viewer noticed after " + fmt(n, 0) + " ms");
    }
    for (double r : reattach_ms) worst_reattach = std::max(worst_reattach, r);
    for (const auto& s : old_segments)
      if (shm_exists(s)) row.fail("segment " + s + " of the killed daemon survived the restart");
    // The new daemon is live: a second one must not take its lock.
    ++lock_row.trials;
    ChildProcess second({bin("cuview-compute"), "--name", "f", "--backend", "host", "--size", "16x16"});
    const auto code = second.wait_for(30s);
    if (!code || *code != 3)
      lock_row.fail("a second daemon was not refused (exit " + (code ? std::to_string(*code) : "none") + ")");
    if (stats("f").session == old_session) lock_row.fail("the old session answered");
    daemon->signal(SIGTERM);
    (void)daemon->wait_for(30s);
  }
  row.worst = "noticed ≤ " + fmt(worst_notice, 0) + " ms after the kill; re-attached ≤ " + fmt(worst_reattach, 0) +
              " ms after noticing (new daemon's start included)";
  lock_row.worst = "refused every time";
  return {row, lock_row};
}

// ------------------------------------------------------------------ hostile peers

std::vector<Row> hostile(const Config& c) {
  RuntimeDir rt;
  auto daemon = daemon_for(c, "f");
  Row row{"hostile peers: random, truncated, oversized, multi-part and out-of-order messages for " +
          std::to_string(c.hostile.count()) + " s"};
  Row good{"a well-behaved client served during the hostile run"};
  std::atomic<bool> done{false};
  std::atomic<int> good_frames{0};
  double worst_stats_ms = 0;
  std::string good_problem;
  std::thread well_behaved([&] {
    try {
      auto client = Client::attach(AttachOptions{.name = "f", .client = "faults good client"});
      while (!done) {
        auto f = client.next_frame(10s);
        if (!f) throw std::runtime_error("no frame within 10 s");
        if (auto bad = f->verify()) throw std::runtime_error(*bad);
        ++good_frames;
        const auto t = Clock::now();
        (void)client.stats();
        worst_stats_ms = std::max(worst_stats_ms, ms_since(t));
      }
    } catch (const std::exception& e) {
      good_problem = e.what();
    }
  });
  std::mt19937_64 rng(c.seed);
  zmq::context_t ctx;
  const std::string endpoint = InstancePaths("f").control_endpoint();
  const std::string session = stats("f").session;
  auto fresh_socket = [&] {
    zmq::socket_t s(ctx, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 0);
    s.set(zmq::sockopt::rcvtimeo, 3000);
    s.connect(endpoint);
    return s;
  };
  auto sock = fresh_socket();
  std::uint64_t sent = 0, answered = 0, dropped_by_design = 0;
  const std::string hello = proto::encode_request("hello", 1, "", proto::HelloArgs{"hostile", ::getpid()});
  const auto end = Clock::now() + c.hostile;
  while (Clock::now() < end) {
    std::vector<std::string> parts;
    bool expect_reply = true, ok_allowed = false;
    switch (rng() % 7) {
      case 0: {  // random bytes
        std::string b(rng() % 2048, '\0');
        for (auto& ch : b) ch = static_cast<char>(rng());
        parts = {b};
        break;
      }
      case 1: {  // a valid request cut short
        const auto full = proto::encode_request("set", rng(), session,
                                                proto::SetArgs{std::map<std::string, double>{{"F", 0.03}}, {}});
        parts = {full.substr(0, 1 + rng() % (full.size() - 1))};
        break;
      }
      case 2:  // over the 64 KiB request limit: answered with an error
        parts = {std::string(64 * 1024 + 1 + rng() % 4096, '\x90')};
        break;
      case 3:  // over the 1 MiB wire limit: ZeroMQ drops the connection, by design
        parts = {std::string(2 << 20, 'x')};
        expect_reply = false;
        break;
      case 4: {  // several parts
        parts.resize(2 + rng() % 4, "junk");
        break;
      }
      case 5: {  // out of order: ops before hello on a new connection, or hello twice
        sock = fresh_socket();
        const char* ops[] = {"handles", "detach", "step", "shutdown", "set"};
        parts = {proto::encode_request(ops[rng() % 5], rng(), session, proto::NoArgs{})};
        break;
      }
      default:  // well-formed, legal: hello (again)
        parts = {hello};
        ok_allowed = true;
        break;
    }
    for (std::size_t i = 0; i < parts.size(); ++i)
      sock.send(zmq::buffer(parts[i]), i + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
    ++sent;
    ++row.trials;
    if (!expect_reply) {
      ++dropped_by_design;
      sock = fresh_socket();
      continue;
    }
    zmq::message_t m;
    if (!sock.recv(m)) {
      row.fail("no answer to message " + std::to_string(sent) + " (kind " + std::to_string(parts.size()) + " parts)");
      sock = fresh_socket();
      continue;
    }
    ++answered;
    try {
      const auto r = proto::decode_reply(m.to_string_view());
      if (r.ok && !ok_allowed) row.fail("a hostile message was accepted");
      if (!r.ok && r.error.message.empty()) row.fail("an error without a message");
    } catch (const std::exception& e) {
      row.fail(std::string("an undecodable reply: ") + e.what());
    }
  }
  done = true;
  well_behaved.join();
  if (!daemon.running()) row.fail("the daemon exited: " + daemon.err());
  const auto after = stats("f");
  ++good.trials;
  if (!good_problem.empty()) good.fail(good_problem);
  if (good_frames.load() == 0) good.fail("it received no frame");
  row.worst = std::to_string(answered) + " answered with structured errors, " + std::to_string(dropped_by_design) +
              " oversized connections dropped by the 1 MiB limit; daemon still stepping (step " +
              std::to_string(after.step) + ")";
  good.worst =
      std::to_string(good_frames.load()) + " frames verified; slowest stats call " + fmt(worst_stats_ms, 1) + " ms";
  return {row, good};
}

// ------------------------------------------------------------------ access

constexpr const char* kOtherUser = "cuview-other";

std::optional<std::pair<uid_t, gid_t>> other_user() {
  if (::getuid() != 0) return std::nullopt;
  if (::getpwnam(kOtherUser) == nullptr) {
    ChildProcess add({"/usr/sbin/useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", kOtherUser});
    if (add.wait_for(30s) != 0) return std::nullopt;
  }
  const passwd* pw = ::getpwnam(kOtherUser);
  if (pw == nullptr) return std::nullopt;
  return std::pair{pw->pw_uid, pw->pw_gid};
}

std::vector<std::string> as_other(std::vector<std::string> argv) {
  std::vector<std::string> out{"/usr/bin/setpriv", std::string("--reuid=") + kOtherUser,
                               std::string("--regid=") + kOtherUser, "--clear-groups", "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::vector<Row> access(const Config& c, const std::string& self) {
  Row row{"another Unix user: refused before it learns any handle"};
  Row files{"runtime directory, sockets and segments closed to other users"};
  Row refuse{"a runtime directory with wrong owner or mode: the daemon refuses to start"};
  const auto other = other_user();
  if (!other) {
    row.worst = files.worst = refuse.worst = "not run: needs root to create a second user";
    return {row, files, refuse};
  }
  RuntimeDir rt;
  // The other user must reach the binaries and the runtime root itself (not what is inside).
  ::chmod(rt.path().c_str(), 0755);
  for (fs::path p = fs::path(bin("cuview-ctl")).parent_path(); p != p.root_path(); p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) ::chmod(p.c_str(), st.st_mode | 0055);
  }
  auto daemon = daemon_for(c, "f");
  const InstancePaths paths("f");
  {  // a foreign cuview-ctl
    ++row.trials;
    ChildProcess p(as_other({bin("cuview-ctl"), "--name", "f", "status"}));
    const auto code = p.wait_for(30s);
    if (!code || *code == 0) row.fail("a foreign cuview-ctl was answered");
    if (p.err().find("not to you") == std::string::npos && p.err().find("another user") == std::string::npos)
      row.fail("unclear refusal: " + p.err());
  }
  {  // even with the directories opened up by mistake, the sockets refuse other uids
    ::chmod(paths.dir.parent_path().c_str(), 0755);
    ::chmod(paths.dir.c_str(), 0755);
    ++row.trials;
    ChildProcess p(as_other({self, "--probe-socket", paths.control_endpoint()}));
    const auto code = p.wait_for(30s);
    if (code != 0) row.fail("a foreign raw socket got an answer: " + p.out() + p.err());
    ::chmod(paths.dir.c_str(), 0700);
    ::chmod(paths.dir.parent_path().c_str(), 0700);
  }
  {  // a hello that names a process of another user
    ++row.trials;
    ChildProcess sleeper(as_other({"/bin/sleep", "60"}));
    std::this_thread::sleep_for(200ms);  // setpriv execs sleep under the same pid
    zmq::context_t ctx;
    zmq::socket_t s(ctx, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 0);
    s.set(zmq::sockopt::rcvtimeo, 5000);
    s.connect(paths.control_endpoint());
    const auto req = proto::encode_request("hello", 1, "", proto::HelloArgs{"impostor", sleeper.pid()});
    s.send(zmq::buffer(req));
    zmq::message_t m;
    if (!s.recv(m)) {
      row.fail("no answer to a hello naming a foreign pid");
    } else {
      const auto r = proto::decode_reply(m.to_string_view());
      if (r.ok || r.error.code != "access") row.fail("a hello naming a foreign pid was not refused as access");
    }
  }
  {  // modes
    auto check_mode = [&](const fs::path& p, const char* what) {
      ++files.trials;
      struct stat st {};
      if (::stat(p.c_str(), &st) != 0) return files.fail(std::string("cannot stat ") + what);
      if ((st.st_mode & 077) != 0) files.fail(std::string(what) + " is open to others");
    };
    check_mode(paths.dir.parent_path(), "the runtime directory");
    check_mode(paths.dir, "the instance directory");
    check_mode(paths.control, "the control socket");
    check_mode(paths.frames, "the frames socket");
    check_mode(paths.lock, "the lock file");
    for (const auto& seg : segments_of("f")) {
      check_mode(fs::path("/dev/shm") / seg.substr(1), "a shared-memory segment");
      ++files.trials;
      ChildProcess p(as_other({self, "--probe-shm", seg}));
      if (p.wait_for(30s) != 0) files.fail("another user could open " + seg + ": " + p.out());
    }
    files.worst = "0700 directories, 0600 sockets, lock and segments; another user's shm_open gets EACCES";
  }
  daemon.signal(SIGTERM);
  (void)daemon.wait_for(30s);
  {  // wrong owner, wrong mode
    ++refuse.trials;
    ::chown(paths.dir.c_str(), other->first, other->second);
    ChildProcess d({bin("cuview-compute"), "--name", "f", "--backend", "host"});
    if (d.wait_for(30s) != 1 || d.err().find("belongs to uid") == std::string::npos)
      refuse.fail("started in a directory of another user: " + d.err());
    ::chown(paths.dir.c_str(), ::getuid(), ::getgid());
    ++refuse.trials;
    ::chmod(paths.dir.c_str(), 0750);
    ChildProcess m({bin("cuview-compute"), "--name", "f", "--backend", "host"});
    if (m.wait_for(30s) != 1 || m.err().find("chmod 700") == std::string::npos)
      refuse.fail("started in a group-readable directory: " + m.err());
    refuse.worst = "refused with the owner or mode named and the fix";
  }
  row.worst = "refused with \"" + std::string("belongs to uid 0, not to you") + "\"; raw sockets get no answer";
  return {row, files, refuse};
}

// ------------------------------------------------------------------ versions

std::vector<Row> versions(const Config& c) {
  RuntimeDir rt;
  auto daemon = daemon_for(c, "f");
  Row row{"a client of another protocol version"};
  zmq::context_t ctx;
  zmq::socket_t s(ctx, zmq::socket_type::dealer);
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::rcvtimeo, 5000);
  s.connect(InstancePaths("f").control_endpoint());
  for (std::uint32_t v : {0u, proto::kVersion + 1, 99u}) {
    ++row.trials;
    s.send(zmq::buffer(proto::encode_request("hello", v, "", proto::HelloArgs{"old", ::getpid()}, v)));
    zmq::message_t m;
    if (!s.recv(m)) {
      row.fail("no answer to version " + std::to_string(v));
      continue;
    }
    const auto r = proto::decode_reply(m.to_string_view());
    const std::string both = "protocol " + std::to_string(v);
    if (r.ok || r.error.code != "version_mismatch" || r.error.message.find(both) == std::string::npos ||
        r.error.message.find("protocol " + std::to_string(proto::kVersion)) == std::string::npos)
      row.fail("version " + std::to_string(v) + ": " + r.error.message);
    row.worst = "\"" + r.error.message + "\"";
  }
  return {row};
}

// ------------------------------------------------------------------ probes run as the other user

int probe_socket(const std::string& endpoint) {
  zmq::context_t ctx;
  zmq::socket_t s(ctx, zmq::socket_type::dealer);
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::rcvtimeo, 2000);
  s.connect(endpoint);
  s.send(zmq::buffer(proto::encode_request("hello", 1, "", proto::HelloArgs{"foreign", ::getpid()})));
  zmq::message_t m;
  if (s.recv(m)) {
    std::printf("answered: %s\n", m.to_string().c_str());
    return 1;
  }
  return 0;  // silence: the daemon's socket dropped us
}

int probe_shm(const std::string& name) {
  const int fd = ::shm_open(name.c_str(), O_RDONLY, 0);
  if (fd >= 0) {
    std::printf("opened %s\n", name.c_str());
    return 1;
  }
  return errno == EACCES ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cuview-faults: the reliability campaign (docs/reliability.md)"};
  std::string config = "short", backend = "host", out, probe_sock, probe_seg;
  std::vector<std::string> only, extra;
  app.add_option("--config", config, "short (CI) or long (GPU host)")->check(CLI::IsMember({"short", "long"}));
  app.add_option("--backend", backend, "daemon backend")->check(CLI::IsMember({"host", "cuda"}));
  app.add_option("--only", only,
                 "run only these scenarios: viewers, embedded, lbm, nbody, frozen, daemon, hostile, access, versions");
  app.add_option("--out", out, "append the table to this Markdown file");
  app.add_option("--extra-row", extra, "a row measured elsewhere: 'scenario|trials|failures|worst'");
  app.add_option("--probe-socket", probe_sock)->group("");
  app.add_option("--probe-shm", probe_seg)->group("");
  CLI11_PARSE(app, argc, argv);
  if (!probe_sock.empty()) return probe_socket(probe_sock);
  if (!probe_seg.empty()) return probe_shm(probe_seg);

  Config c;
  c.backend = backend == "cuda" ? Backend::cuda : Backend::host;
  if (config == "long") {
    c.ctl_kills = 200, c.gui_kills = 200, c.daemon_kills = 20, c.embedded_kills = 200;
    c.freeze = 10s, c.slow = 10s, c.hostile = 60s, c.baseline = 5s;
    c.size = c.backend == Backend::cuda ? "2048x2048" : "256x256";
  }
  setenv("QT_QPA_PLATFORM", "offscreen", 1);
  const std::string self = fs::canonical("/proc/self/exe").string();
  auto wanted = [&](const std::string& n) { return only.empty() || std::count(only.begin(), only.end(), n) > 0; };
  std::vector<std::pair<std::string, std::function<std::vector<Row>()>>> scenarios{
      {"viewers", [&] { return viewer_death(c, "cuview-compute", c.ctl_kills, c.gui_kills); }},
      {"embedded", [&] { return viewer_death(c, "embed-wave", c.embedded_kills, c.gui_kills / 2); }},
      {"lbm", [&] { return viewer_death(c, "cuview-compute", c.embedded_kills, c.gui_kills / 2, "lbm"); }},
      {"nbody", [&] { return viewer_death(c, "cuview-compute", c.embedded_kills, c.gui_kills / 2, "nbody"); }},
      {"frozen", [&] { return frozen_and_slow(c); }},
      {"daemon", [&] { return daemon_death(c); }},
      {"hostile", [&] { return hostile(c); }},
      {"access", [&] { return access(c, self); }},
      {"versions", [&] { return versions(c); }},
  };
  std::vector<Row> rows;
  for (auto& [name, run] : scenarios) {
    if (!wanted(name)) continue;
    const auto t = Clock::now();
    std::fprintf(stderr, "cuview-faults: %s ...\n", name.c_str());
    try {
      for (auto& r : run()) rows.push_back(std::move(r));
    } catch (const std::exception& e) {
      Row r{name + ": the scenario itself broke"};
      r.trials = 1;
      r.fail(e.what());
      rows.push_back(r);
    }
    std::fprintf(stderr, "cuview-faults: %s done in %.0f s\n", name.c_str(), ms_since(t) / 1000);
  }
  for (const auto& e : extra) {
    std::vector<std::string> f;
    std::stringstream ss(e);
    for (std::string part; std::getline(ss, part, '|');) f.push_back(part);
    if (f.size() != 4) continue;
    Row r(f[0]);
    r.trials = std::stoi(f[1]);
    r.failures = std::stoi(f[2]);
    r.worst = f[3];
    rows.push_back(r);
  }

  std::ostringstream table;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const auto now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  table << "\n### " << backend << " backend, " << config << " configuration — " << date << "\n\n";
  table << "| scenario | trials | failures | worst seen |\n| --- | --- | --- | --- |\n";
  int failures = 0;
  for (const auto& r : rows) {
    table << "| " << cell(r.scenario) << " | " << r.trials << " | " << r.failures << " | " << cell(r.worst);
    for (const auto& p : r.problems) table << "<br>FAILED: " << cell(p);
    table << " |\n";
    failures += r.failures;
  }
  std::cout << table.str() << std::flush;
  if (!out.empty()) std::ofstream(out, std::ios::app) << table.str();
  return failures == 0 ? 0 : 1;
}
