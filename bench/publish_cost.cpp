// Section "publish": what publishing costs the simulation, and how fast a run and its first
// picture start — one harness for every figure (docs/benchmarks.md, "Publishing").
//
// Cost: cuview-compute's own loop (cuview::Daemon) runs in this process, so that publishing can
// be switched off and on between windows of the same run (Daemon::set_publishing). Each block
// alternates windows with publishing off and on (ABBA order, so that a drift of the GPU's clock
// cancels) and reports the median of the on/off ratios of neighbouring windows; the block's pairs
// split into two interleaved halves give two independent figures, whose difference says how far
// the figure can be trusted. Viewers are separate processes (`cuview-bench viewer`, rendering as
// cuview-gui does at 60 Hz); while publishing is off they wait, holding their lease.
//
// Start: a fresh cuview-compute process, from spawn to its first step (polled through stats), and
// the phases its log line "started in …" names. First frame: fresh `cuview-ctl attach --frames 1`,
// `cuview-gui --screenshot --frames 1` and Python processes against the running daemon, from
// spawn to exit (they exit once they have the frame).
#include <png.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <functional>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <thread>

#include "bench.hpp"
#include "cuview/client.hpp"
#include "cuview/posix.hpp"
#include "cuview/remote/curve_keys.hpp"
#include "cuview/remote/picture_codec.hpp"
#include "cuview/volume_composite.hpp"
#include "daemon.hpp"
#include "process.hpp"

namespace cuview::bench {
namespace {
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// Steps per second over one window, counted by the loop itself (with publishing off, `stats`
/// would not see them).
double window_rate(const Daemon& d, double seconds) {
  const auto s0 = d.steps_taken();
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const auto s1 = d.steps_taken();
  return static_cast<double>(s1 - s0) / seconds_since(t0);
}

struct Cost {
  double off = 0;               ///< median steps/s with publishing off
  double ratio = 0;             ///< median of on/off over neighbouring windows
  double half_a = 0, half_b = 0;  ///< the same over the odd and the even pairs
};

/// Runs `daemon`'s loop on a thread while `body` measures it; `body` ends the run (a shutdown
/// request). Should `body` throw, the run named `name` is shut down first, then the error goes on.
template <class Body>
void while_running(Daemon& daemon, const std::string& name, Body&& body) {
  std::thread loop([&] { (void)daemon.run(); });
  try {
    body();
  } catch (...) {
    try {
      Client::attach({.name = name, .client = "cuview-bench", .import = Import::control_only}).shutdown();
    } catch (...) {
    }
    loop.join();
    throw;
  }
  loop.join();
}

/// `pairs` pairs of windows, ABBA: off on, on off, off on, …
Cost alternate(Daemon& d, int pairs, double window_s) {
  std::vector<double> off, ratios, a, b;
  for (int i = 0; i < pairs; ++i) {
    const bool on_first = i % 2 == 1;
    double r_off = 0, r_on = 0;
    for (int k = 0; k < 2; ++k) {
      const bool on = (k == 0) == on_first;
      d.set_publishing(on);
      std::this_thread::sleep_for(50ms);  // the queued batches of the other mode drain
      (on ? r_on : r_off) = window_rate(d, window_s);
    }
    off.push_back(r_off);
    ratios.push_back(r_on / r_off);
    (i % 2 == 0 ? a : b).push_back(r_on / r_off);
  }
  d.set_publishing(true);
  return {percentile(off, 0.5), percentile(ratios, 0.5), percentile(a, 0.5), percentile(b, 0.5)};
}

std::string cost_text(const Cost& c) { return fmt(100 * (1 - c.ratio), "%.2f") + " %"; }
std::string halves_text(const Cost& c) {
  return fmt(100 * (1 - c.half_a), "%.2f") + " / " + fmt(100 * (1 - c.half_b), "%.2f") + " %";
}

/// Spawn → exit of a process that attaches and takes one frame, median of `n` (ms).
double first_frame_ms(const std::vector<std::string>& argv, int n, std::string* failure) {
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    std::optional<test::ChildProcess> spawned;
    try {
      spawned.emplace(argv);
    } catch (const std::exception& e) {
      *failure = e.what();
      return 0;
    }
    auto& p = *spawned;
    const auto code = p.wait_for(30s);
    if (!code || *code != 0) {
      *failure = argv[0] + " failed (" + (code ? "exit " + std::to_string(*code) : std::string("timed out")) +
                 "): " + p.err().substr(0, 300);
      return 0;
    }
    ms.push_back(1000 * seconds_since(t0));
  }
  return percentile(ms, 0.5);
}

struct Start {
  double first_step_ms = 0;
  std::string phases;  ///< the daemon's own "started in …" line
};

/// A fresh cuview-compute: spawn → first step (stats polled every 5 ms), then shut down.
Start measure_start(const std::string& name, const std::string& sim, const std::string& size,
                    const std::string& backend) {
  const auto t0 = Clock::now();
  test::ChildProcess p({test::bin("cuview-compute"), "--name", name, "--sim", sim, "--size", size, "--backend",
                        backend, "--no-final-checkpoint", "--log-level", "info"});
  Start s;
  for (;;) {
    if (seconds_since(t0) > 120) test::fail("cuview-compute --sim " + sim + " --size " + size + " took over 120 s to start");
    if (!p.running()) test::fail("cuview-compute --sim " + sim + " exited while starting: " + p.err());
    try {
      auto c = Client::attach({.name = name, .client = "cuview-bench start", .import = Import::control_only});
      if (c.stats().step > 0) {
        s.first_step_ms = 1000 * seconds_since(t0);
        c.shutdown();
        break;
      }
    } catch (const Error&) {
    }
    std::this_thread::sleep_for(5ms);
  }
  (void)p.wait_for(60s);
  std::smatch m;
  const std::string err = p.err();
  static const std::regex kStarted(R"(started in ([0-9.]+ s \([^\n]*\)))");
  if (std::regex_search(err, m, kStarted)) s.phases = m[1];
  return s;
}

}  // namespace

std::string publish_section(const Options& o, const std::string& backend) {
  const bool cuda = backend == "cuda";
  const auto& sizes = cuda ? o.sizes : o.host_sizes;
  test::RuntimeDir rt;
  const double w = o.window_s;
  const int pairs = o.publish_pairs;

  Table start{{"simulation", "grid", "process start → first step (ms)", "the daemon's log: started in …"}, {}};
  Table cost{{"simulation", "grid", "steps/s, publishing off", "no reader (60 Hz)", "1 viewer at 60 Hz",
              "4 viewers at 60 Hz", "halves (no reader; 1 viewer)"},
             {}};
  std::string notes;  // why a first-frame figure is missing
  Table first{{"simulation", "grid", "cuview-ctl attach --frames 1", "cuview-gui --screenshot --frames 1",
               "Python: attach → first array"},
              {}};

  for (const auto& sim : o.publish_sims) {
    for (int n : sizes) {
      const std::string grid = std::to_string(n) + "²", size = std::to_string(n) + "x" + std::to_string(n);
      const std::string name = "pub-" + sim + "-" + std::to_string(n);
      const Start st = measure_start(name, sim, size, backend);
      start.rows.push_back({sim, grid, fmt(st.first_step_ms, "%.0f"), st.phases.empty() ? "—" : st.phases});

      DaemonOptions dopt;
      dopt.name = name, dopt.sim = sim, dopt.backend = backend;
      dopt.size = {static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(n)};
      dopt.final_checkpoint = false;
      Daemon daemon(dopt);
      while_running(daemon, name, [&] {
        auto ctl = Client::attach({.name = name, .client = "cuview-bench publish", .import = Import::control_only});
        while (daemon.steps_taken() == 0) std::this_thread::sleep_for(10ms);
        std::this_thread::sleep_for(std::chrono::duration<double>(w));  // past the first batches
        const Cost idle = alternate(daemon, pairs, w);
        Cost with[2];
        const int counts[2] = {1, 4};
        for (int k = 0; k < 2; ++k) {
          const double secs = pairs * 2 * (w + 0.05) + 3;
          std::vector<test::ChildProcess> viewers;
          for (int i = 0; i < counts[k]; ++i)
            viewers.push_back(spawn_viewer(name, 60, secs + 2));
          const auto t0 = Clock::now();
          while (ctl.stats().readers < static_cast<std::uint32_t>(counts[k])) {
            if (seconds_since(t0) > 30) test::fail("the bench viewers did not attach within 30 s");
            std::this_thread::sleep_for(10ms);
          }
          std::this_thread::sleep_for(500ms);  // past their first frames
          with[k] = alternate(daemon, pairs, w);
          for (auto& v : viewers) (void)v.wait_for(60s);
        }
        cost.rows.push_back({sim, grid, fmt(idle.off, "%.0f"), cost_text(idle), cost_text(with[0]), cost_text(with[1]),
                             halves_text(idle) + "; " + halves_text(with[0])});

        std::string failure;
        const double ctl_ms =
            first_frame_ms({test::bin("cuview-ctl"), "--name", name, "attach", "--frames", "1"}, 5, &failure);
        double gui_ms = 0;
        const std::string gui = test::bin("cuview-gui");
        if (::access(gui.c_str(), X_OK) == 0) {
          const auto png = (rt.path() / "first.png").string();
          gui_ms = first_frame_ms({gui, "--name", name, "--screenshot", png, "--frames", "1"}, 5, &failure);
        }
        const double py_ms = first_frame_ms(
            {"/usr/bin/env", "python3", "-c",
             "import cuview\nc = cuview.attach('" + name + "')\nf = c.next_frame(timeout=10.0)\nassert f is not None"},
            5, &failure);
        first.rows.push_back({sim, grid, ctl_ms > 0 ? fmt(ctl_ms, "%.0f") + " ms" : "—",
                              gui_ms > 0 ? fmt(gui_ms, "%.0f") + " ms" : "—",
                              py_ms > 0 ? fmt(py_ms, "%.0f") + " ms" : "—"});
        if (!failure.empty()) {  // said under the tables, on one line
          for (char& ch : failure)
            if (ch == '\n' || ch == '|') ch = ' ';
          notes += "- " + sim + " " + grid + ": " + failure + "\n";
        }
        ctl.shutdown();
      });
    }
  }

  std::ostringstream md;
  const std::string on = cuda ? "" : " — host backend";
  md << "\n### Publishing" << on << "\n\n"
     << "Start: a fresh `cuview-compute` process, spawn → first step (stats polled every 5 ms), and where its own "
        "log says the time went.\n\n"
     << start.markdown()
     << "\nCost to the simulation: cuview-compute's loop in this process, publishing switched off and on between "
        "windows of "
     << fmt(w, "%g") << " s (" << pairs
     << " pairs per figure, ABBA). Each figure is 1 − the median of on/off over neighbouring windows; *halves* are "
        "the same figure over the odd and the even pairs (two runs). Targets: no reader ≤ 0.1 %, one viewer at 60 "
        "Hz ≤ 0.3 %.\n\n"
     << cost.markdown()
     << "\nFirst frame: a fresh process attaching to the running daemon, spawn → exit, median of 5 (the GUI "
        "offscreen when no display is set). Python: `cuview.attach(name).next_frame()` in a fresh interpreter.\n\n"
     << first.markdown();
  if (!notes.empty()) md << "\nNot measured:\n" << notes;
  return md.str();
}

std::string slices_section(const Options& o, const std::string& backend) {
  // The 3-D flow at one size per backend (the largest CUDA --sizes that fits 512³, 64³ on the
  // host), one viewer at 60 Hz of the middle plane across each axis: the cost to the run (the
  // publish section's harness: windows with publishing off and on) and the viewer's latency.
  const bool cuda = backend == "cuda";
  const std::uint32_t n = cuda ? 512 : 64;
  const std::string name = "slices-" + backend, size = std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n);
  test::RuntimeDir rt;
  DaemonOptions dopt;
  dopt.name = name, dopt.sim = "lbm3d", dopt.backend = backend;
  dopt.size = {n, n, n};
  dopt.final_checkpoint = false;
  Daemon daemon(dopt);
  Table t{{"plane", "steps/s, publishing off", "1 viewer of the plane at 60 Hz", "frame → pixels p50 / p99 (ms)",
           "frames/s drawn"},
          {}};
  while_running(daemon, name, [&] {
    auto ctl = Client::attach({.name = name, .client = "cuview-bench slices", .import = Import::control_only});
    while (daemon.steps_taken() == 0) std::this_thread::sleep_for(10ms);
    std::this_thread::sleep_for(std::chrono::duration<double>(o.window_s));
    for (const char* axis : {"z", "y", "x"}) {
      const double secs = o.publish_pairs * 2 * (o.window_s + 0.05) + 3;
      auto viewer = spawn_viewer(name, 60, secs, "view", axis);
      const auto t0 = Clock::now();
      while (ctl.stats().readers < 1) {
        if (seconds_since(t0) > 30) test::fail("the slice viewer did not attach within 30 s");
        std::this_thread::sleep_for(10ms);
      }
      std::this_thread::sleep_for(500ms);
      const Cost c = alternate(daemon, o.publish_pairs, o.window_s);
      const auto r = finish_helper(viewer, "viewer", std::chrono::seconds(static_cast<int>(secs) + 60));
      t.rows.push_back({std::string(axis) + " = " + std::to_string(n / 2), fmt(c.off, "%.1f"), cost_text(c),
                        fmt(r.at("latency_p50_ms"), "%.2f") + " / " + fmt(r.at("latency_p99_ms"), "%.2f"),
                        fmt(r.at("frames") / r.at("seconds"), "%.1f")});
    }
    ctl.shutdown();
  });
  return "\n### Slices of a volume: one viewer per axis — " + backend + ", --sim lbm3d --size " + size +
         "\n\nThe viewer renders 1280×720 of the middle plane (a z-plane is contiguous rows, a y-plane rows a "
         "layer apart, an x-plane gathered a cell at a time by the copy engine); the cost is the run's step rate "
         "with publishing on against off, as in the publish section; the whole frame (every field) is still "
         "written while anyone reads.\n\n" +
         t.markdown();
}

std::string volume_section(const Options& o, const std::string& backend) {
  constexpr int kVolumeStepsPerFrame = 2;
  // The 3-D flow past a sphere (512³ on CUDA, 64³ on the host), one viewer seeing the speed whole
  // at 60 Hz in each mode: the cost to the run (windows with publishing off and on) and what the
  // viewer's picture takes.
  const bool cuda = backend == "cuda";
  const std::uint32_t n = cuda ? 512 : 64;
  const std::string name = "volume-" + backend, size = std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n);
  test::RuntimeDir rt;
  DaemonOptions dopt;
  dopt.name = name, dopt.sim = "lbm3d", dopt.backend = backend;
  dopt.size = {n, n, n};
  dopt.final_checkpoint = false;
  Daemon daemon(dopt);
  Table t{{"mode", "steps/s, publishing off", "1 volume viewer at 60 Hz", "frames/s drawn", "frames of the brick's cells only",
           "frame → pixels p50 / p99 (ms)", "frame complete: wait p50 (ms)", "brick (cells, MB copied)",
           "brick copy p50 (ms)", "rays 1280×720 p50 (ms)", "camera change → picture p50 / p99 (ms)"},
          {}};
  while_running(daemon, name, [&] {
    auto ctl = Client::attach({.name = name, .client = "cuview-bench volume", .import = Import::control_only});
    // Short batches: a frame can only follow a batch, and 16 steps of a 512³ flow take ~120 ms.
    ctl.set({{"steps_per_frame", kVolumeStepsPerFrame}});
    while (daemon.steps_taken() == 0) std::this_thread::sleep_for(10ms);
    std::this_thread::sleep_for(std::chrono::duration<double>(o.window_s));
    for (const char* mode : {"mip", "emission", "isosurface"}) {
      const double secs = o.publish_pairs * 2 * (o.window_s + 0.05) + 3;
      auto viewer = spawn_viewer(name, 60, secs, std::string("volume-") + mode, "speed");
      const auto t0 = Clock::now();
      while (ctl.stats().readers < 1) {
        if (seconds_since(t0) > 30) test::fail("the volume viewer did not attach within 30 s");
        std::this_thread::sleep_for(10ms);
      }
      std::this_thread::sleep_for(500ms);
      const Cost c = alternate(daemon, o.publish_pairs, o.window_s);
      const auto r = finish_helper(viewer, "viewer", std::chrono::seconds(static_cast<int>(secs) + 120));
      const int cells = static_cast<int>(r.at("brick_cells")), stride = static_cast<int>(r.at("stride"));
      t.rows.push_back({mode, fmt(c.off, "%.1f"), cost_text(c), fmt(r.at("frames") / r.at("seconds"), "%.1f"),
                        fmt(100 * r.at("packed") / std::max(1.0, r.at("frames")), "%.0f %%"),
                        fmt(r.at("latency_p50_ms"), "%.1f") + " / " + fmt(r.at("latency_p99_ms"), "%.1f"),
                        fmt(r.at("wait_p50_ms"), "%.1f"), std::to_string(cells) + "³ (every " + std::to_string(stride) + "), " +
                            fmt(r.at("brick_bytes") / 1e6, "%.1f"),
                        fmt(r.at("copy_p50_ms"), "%.2f"), fmt(r.at("rays_p50_ms"), "%.1f"),
                        fmt(r.at("orbit_p50_ms"), "%.1f") + " / " + fmt(r.at("orbit_p99_ms"), "%.1f") +
                            (r.at("orbit_scale") > 1 ? " (at 1/" + fmt(r.at("orbit_scale"), "%.0f") + ")" : "")});
    }
    ctl.shutdown();
  });
  return "\n### A volume seen whole: one viewer per mode — " + backend + ", --sim lbm3d --size " + size + ", field speed" +
         "\n\nThe viewer draws 1280×720 of the whole volume as cuview-gui's volume view does: a brick of at most 128 "
         "cells a side (every k-th cell; the copy engine brings every k-th row of every k-th plane, the host keeps every "
         "k-th cell), the rays on the viewer's " +
         std::to_string(std::thread::hardware_concurrency()) +
         " hardware threads. *Frame complete*: the viewer's host wait for the publisher to finish writing the frame "
         "(the GUI draws what it holds meanwhile). *Camera change → picture*: the brick held drawn again after a 3° "
         "orbit, at the resolution cuview-gui draws while the mouse moves (1/k when a full picture takes over 33 ms). "
         "*Frames of the brick's cells only*: those the flow wrote as every k-th cell alone, packed (the viewer asks for "
         "them: Client::read_every). The cost is the run's step rate with publishing on against off; steps_per_frame " +
         std::to_string(kVolumeStepsPerFrame) + " (a frame can only follow a batch).\n\n" +
         t.markdown();
}

/// A cuview-gateway on this host for remote viewers (tcp on 127.0.0.1, CURVE keys of the bench's
/// own in `rt`'s config directory, its key pinned): `url` is what a viewer gives `--remote`.
struct BenchGateway {
  std::string url;
  test::ChildProcess process;
};
BenchGateway start_bench_gateway(const test::RuntimeDir& rt) {
  const std::string key = make_keys(rt.path() / "config");
  const int port = free_port();
  const std::string at = "127.0.0.1:" + std::to_string(port);
  remote::KnownGateways::read(remote::default_known_gateways()).pin(at, key);
  return {"tcp://" + at + "?key=" + key, test::start_gateway({"--listen", "tcp://" + at, "--log-level", "warn"})};
}

namespace {
/// One picture's colours in each codec a gateway might send them in: bytes, the time to encode
/// and to decode (median of 5), and how many a second a 100 Mbit/s link carries. WebP and zstd
/// are what cuview-gateway offers (remote/picture_codec.hpp); PNG (libpng's default deflate) is
/// measured for the choice. All lossless.
void codec_rows(Table& t, const std::string& mode, const proto::RenderResult& r) {
  const std::uint64_t pixels = std::uint64_t{r.width} * r.height;
  std::vector<std::uint32_t> argb(pixels);
  std::memcpy(argb.data(), r.argb.data(), pixels * 4);
  remote::PictureEncoder enc;
  remote::PictureDecoder dec;
  const auto timed = [](const std::function<void()>& f) {
    std::vector<double> ms;
    for (int k = 0; k < 5; ++k) {
      const auto t0 = Clock::now();
      f();
      ms.push_back(seconds_since(t0) * 1e3);
    }
    return percentile(ms, 0.5);
  };
  std::string packed;
  std::vector<char> back;
  // The values beside them, as the gateway sends them (a lossless f32 view's payload).
  std::vector<float> values(pixels);
  std::memcpy(values.data(), r.values.data(), pixels * 4);
  remote::ValueEncoder venc;
  remote::EncodedValues ev;
  venc.encode(values, remote::Encoding::f32, ev);
  const std::size_t f32_bytes = ev.payload.size();
  venc.encode(values, remote::Encoding::u16, ev);  // what cuview's clients ask for
  const std::size_t value_bytes = ev.payload.size();
  const auto row = [&](const std::string& codec, std::size_t bytes, double enc_ms, double dec_ms) {
    t.rows.push_back({mode, codec, fmt(bytes / 1e3, "%.0f"), fmt(double(pixels * 4) / bytes, "%.1f"),
                      fmt(enc_ms, "%.1f"), fmt(dec_ms, "%.1f"),
                      fmt(value_bytes / 1e3, "%.0f") + " / " + fmt(f32_bytes / 1e3, "%.0f"),
                      fmt(12.5e6 / bytes, "%.0f") + " / " + fmt(12.5e6 / (bytes + value_bytes), "%.0f")});
  };
  for (const auto codec : {remote::PictureCodec::webp, remote::PictureCodec::zstd}) {
    const double e = timed([&] { enc.encode(codec, argb, r.width, r.height, packed); });
    const double d = timed([&] { dec.decode(codec, packed, r.width, r.height, back); });
    if (std::memcmp(back.data(), argb.data(), pixels * 4) != 0)
      throw Error(Errc::internal, std::string(remote::name_of(codec)) + " did not give the picture back exactly");
    row(std::string(remote::name_of(codec)), packed.size(), e, d);
  }
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = r.width, image.height = r.height, image.format = PNG_FORMAT_BGRA;
  std::vector<unsigned char> png(PNG_IMAGE_PNG_SIZE_MAX(image));
  png_alloc_size_t size = png.size();
  const double e = timed([&] {
    size = png.size();
    if (!png_image_write_to_memory(&image, png.data(), &size, 0, argb.data(), 0, nullptr))
      throw Error(Errc::internal, std::string("libpng: ") + image.message);
  });
  row("png (libpng default)", size, e, 0);
  png_image_free(&image);
}
/// What a client spends compositing the pictures of a run of `parts` z-slabs (Run::render):
/// composite_pictures over 1280×720 pictures of each mode, every part showing something at every
/// pixel (the most work), median of 5.
std::string composite_table() {
  constexpr std::size_t w = 1280, h = 720, n = w * h;
  Table t{{"parts", "mode", "composite (ms)"}, {}};
  for (const std::size_t parts : {2u, 4u, 8u}) {
    std::vector<std::vector<std::uint32_t>> argb(parts, std::vector<std::uint32_t>(n));
    std::vector<std::vector<float>> values(parts, std::vector<float>(n));
    for (std::size_t k = 0; k < parts; ++k)
      for (std::size_t i = 0; i < n; ++i) {
        argb[k][i] = 0xff000000u | static_cast<std::uint32_t>((i * 2654435761u + k) >> 8);
        values[k][i] = 0.1f + 0.8f * static_cast<float>((i * 7 + k * 13) % 101) / 101;  // opacities < 1
      }
    std::vector<PartPicture> nearest_first;
    for (std::size_t k = 0; k < parts; ++k) nearest_first.push_back({argb[k].data(), values[k].data()});
    std::vector<std::uint32_t> out(n);
    std::vector<float> shown(n);
    for (const auto mode : {VolumeMode::mip, VolumeMode::emission, VolumeMode::isosurface}) {
      std::vector<double> ms;
      for (int r = 0; r < 5; ++r) {
        const auto t0 = Clock::now();
        composite_pictures(mode, nearest_first, n, out.data(), shown.data());
        ms.push_back(seconds_since(t0) * 1e3);
      }
      t.rows.push_back({std::to_string(parts), mode == VolumeMode::mip ? "mip" : mode == VolumeMode::emission ? "emission" : "isosurface",
                        fmt(percentile(ms, 0.5), "%.1f")});
    }
  }
  return t.markdown();
}
}  // namespace

std::string pictures_section(const Options& o, const std::string& backend) {
  // The 3-D flow past a sphere (512³ on CUDA, 64³ on the host) under a budget of 1 % and of 5 %,
  // a client asking for 1280×720 pictures of the speed cast by the run from every cell (`render`)
  // as fast as they come: pictures a second, the time each takes where it is cast, the cost inside
  // (stats) and outside (the step rate with publishing on against off), and a camera change →
  // its picture.
  const bool cuda = backend == "cuda";
  const std::uint32_t n = cuda ? o.picture_size : 64;
  const std::string grid = std::to_string(n) + "³";
  Table t{{"budget", "mode", "pictures/s", "time per picture (ms)", "cost, publisher's measure",
           "cost, outside (halves)", "steps/s, publishing off", "camera change → picture p50 / p99 (ms)",
           "turning: pictures/s"},
          {}};
  Table through{{"mode", "link", "pictures/s received", "kB a picture on the link", "pictures/s cast"}, {}};
  Table codecs{{"mode", "codec", "colours (kB)", "ratio", "encode (ms)", "decode (ms)", "values u16 / f32 (kB)",
                 "pictures/s 100 Mbit/s carries: colours / with values"},
                {}};
  for (const double percent : o.picture_budgets) {
    const double budget = percent / 100;
    const bool last = percent == o.picture_budgets.back();
    test::RuntimeDir rt;
    const std::string name = "pictures-" + backend;
    DaemonOptions dopt;
    dopt.name = name, dopt.sim = "lbm3d", dopt.backend = backend;
    dopt.size = {n, n, n};
    dopt.max_cost = budget;
    dopt.final_checkpoint = false;
    Daemon daemon(dopt);
    std::optional<BenchGateway> gateway;
    while_running(daemon, name, [&] {
      auto ctl = Client::attach({.name = name, .client = "cuview-bench pictures", .import = Import::control_only});
      ctl.set({{"steps_per_frame", 2}});  // a frame (and its picture) can only follow a batch
      while (daemon.steps_taken() == 0) std::this_thread::sleep_for(10ms);
      std::this_thread::sleep_for(std::chrono::duration<double>(o.window_s));
      for (const char* mode : {"mip", "emission", "isosurface"}) {
        proto::RenderArgs v;
        v.field = "speed", v.width = 1280, v.height = 720, v.mode = mode, v.azimuth = 35, v.elevation = 25;
        v.lo = 0, v.hi = 0.08f, v.level = 0.06f;
        for (std::uint32_t i = 0; i < 256; ++i) {
          v.lut.push_back(0xff000000u | i << 16 | i << 8 | i);
          v.opacity.push_back(4.0f / static_cast<float>(n) * static_cast<float>(i) / 255.0f);
        }
        // Asking throughout, as a viewer at rest does after each frame notice (here every 5 ms).
        std::atomic<bool> stop{false};
        std::thread asker([&] {
          auto c = Client::attach({.name = name, .client = "cuview-bench pictures", .import = Import::control_only});
          while (!stop) {
            (void)c.render(v);
            std::this_thread::sleep_for(5ms);
          }
        });
        std::this_thread::sleep_for(1s);  // past the first pictures and their measured costs
        const auto s0 = ctl.stats();
        const auto t1 = Clock::now();
        std::this_thread::sleep_for(3s);
        const auto s1 = ctl.stats();
        const double per_s = static_cast<double>(s1.pictures - s0.pictures) / seconds_since(t1);
        const Cost outside = alternate(daemon, o.publish_pairs, o.window_s);
        stop = true;
        asker.join();
        // A camera turned 3° at a time: from the request to its first picture.
        std::vector<double> turns;
        auto c = Client::attach({.name = name, .client = "cuview-bench pictures", .import = Import::control_only});
        const auto turning_from = Clock::now();
        for (int k = 0; k < 24; ++k) {
          v.azimuth += 3;
          const auto t0 = Clock::now();
          while (c.render(v).pending && seconds_since(t0) < 3) std::this_thread::sleep_for(1ms);
          turns.push_back(seconds_since(t0) * 1e3);
          if (seconds_since(t0) >= 3) break;  // the budget allows fewer pictures than that: said as ≥ 3000
        }
        const double turning_per_s = static_cast<double>(turns.size()) / seconds_since(turning_from);
        if (last) {
          proto::RenderResult r;
          for (const auto t0 = Clock::now(); seconds_since(t0) < 10; std::this_thread::sleep_for(5ms))
            if (r = c.render(v); !r.pending) break;
          if (!r.pending) codec_rows(codecs, mode, r);
          // Through a gateway on tcp://127.0.0.1 (the link scripts/gpu-pictures.sh limits with
          // tc, as bench-remote.sh does): a remote client asking as fast as answers come.
          if (!gateway) gateway.emplace(start_bench_gateway(rt));
          auto run = cuview::open({.name = name, .remote = {gateway->url}, .client = "cuview-bench pictures"});
          const auto t0 = Clock::now();
          while (run->render(v).pending && seconds_since(t0) < 10) std::this_thread::sleep_for(5ms);
          const auto p0 = ctl.stats().pictures;
          const auto b0 = loopback_bytes();
          const auto t1 = Clock::now();
          std::uint64_t received = 0, last = 0;
          while (seconds_since(t1) < 3)
            if (const auto r = run->render(v); !r.pending && r.seq != last) ++received, last = r.seq;
          const double secs = seconds_since(t1);
          const auto bytes = static_cast<double>(loopback_bytes() - b0);
          through.rows.push_back({mode, o.link_label, fmt(received / secs, "%.1f"),
                                  received ? fmt(bytes / received / 1e3, "%.0f") : "—",
                                  fmt(static_cast<double>(ctl.stats().pictures - p0) / secs, "%.1f")});
        }
        t.rows.push_back({proto::percent_text(budget), mode, fmt(per_s, "%.1f"), fmt(s1.picture_ms, "%.2f"),
                          proto::percent_text(s1.cost), cost_text(outside) + " (" + halves_text(outside) + ")",
                          fmt(outside.off, "%.0f"),
                          fmt(percentile(turns, 0.5), "%.0f") + " / " + fmt(percentile(turns, 0.99), "%.0f"),
                          fmt(turning_per_s, "%.1f")});
      }
      ctl.shutdown();
    });
  }
  return "\n### Pictures cast by the run from every cell — " + backend + ", --sim lbm3d --size " + grid +
         ", field speed, 1280×720\n\nA client asks for the picture (`render`, protocol 10) every 5 ms; the run "
         "casts one with each frame it publishes, on its GPU (a stream of the lowest priority beside the "
         "simulation's) or its CPU, and the budget decides how many. *Pictures/s*: stats.pictures over 3 s; "
         "*time per picture*: the newest one's, where it was cast; *publisher's measure*: stats.cost (frames and "
         "pictures); *outside*: the step rate with publishing on against off (" +
         std::to_string(o.publish_pairs) + " pairs of " + fmt(o.window_s, "%g") +
         " s windows); *camera change → picture*: a 3° turn asked for until its picture comes (from the newest "
         "frame: a view asked for less than 250 ms ago makes no frame), 24 turns one after another; *turning*: "
         "the pictures a second those turns got. steps_per_frame 2.\n\n" +
         t.markdown() +
         "\n\n#### Pictures through a gateway: the colours in each lossless codec (" + backend + ", " + grid +
         ", 1280×720)\n\nThe newest picture of each mode above (the last budget), its colours compressed as a gateway's "
         "`picture` answer carries them (remote/picture_codec.hpp); median of 5, on one core of this host. The values "
         "travel beside them as a view's (what a viewer reads under the pointer, and what the parts' pictures are "
         "composited by): u16, as cuview's clients ask (the picture's range in 65 535 levels), or f32, lossless. *Pictures/s 100 Mbit/s carries*: 12.5 MB/s over the bytes "
         "measured, colours alone / with the u16 values.\n\n" +
         codecs.markdown() +
         "\n\n#### Pictures through a gateway (" + backend + ", " + grid + ", 1280×720, " +
         fmt(o.picture_budgets.back(), "%g") + " % budget, link " +
         o.link_label + ")\n\nA remote client (tcp://127.0.0.1, CURVE) asks the gateway for the picture "
         "(`picture`: colours WebP, values u16) as fast as answers come, for 3 s: the distinct pictures received a "
         "second, the bytes the link carried for each (loopback, both ways), and the pictures the run cast meanwhile."
         "\n\n" +
         through.markdown() +
         "\n\n#### Compositing a run of parts' pictures (the client's CPU, one thread, 1280×720)\n\n"
         "Run::render composites the parts' pictures of one step front to back (composite_pictures); every part "
         "shows something at every pixel here, the most work there is. Median of 5.\n\n" +
         composite_table();
}

/// One simulation at one size.
struct SizeCase {
  std::string sim;
  std::uint32_t w, h, d;
};
/// Every simulation at its largest size: 2-D at the largest --sizes (--host-sizes), 3-D at 512³
/// (64³ on the host).
std::vector<SizeCase> largest_cases(const Options& o, bool cuda) {
  const auto n2 = static_cast<std::uint32_t>(cuda ? o.sizes.back() : o.host_sizes.back());
  const std::uint32_t n3 = cuda ? 512 : 64;
  std::vector<SizeCase> cases;
  for (const auto& sim : o.publish_sims) cases.push_back({sim, n2, n2, 1});
  for (const char* sim : {"grayscott3d", "lbm3d"}) cases.push_back({sim, n3, n3, n3});
  return cases;
}

std::string budget_section(const Options& o, const std::string& backend) {
  // Every simulation at the largest size, 2-D at the largest --sizes (--host-sizes), 3-D at 512³
  // (64³ on the host), under --max-cost; one viewer at 60 Hz showing one field. Frames delivered:
  // the publisher's frames over a window with publishing on; cost inside: what the publisher
  // measured (stats); cost outside: the publish section's harness (windows off and on).
  const bool cuda = backend == "cuda";
  const double budget = o.budget_percent / 100;
  test::RuntimeDir rt;
  const auto cases = largest_cases(o, cuda);
  Table t{{"simulation", "grid", "frames/s delivered", "cost, publisher's measure", "cost, outside (halves)",
           "limited by", "steps/s, publishing off (the viewer's frames/s)"},
          {}};
  std::optional<BenchGateway> gateway;
  if (o.budget_remote) gateway.emplace(start_bench_gateway(rt));
  for (const auto& c : cases) {
    const std::string grid = std::to_string(c.w) + (c.d > 1 ? "³" : "²");
    const std::string name = "budget-" + c.sim;
    DaemonOptions dopt;
    dopt.name = name, dopt.sim = c.sim, dopt.backend = backend;
    dopt.size = c.d > 1 ? Axes{c.d, c.h, c.w} : Axes{c.h, c.w};
    dopt.max_cost = budget;
    dopt.final_checkpoint = false;
    Daemon daemon(dopt);
    while_running(daemon, name, [&] {
      auto ctl = Client::attach({.name = name, .client = "cuview-bench budget", .import = Import::control_only});
      while (daemon.steps_taken() == 0) std::this_thread::sleep_for(10ms);
      const double secs = o.publish_pairs * 2 * (o.window_s + 0.05) + 8;
      // A volume is watched a plane at a time: the middle z-plane. Remote: cuview-ctl's views
      // through the gateway, which reads the field they show.
      auto viewer = gateway ? test::ChildProcess({test::bin("cuview-ctl"), "--remote", gateway->url, "--name", name,
                                                  "attach", "--frames", "1000000", "--frame-timeout", "30"})
                            : spawn_viewer(name, 60, secs + 2, "view", c.d > 1 ? "z" : "");
      const auto t0 = Clock::now();
      while (ctl.stats().readers < 1) {
        if (seconds_since(t0) > 30) test::fail("the bench viewer did not attach within 30 s");
        std::this_thread::sleep_for(10ms);
      }
      std::this_thread::sleep_for(1s);  // past the first frames and the first measured costs
      const auto f0 = ctl.stats().frames_published;
      const auto t1 = Clock::now();
      std::this_thread::sleep_for(3s);
      const auto s = ctl.stats();
      const double fps = static_cast<double>(s.frames_published - f0) / seconds_since(t1);
      const Cost outside = alternate(daemon, o.publish_pairs, o.window_s);
      // The viewer ran throughout (a viewer that failed would have cost nothing): say so.
      std::string drew = "a remote viewer";
      if (gateway) {
        if (!viewer.running()) test::fail("the remote viewer stopped: " + viewer.err());
        viewer.signal(SIGTERM);
        (void)viewer.wait_for(10s);
      } else {
        const auto r = finish_helper(viewer, "viewer", std::chrono::seconds(static_cast<int>(secs) + 60));
        drew = "the viewer drew " + fmt(r.at("frames") / r.at("seconds"), "%.1f") + "/s";
      }
      t.rows.push_back({c.sim, grid, fmt(fps, "%.1f"), proto::percent_text(s.cost),
                        cost_text(outside) + " (" + halves_text(outside) + ")", s.limited_by.empty() ? "—" : s.limited_by,
                        fmt(outside.off, "%.0f") + " (" + drew + ")"});
      ctl.shutdown();
    });
  }
  return "\n### The cost budget — " + backend + ", --max-cost " + fmt(o.budget_percent, "%g") +
         (gateway ? "%, one remote viewer (cuview-ctl --remote … attach, through a cuview-gateway on this host)"
                  : "%, one viewer at 60 Hz") +
         "\n\nEach simulation at its largest size with one `cuview-bench viewer` at 60 Hz "
         "(1280×720 of one field). *Frames/s delivered*: frames published over 3 s; *publisher's measure*: `stats` "
         "cost (GPU events around each frame's work); *outside*: the run's step rate with publishing on against "
         "off, as in the publish section (" +
         std::to_string(o.publish_pairs) + " pairs of " + fmt(o.window_s, "%g") +
         " s windows; halves: odd and even pairs). Targets at 0.3 %: ≥ 30 frames/s for the 2-D simulations at "
         "8192², ≥ 10 for the 3-D ones at 512³.\n\n" +
         t.markdown();
}

std::string first_section(const Options& o, const std::string& backend) {
  // Every simulation at the largest size (2-D at the largest --sizes, 3-D at 512³; the host: its
  // sizes, 64³), running with nobody attached; then fresh processes, each start → exit after its
  // first frame (median of 5): cuview-ctl, cuview-gui (offscreen or the display) and Python. The
  // phases are cuview-ctl's own "first frame after …" line from one more run.
  const bool cuda = backend == "cuda";
  test::RuntimeDir rt;
  const auto cases = largest_cases(o, cuda);
  Table t{{"simulation", "grid", "cuview-ctl attach --frames 1", "cuview-gui --screenshot --frames 1",
           "Python: attach → first array", "through cuview-gateway: cuview-ctl's first view",
           "where cuview-ctl's time went (its own line)"},
          {}};
  std::string notes;
  const std::string gui = test::bin("cuview-gui");
  // A gateway on this host: a remote viewer is one more reader, the gateway, which attaches once
  // and stays; its viewers' first views are timed.
  auto gateway = start_bench_gateway(rt);
  const std::string& url = gateway.url;
  for (const auto& c : cases) {
    const std::string grid = std::to_string(c.w) + (c.d > 1 ? "³" : "²");
    const std::string name = "first-" + c.sim;
    DaemonOptions dopt;
    dopt.name = name, dopt.sim = c.sim, dopt.backend = backend;
    dopt.size = c.d > 1 ? Axes{c.d, c.h, c.w} : Axes{c.h, c.w};
    dopt.final_checkpoint = false;
    Daemon daemon(dopt);
    while_running(daemon, name, [&] {
      while (daemon.steps_taken() == 0) std::this_thread::sleep_for(10ms);
      std::this_thread::sleep_for(500ms);  // past the first batches
      std::string failure;
      const std::vector<std::string> ctl_argv{test::bin("cuview-ctl"), "--name", name, "attach", "--frames", "1"};
      const double ctl_ms = first_frame_ms(ctl_argv, 5, &failure);
      std::string phases = "—";
      {
        test::ChildProcess p(ctl_argv);
        if (p.wait_for(30s) == 0) {
          const std::string out = p.out();
          const auto at = out.find("first frame after ");
          if (at != std::string::npos) phases = out.substr(at + 18, out.find('\n', at) - at - 18);
        }
      }
      double gui_ms = 0;
      if (::access(gui.c_str(), X_OK) == 0) {
        const auto png = (rt.path() / "first.png").string();
        gui_ms = first_frame_ms({gui, "--name", name, "--screenshot", png, "--frames", "1"}, 5, &failure);
      }
      const double py_ms = first_frame_ms(
          {"/usr/bin/env", "python3", "-c",
           "import cuview\nc = cuview.attach('" + name + "')\nf = c.next_frame(timeout=10.0)\nassert f is not None"},
          5, &failure);
      const std::vector<std::string> remote_argv{test::bin("cuview-ctl"), "--remote", url, "--name", name, "attach",
                                                 "--frames", "1"};
      (void)first_frame_ms(remote_argv, 1, &failure);  // the gateway attaches to the run (once)
      const double remote_ms = first_frame_ms(remote_argv, 5, &failure);
      auto ms = [](double v) { return v > 0 ? fmt(v, "%.0f") + " ms" + (v <= 250 ? " ✓" : " ✗") : std::string("—"); };
      for (char& ch : phases)
        if (ch == '|') ch = '/';
      t.rows.push_back({c.sim, grid, ms(ctl_ms), ms(gui_ms), ms(py_ms), ms(remote_ms), phases});
      if (!failure.empty()) {
        for (char& ch : failure)
          if (ch == '\n' || ch == '|') ch = ' ';
        notes += "- " + c.sim + " " + grid + ": " + failure + "\n";
      }
      Client::attach({.name = name, .client = "cuview-bench first", .import = Import::control_only}).shutdown();
    });
  }
  return "\n### First pixels — " + backend +
         ": a fresh process's start → its first frame (median of 5; target ≤ 250 ms)\n\n"
         "Each simulation running at its largest size with nobody attached; then a new process that attaches, takes "
         "one frame and exits, timed from spawn to exit: `cuview-ctl attach --frames 1`, `cuview-gui --screenshot "
         "--frames 1` (the frame drawn and saved), Python (`import cuview`, `attach`, `next_frame()`) and, through a "
         "cuview-gateway on this host (tcp, CURVE), `cuview-ctl --remote … attach --frames 1` (its first view; the "
         "gateway attached once before). The last column is cuview-ctl's own line (`first frame after …`, from "
         "attach to the frame, phase by phase).\n\n" +
         t.markdown() + (notes.empty() ? "" : "\n" + notes);
}

}  // namespace cuview::bench
