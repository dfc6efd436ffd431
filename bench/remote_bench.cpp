// Section "remote": views through cuview-gateway over one network link. A daemon per simulation,
// one gateway serving tcp://127.0.0.1 with CURVE, and remote viewers in threads of this process
// (each its own Client over TCP, never the gateway's Unix socket, so that a limit on `lo` is the
// link they see). scripts/bench-remote.sh runs this section once per link, each time inside a
// private network namespace whose `lo` is limited with tc; this section measures one link and
// names it by --link-label.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <latch>
#include <map>
#include <optional>
#include <thread>

#include "bench.hpp"
#include "cuview/client.hpp"
#include "cuview/posix.hpp"
#include "cuview/remote/curve_keys.hpp"
#include "cuview/remote/value_codec.hpp"
#include "cuview/view_sampler.hpp"
#include "process.hpp"

namespace cuview::bench {
/// A TCP port on 127.0.0.1 nobody listens on now (the OS's pick).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw_errno("socket for a free port", errno);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    const int err = errno;
    ::close(fd);
    throw_errno("bind 127.0.0.1:0 for a free port", err);
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

/// Keys in a private XDG_CONFIG_HOME: the bench's client key is the only authorised one. Returns
/// the gateway's public key.
std::string make_keys(const std::filesystem::path& config_home) {
  ::setenv("XDG_CONFIG_HOME", config_home.c_str(), 1);
  const auto dir = remote::config_dir();
  const auto client = remote::generate_keypair();
  remote::write_keypair(dir / "client.key", client, "cuview-bench");
  std::ofstream(dir / "authorized_keys") << client.public_key << " cuview-bench\n";
  return remote::load_or_create_keypair(dir / "gateway.key", "cuview-bench gateway").public_key;
}

/// Bytes that crossed the loopback interface of this process's network namespace (/proc/self/net
/// is per namespace; /sys/class/net shows the namespace that mounted sysfs).
std::uint64_t loopback_bytes() {
  std::ifstream dev("/proc/self/net/dev");
  std::string line;
  while (std::getline(dev, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string iface = line.substr(0, colon);
    iface.erase(0, iface.find_first_not_of(' '));
    if (iface != "lo") continue;
    return std::strtoull(line.c_str() + colon + 1, nullptr, 10);  // received bytes (= sent, on lo)
  }
  return 0;
}

namespace {
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kViewW = 1280, kViewH = 720;
constexpr double kWarmupS = 0.6;  ///< views before the measured window: the gateway's link meter settles

/// What a field is for the frame-rate target at 100 Mbit/s.
enum class Texture { smooth, fine };

struct FieldCase {
  std::string sim, field, size;
  Texture texture;
  std::vector<std::string> options;  ///< more of the daemon's arguments
  /// A volume seen whole: a brick of at most this many cells a side, fitted to the link by the gateway.
  std::optional<std::uint32_t> brick{};
  std::string id() const { return sim + "/" + field + (brick ? " (brick)" : ""); }
};

/// The fields measured: Gray–Scott's u (fine texture), LBM's speed and vorticity, N-body density
/// (bodies per cell: scattered bright cells in the dark, a fine texture at cell scale). Sizes keep
/// each host-backend simulation (one thread) near or above 100 steps a second on a small machine.
const std::vector<FieldCase>& all_cases(bool cuda) {
  // On a GPU the grids a user watches: the simulation is fast, the view's size is the same.
  static const std::vector<FieldCase> gpu_cases{
      {"grayscott", "u", "4096x4096", Texture::fine, {}},
      {"lbm", "speed", "2048x1024", Texture::smooth, {}},
      {"lbm", "vorticity", "2048x1024", Texture::smooth, {}},
      {"nbody", "density", "1024x1024", Texture::fine, {}},
      // The volume seen whole: a budget that lets frames come faster than the link takes bricks
      // (at 1 % a 512³ frame of the flow comes a few times a second).
      {"lbm3d", "speed", "512x512x512", Texture::smooth, {"--max-cost", "10%"}, 128}};
  if (cuda) return gpu_cases;
  static const std::vector<FieldCase> cases{
      {"grayscott", "u", "1024x1024", Texture::fine, {}},
      {"lbm", "speed", "256x128", Texture::smooth, {}},
      {"lbm", "vorticity", "256x128", Texture::smooth, {}},
      {"nbody", "density", "256x256", Texture::fine, {"--sim-option", "bodies=512"}},
      // The volume seen whole: the 3-D Gray–Scott (its frames are cheap on two cores, where the
      // flow's come ~2 a second), with a budget that lets frames come faster than a link takes bricks.
      {"grayscott3d", "v", "128x128x128", Texture::smooth, {"--max-cost", "50%"}, 128}};
  return cases;
}

struct ViewerResult {
  std::vector<double> latency_ms;  ///< now − the frame's publish stamp, when the view is decoded
  std::vector<double> link_estimate;  ///< the gateway's estimate of this link, bytes/s, per view
  std::uint64_t views = 0;
  double seconds = 0;
  std::map<std::string, std::uint64_t> encodings;
  std::string brick;  ///< the last brick's size and every-k-th, for a volume seen whole
  std::string error;
};

/// One remote viewer: attaches over `url`, watches, takes views for kWarmupS, waits at `start`
/// for the others, then counts views for `seconds`.
void remote_viewer(const std::string& url, const std::string& name, const std::string& field,
                   const std::string& encoding, std::optional<std::uint32_t> brick, double seconds, std::latch& start,
                   ViewerResult& out) {
  bool arrived = false;
  try {
    auto c = RemoteClient::attach({.name = name, .client = "cuview-bench remote viewer", .remote = url});
    const auto& d = c.description();
    ViewWatch w{field,
                ViewRegion::fit(static_cast<int>(d.extent().width()), static_cast<int>(d.extent().height()), kViewW,
                                kViewH, 1, d.extent().width() / 2.0, d.extent().height() / 2.0),
                encoding};
    w.brick = brick;
    c.watch(w);
    RemoteView view;
    const auto warm_end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kWarmupS));
    while (Clock::now() < warm_end) (void)c.next_view(view, 100ms);
    start.arrive_and_wait();
    arrived = true;
    const auto t0 = Clock::now();
    const auto end = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    while (Clock::now() < end) {
      if (!c.next_view(view, 100ms)) continue;
      out.latency_ms.push_back(static_cast<double>(realtime_ns() - view.header.stamp_ns) * 1e-6);
      ++out.views;
      out.link_estimate.push_back(view.header.link_bytes_per_s);
      ++out.encodings[view.header.encoding];
      if (const auto& b = view.header.brick; b && b->size() == 4)
        out.brick = std::to_string((*b)[2]) + "×" + std::to_string((*b)[1]) + "×" + std::to_string((*b)[0]) +
                    " (every " + std::to_string((*b)[3]) + ")";
    }
    out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  } catch (const std::exception& e) {
    out.error = e.what();
    if (!arrived) start.count_down();
  }
}

struct Run {
  std::vector<ViewerResult> viewers;
  double steps_per_s = 0;
  double wire_bytes_per_s = 0;
};

/// `n` viewers at once; meanwhile the daemon's step rate and the loopback's bytes are measured over
/// the viewers' common window.
Run run_viewers(Client& control, const std::string& url, const std::string& name, const FieldCase& c,
                const std::string& encoding, int n, double seconds) {
  Run r;
  r.viewers.resize(static_cast<std::size_t>(n));
  std::latch start(n + 1);
  std::vector<std::jthread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back(
        [&, i] { remote_viewer(url, name, c.field, encoding, c.brick, seconds, start, r.viewers[static_cast<std::size_t>(i)]); });
  start.arrive_and_wait();
  const auto s0 = control.stats().step;
  const auto b0 = loopback_bytes();
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds * 0.9));
  const auto s1 = control.stats().step;
  const auto b1 = loopback_bytes();
  const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
  r.steps_per_s = static_cast<double>(s1 - s0) / dt;
  r.wire_bytes_per_s = static_cast<double>(b1 - b0) / dt;
  threads.clear();  // a viewer that failed is reported in its row (summarise), not thrown: it is a result
  return r;
}

double steps_per_s(Client& control, double seconds) {
  const auto s0 = control.stats().step;
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  return static_cast<double>(control.stats().step - s0) / std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Compressed bytes of one 1280×720 view in each encoding (u8, u16, f32), encoded here as the
/// gateway encodes (ViewSampler, then ValueEncoder at its zstd level): the median of 5 frames.
std::array<double, 3> payload_bytes(const std::string& name, const std::string& field) {
  auto c = Client::attach({.name = name, .client = "cuview-bench encoder"});
  const auto& d = c.description();
  const auto f = std::find_if(d.fields.begin(), d.fields.end(), [&](const auto& x) { return x.name == field; });
  if (f == d.fields.end()) throw Error(Errc::bad_value, "daemon '" + name + "' has no field " + field);
  const Extent grid = d.extent();
  const auto region = ViewRegion::fit(static_cast<int>(grid.width()), static_cast<int>(grid.height()), kViewW, kViewH, 1,
                                      grid.width() / 2.0, grid.height() / 2.0);
  ViewSampler sampler;
  SampledView sampled;
  remote::ValueEncoder encoder;
  remote::EncodedValues encoded;
  std::array<std::vector<double>, 3> sizes;
  for (int i = 0; i < 5; ++i) {
    auto frame = c.next_frame(10s);
    if (!frame) throw Error(Errc::timeout, "no frame from daemon '" + name + "' within 10 s");
    sampler.sample(*frame, *f, region, sampled);
    for (int e = 0; e < 3; ++e) {
      encoder.encode(sampled.values, static_cast<remote::Encoding>(e), encoded);
      sizes[static_cast<std::size_t>(e)].push_back(static_cast<double>(encoded.payload.size()));
    }
    std::this_thread::sleep_for(100ms);  // frames some steps apart
  }
  return {percentile(sizes[0], 0.5), percentile(sizes[1], 0.5), percentile(sizes[2], 0.5)};
}

struct Summary {
  double views_per_s = 0;      ///< per viewer, the mean
  double min_views_per_s = 0;  ///< the slowest viewer's
  double median_ms = 0, p95_ms = 0;
  double wire_bytes_per_view = 0;
  double link_estimate = 0;  ///< the gateway's, bytes/s, median over the views
  std::string encodings;  ///< what the views came in, with shares
  std::string failures;   ///< viewers that lost their attachment, and the first one's reason
};

Summary summarise(const Run& r) {
  Summary s;
  std::vector<double> all, estimates;
  std::map<std::string, std::uint64_t> enc;
  std::uint64_t views = 0;
  s.min_views_per_s = 1e300;
  for (const auto& v : r.viewers) {
    const double rate = v.seconds > 0 ? static_cast<double>(v.views) / v.seconds : 0;
    s.views_per_s += rate / static_cast<double>(r.viewers.size());
    s.min_views_per_s = std::min(s.min_views_per_s, rate);
    all.insert(all.end(), v.latency_ms.begin(), v.latency_ms.end());
    estimates.insert(estimates.end(), v.link_estimate.begin(), v.link_estimate.end());
    for (const auto& [e, k] : v.encodings) enc[e] += k;
    views += v.views;
  }
  s.median_ms = percentile(all, 0.5);
  s.p95_ms = percentile(all, 0.95);
  s.link_estimate = percentile(estimates, 0.5);
  const double total_rate = s.views_per_s * static_cast<double>(r.viewers.size());
  s.wire_bytes_per_view = total_rate > 0 ? r.wire_bytes_per_s / total_rate : 0;
  for (const auto& [e, k] : enc)
    s.encodings += (s.encodings.empty() ? "" : ", ") + e +
                   (enc.size() > 1 ? " " + fmt(100.0 * static_cast<double>(k) / static_cast<double>(views), "%.0f") + " %" : "");
  if (s.encodings.empty()) s.encodings = "none";
  for (const auto& v : r.viewers)
    if (!v.brick.empty()) {
      s.encodings += ", brick " + v.brick;
      break;
    }
  std::size_t failed = 0;
  for (const auto& v : r.viewers)
    if (!v.error.empty() && failed++ == 0) s.failures = v.error;
  if (failed > 0)
    s.failures = "; **" + std::to_string(failed) + " of " + std::to_string(r.viewers.size()) + " viewers failed**: " +
                 (s.failures.find("fell silent") != std::string::npos ? "the gateway fell silent (no heartbeat for a second)"
                                                                      : s.failures.substr(0, 160));
  return s;
}

std::string mbit(double bytes_per_s) { return fmt(bytes_per_s * 8e-6, "%.0f") + " Mbit/s"; }

std::string kb(double bytes) { return fmt(bytes / 1000, bytes < 10'000 ? "%.2f" : "%.0f") + " kB"; }

/// The frame-rate or latency target that applies to one auto-encoded viewer on `link`.
std::string judge(const std::string& link, const FieldCase& c, const Summary& s) {
  const auto verdict = [](bool met) { return std::string(met ? "**met**" : "**missed**"); };
  if (link == "unlimited")
    return verdict(s.median_ms <= 30) + ": median " + fmt(s.median_ms, "%.1f") + " ms (target ≤ 30 ms)";
  if (link == "1gbit")
    return verdict(s.views_per_s >= 60) + ": " + fmt(s.views_per_s, "%.1f") + " views/s (target ≥ 60)";
  if (link == "100mbit") {
    const double want = c.brick || c.texture == Texture::fine ? 10 : 30;
    return verdict(s.views_per_s >= want) + ": " + fmt(s.views_per_s, "%.1f") + " views/s (target ≥ " +
           fmt(want, "%.0f") + (c.brick ? ", a volume's bricks)" : c.texture == Texture::smooth ? ", smooth field)" : ", fine texture)");
  }
  return "—";
}

void stop(test::ChildProcess& p) {
  p.signal(SIGTERM);
  if (!p.wait_for(5s)) p.signal(SIGKILL);
}

}  // namespace

std::string remote_section(const Options& o) {
  std::vector<FieldCase> cases;
  const bool cuda = o.remote_backend == "cuda";
  for (const auto& c : all_cases(cuda))
    if (o.remote_fields.empty() ||
        std::find(o.remote_fields.begin(), o.remote_fields.end(), c.id()) != o.remote_fields.end())
      cases.push_back(c);
  if (cases.empty()) throw Error(Errc::bad_value, "--remote-fields selects none of grayscott/u, lbm/speed, lbm/vorticity, nbody/density, 'lbm3d/speed (brick)' (CUDA), 'grayscott3d/v (brick)' (host)");
  const auto& link = o.link_label;
  const double secs = o.remote_seconds;

  test::RuntimeDir rt;
  const auto gateway_key = make_keys(rt.path() / "config");
  const int port = free_port();
  // Pinned here, once: four viewer threads would otherwise all pin it at their first connection.
  remote::KnownGateways::read(remote::default_known_gateways())
      .pin("127.0.0.1:" + std::to_string(port), gateway_key);
  const std::string url = "tcp://127.0.0.1:" + std::to_string(port) + "?key=" + gateway_key;
  std::vector<std::string> gateway_args{"--listen", "tcp://127.0.0.1:" + std::to_string(port), "--log-level", "warn"};
  if (o.remote_target_fps > 0) gateway_args.insert(gateway_args.end(), {"--target-fps", fmt(o.remote_target_fps, "%g")});
  auto gateway = test::start_gateway(gateway_args);

  Table bytes{{"field (grid)", "u8", "u16", "f32", "raw f32 view"}, {}};
  Table views{{"link", "field", "encoding asked → sent", "viewers", "views/s per viewer (slowest)",
               "frame → remote values, ms (median / p95)", "on the wire per view", "gateway's link estimate (median)",
               "target (1 viewer, auto)"},
              {}};
  Table cost{{"link", "field", "steps/s, 0 viewers (before / after)", "1 viewer", "4 viewers", "target: 4 viewers < 0.3 %"},
             {}};
  const double raw_f32 = 4.0 * kViewW * kViewH;

  std::optional<test::ChildProcess> daemon;
  std::string running;  // the sim `daemon` runs
  std::string notes;  // cases that could not be measured, with the daemon's last words
  for (const auto& c : cases) try {
    const std::string name = "remote-" + c.sim;
    if (running != c.sim + c.size) {
      if (daemon) stop(*daemon);
      daemon.reset();
      std::vector<std::string> args{"--sim", c.sim, "--fps", "120", "--log-level", "warn", "--no-final-checkpoint"};
      args.insert(args.end(), c.options.begin(), c.options.end());
      daemon.emplace(test::start_daemon(name, cuda ? test::Backend::cuda : test::Backend::host, args, c.size));
      running = c.sim + c.size;
    }
    auto control = Client::attach({.name = name, .client = "cuview-bench control", .import = Import::control_only});
    // A frame every step: at 16 steps a frame (the default) a host-backend grid publishes fewer
    // frames than the targets ask for; --fps 120 still caps the rate.
    if (!cuda) control.set({{"steps_per_frame", 1}});

    const auto ratio = [&](int e, double b) {
      const double raw = static_cast<double>(kViewW) * kViewH * (e == 0 ? 1 : e == 1 ? 2 : 4);
      return kb(b) + " (" + fmt(raw / b, "%.1f") + "×)";
    };

    const double before = steps_per_s(control, secs * 0.9);
    std::map<int, double> rate_with;
    for (const int n : o.remote_viewers) {
      const auto r = run_viewers(control, url, name, c, "auto", n, secs);
      const auto s = summarise(r);
      rate_with[n] = r.steps_per_s;
      views.rows.push_back({link, c.id(), "auto → " + s.encodings + s.failures, std::to_string(n),
                            fmt(s.views_per_s, "%.1f") + (n > 1 ? " (" + fmt(s.min_views_per_s, "%.1f") + ")" : ""),
                            fmt(s.median_ms, "%.1f") + " / " + fmt(s.p95_ms, "%.1f"), kb(s.wire_bytes_per_view),
                            mbit(s.link_estimate), n == 1 ? judge(link, c, s) : "—"});
    }
    const double after = steps_per_s(control, secs * 0.9);
    for (const char* e : {"u8", "u16", "f32"}) {
      if (!o.remote_pinned) continue;
      const auto s = summarise(run_viewers(control, url, name, c, e, 1, secs));
      views.rows.push_back({link, c.id(), std::string(e) + " (pinned)" + s.failures, "1", fmt(s.views_per_s, "%.1f"),
                            fmt(s.median_ms, "%.1f") + " / " + fmt(s.p95_ms, "%.1f"), kb(s.wire_bytes_per_view),
                            mbit(s.link_estimate), "—"});
    }
    // After the runs: the fields have developed as far as in the runs' views (an LBM flow starts at
    // rest, which compresses far better than its vortex street).
    if (!c.brick) {  // a 1280×720 picture's bytes (a brick's are in the views table)
      const auto payload = payload_bytes(name, c.field);
      bytes.rows.push_back({c.id() + " (" + c.size + ")", ratio(0, payload[0]), ratio(1, payload[1]),
                            ratio(2, payload[2]), kb(raw_f32)});
    }
    const double base = (before + after) / 2;
    const auto versus = [&](int n) {
      const auto it = rate_with.find(n);
      if (it == rate_with.end()) return std::string("—");
      return fmt(it->second, "%.0f") + " (" + fmt(100 * (it->second / base - 1), "%+.1f") + " %)";
    };
    std::string verdict = "—";
    if (const auto it = rate_with.find(4); it != rate_with.end()) {
      const double cost = 100 * (1 - it->second / base);
      const double noise = 100 * std::fabs(before - after) / base;
      // A cost inside the noise of the two 0-viewer windows is not a measurement of 0.3 %.
      const char* word = cost >= 0.3 && cost > noise ? "**missed**" : noise < 0.3 ? "**met**" : "not resolved";
      verdict = std::string(word) + ": " + fmt(cost, "%.1f") + " % (0-viewer windows differ by " + fmt(noise, "%.1f") +
                " %)";
    }
    cost.rows.push_back({link, c.id(), fmt(before, "%.0f") + " / " + fmt(after, "%.0f"), versus(1), versus(4), verdict});
  } catch (const std::exception& e) {
    std::string last_words = daemon ? daemon->err() : "";
    if (last_words.size() > 600) last_words = "…" + last_words.substr(last_words.size() - 600);
    notes += "\n**" + c.id() + " on " + link + " not measured**: " + e.what() +
             (last_words.empty() ? "" : "\n\n```\n" + last_words + "\n```") + "\n";
    if (daemon && !daemon->running()) daemon.reset(), running.clear();  // the next case starts a new one
  }
  if (daemon) stop(*daemon);
  stop(gateway);

  std::ostringstream md;
  md << "\n### Remote viewers, link: " << link << " (" << kViewW << "×" << kViewH
     << (cuda ? " view, CUDA backend, daemon --fps 120" : " view, host backend, daemon --fps 120 and steps_per_frame 1")
     << ", gateway tcp:// with CURVE, " << fmt(secs, "%g")
     << " s per row)\n\nCompressed bytes of one view, as the gateway encodes it (median of 5 frames, taken after the rows below; × = the "
        "encoding's raw bytes over the compressed):\n\n"
     << bytes.markdown() << "\nViews received (auto: the gateway's choice for this link; 4 viewers: threads of "
     << "this process, each its own Client; on the wire: bytes across `lo` per view, TCP/IP and CURVE included):\n\n"
     << views.markdown() << "\nCost to the simulation (steps/s counted over the viewers' window; 0 viewers "
     << "measured before and after):\n\n"
     << cost.markdown() << notes;
  return md.str();
}

}  // namespace cuview::bench
