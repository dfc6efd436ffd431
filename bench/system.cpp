// Sections 2-5: real processes. A cuview-compute daemon, viewers that render like cuview-gui
// (this program's `viewer` subcommand), the host-copy alternative (`copy-producer`), and a
// client in this process that times each frame's handoff.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <thread>

#include "bench.hpp"
#include "cuview/client.hpp"
#include "cuview/posix.hpp"
#include "cuview/view_sampler.hpp"
#include "cuview/brick_sampler.hpp"
#include "process.hpp"
#include "render/colormap.hpp"
#include "render/render.hpp"
#include "render/volume_render.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include "render_kernel.hpp"
#endif

namespace cuview::bench {
namespace {
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string self_exe() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec).string();
}

double ms_since(std::int64_t realtime_stamp) { return static_cast<double>(realtime_ns() - realtime_stamp) * 1e-6; }

/// How a bench viewer turns a frame into pixels.
///   view:   as cuview-gui does (cuview::ViewSampler, then gui::colour_values): host wait on the
///           frame's event, the view's sampled rows by the copy engine, colours on the CPU (host
///           backend: read in place);
///   kernel: the viewer's previous path, for comparison: its stream waits on the frame's event and
///           a render kernel runs in its own context (bench/render_kernel.cu);
///   wait:   the frame's handoff only: wait for its event on the host, render nothing.
enum class RenderMode { view, kernel, wait };

class ViewRenderer {
 public:
  /// `plane`: of a volume, the axis across the plane shown (at the middle of that axis).
  ViewRenderer(const proto::DescribeResult& d, int w, int h, RenderMode mode, const std::string& plane = "")
      : mode_(mode),
        t_(fit(d, w, h, plane)),
        lut_(gui::make_lut(gui::Colormap::viridis)),
        field_(d.fields.at(0)),
        rgba_(static_cast<std::size_t>(w) * h),
        values_(rgba_.size()) {
    if (!plane.empty() && d.dims.size() == 3) {
      const auto axis = slice_axis_named(plane);
      field_ = plane_of(field_, Slice{axis, d.dims[static_cast<std::size_t>(axis)] / 2});
    }
  }
  static gui::ViewTransform fit(const proto::DescribeResult& d, int w, int h, const std::string& plane) {
    auto cols = static_cast<int>(d.extent().width()), rows = static_cast<int>(d.extent().height());
    if (!plane.empty() && d.dims.size() == 3) {
      const auto rc = plane_dims(d.dims, slice_axis_named(plane));
      rows = static_cast<int>(rc[0]), cols = static_cast<int>(rc[1]);
    }
    return gui::ViewTransform::fit(cols, rows, w, h, 1.0, cols / 2.0, rows / 2.0);
  }

  /// Returns once the view's pixels are in host memory (or, in wait mode, the frame is complete).
  void render(const Frame& f) {
    if (mode_ == RenderMode::wait) {
      f.wait();
      return;
    }
#ifdef CUVIEW_HAVE_CUDA
    if (mode_ == RenderMode::kernel && f.device_slot() != nullptr) {
      if (!kernel_) kernel_ = std::make_unique<KernelRenderer>();
      f.wait_on(kernel_->stream());
      kernel_->render(
          reinterpret_cast<const float*>(static_cast<const unsigned char*>(f.device_slot()) + field_.offset),
          lut_.data(), t_, rgba_.data(), values_.data());
      return;
    }
#endif
    sampler_.sample(f, field_, t_, sampled_);
    gui::colour_values(sampled_.values.data(), sampled_.values.size(), lut_.data(), t_.lo, t_.hi, rgba_.data());
  }

 private:
  RenderMode mode_;
  gui::ViewTransform t_;
  gui::Lut lut_;
  proto::FieldDesc field_;
  std::vector<std::uint32_t> rgba_;
  std::vector<float> values_;  ///< the kernel's
  ViewSampler sampler_;
  SampledView sampled_;  ///< reused from frame to frame, as cuview-gui's worker does
#ifdef CUVIEW_HAVE_CUDA
  std::unique_ptr<KernelRenderer> kernel_;
#endif
};

RenderMode render_mode(const std::string& s) {
  if (s == "view") return RenderMode::view;
  if (s == "kernel") return RenderMode::kernel;
  if (s == "wait") return RenderMode::wait;
  throw Error(Errc::bad_value, "--render " + s + ": expected view, kernel or wait");
}

Client attach_control(const std::string& name) {
  return Client::attach({.name = name, .client = "cuview-bench", .import = Import::control_only});
}

constexpr int kWindows = 5;

/// Simulation steps per second: the median of kWindows windows of `window_s`.
double step_rate(Client& c, double window_s) {
  std::vector<double> rates;
  for (int i = 0; i < kWindows; ++i) {
    const auto s0 = c.stats().step;
    const auto t0 = Clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(window_s));
    const auto s1 = c.stats().step;
    rates.push_back(static_cast<double>(s1 - s0) / std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return rate_dist(rates).median;
}


}  // namespace

std::map<std::string, double> finish_helper(test::ChildProcess& p, const std::string& prefix,
                                            std::chrono::seconds limit) {
  const auto code = p.wait_for(limit);
  if (!code || *code != 0)
    test::fail(prefix + " helper failed (" + (code ? "exit " + std::to_string(*code) : std::string("timed out")) +
               "):\n" + p.out() + p.err());
  return parse_fields(p.out(), prefix);
}

namespace {

struct Handoff {
  std::vector<double> record_to_wait, done_to_wait, stamp_to_pixels;  // ms
  Clocks clocks;
};

/// Takes `samples` frames in this process: idle (daemon paused, one step per frame, so the GPU
/// has nothing else to do) or saturated (the simulation running flat out).
Handoff measure_handoff(Client& c, bool idle, int samples, bool cuda) {
  Handoff h;
  ViewRenderer view(c.description(), 1280, 720, RenderMode::view);
  c.pause();
  while (c.next_frame(200ms)) {
  }  // drop frames published before the pause
  // The GPU's timer drifts from CLOCK_REALTIME by microseconds per second: calibrate for each
  // row, while the daemon is paused (a busy GPU would stretch the probe's round trips).
  if (cuda) {
    const auto clocks = calibrate_gpu_clock();
    if (!clocks) test::fail("cannot calibrate the GPU clock: no usable CUDA device");
    h.clocks = *clocks;
  }
  if (!idle) {
    c.resume();
    (void)c.next_frame(5s);  // the first frame may be the one the pause ended on
  }
  for (int i = 0; i < samples; ++i) {
    if (idle) c.step(1);
    auto f = c.next_frame(10s);
    if (!f) test::fail("no frame within 10 s while measuring the handoff");
    f->wait();
    const auto ready = realtime_ns();
    view.render(*f);
    h.stamp_to_pixels.push_back(ms_since(f->info().stamp_ns));
    h.record_to_wait.push_back(static_cast<double>(ready - f->info().stamp_ns) * 1e-6);
    const double done = static_cast<double>(f->trailer().done_ns) - h.clocks.offset_ns;  // as CLOCK_REALTIME
    h.done_to_wait.push_back((static_cast<double>(ready) - done) * 1e-6);
  }
  if (idle) c.resume();
  return h;
}

std::string ms(const Dist& d) { return fmt(d.median, "%.3f") + " / " + fmt(d.p99, "%.3f"); }

}  // namespace

test::ChildProcess spawn_viewer(const std::string& name, double hz, double seconds,
                                const std::string& render, const std::string& plane) {
  std::vector<std::string> argv{self_exe(), "viewer", "--name", name, "--hz", fmt(hz, "%g"), "--seconds",
                                fmt(seconds, "%g"), "--render", render};
  if (!plane.empty()) argv.insert(argv.end(), {render.rfind("volume-", 0) == 0 ? "--field" : "--plane", plane});
  return test::ChildProcess(argv);
}

namespace {
/// The volume view as cuview-gui draws it (gui/render/volume_view.cpp): the brick by the copy
/// engine (BrickSampler), the rays on this process's cores. Prints the viewer line with the
/// brick's copy, the rays' time, and a camera change → picture from the brick held (orbiting 3°
/// at a time, as a mouse drag does).
int run_volume_viewer(const ViewerArgs& a) {
  const auto t0 = monotonic_ns();
  try {
    auto c = Client::attach({.name = a.name, .client = "cuview-bench volume viewer"});
    const double attach_ms = static_cast<double>(monotonic_ns() - t0) * 1e-6;
    const auto& d = c.description();
    const auto grid = d.dims;
    if (grid.size() != 3) throw Error(Errc::bad_value, "daemon '" + a.name + "' has no volume to view");
    std::size_t field = 0;
    for (std::size_t k = 0; k < d.fields.size(); ++k)
      if (d.fields[k].name == a.field) field = k;
    c.read_fields({d.fields[field].name});
    const std::array<std::uint32_t, 3> g{grid[0], grid[1], grid[2]};
    // As cuview-gui: frames of the brick's cells only, which the flow then writes alone.
    c.read_every(static_cast<std::uint32_t>(BrickSampler::stride_for(g, a.max_brick)));
    const std::string m = a.render.substr(std::string("volume-").size());
    const auto mode = m == "emission" ? gui::VolumeMode::emission
                      : m == "isosurface" ? gui::VolumeMode::isosurface
                                          : gui::VolumeMode::mip;
    BrickSampler sampler;
    HostBrick brick;
    std::size_t packed = 0;  // frames the publisher wrote as the brick's cells only
    gui::VolumeStyle style;
    style.lut = gui::make_lut(gui::Colormap::viridis);
    gui::VolumeCamera camera{30, 20};
    std::vector<double> latency, wait_ms, copy_ms, ray_ms, orbit_ms;
    double bytes = 0;
    const auto draw = [&](int scale) {
      style.lo = brick.lo, style.hi = brick.hi > brick.lo ? brick.hi : brick.lo + 1e-6f;
      style.level = 0.5f * (style.lo + style.hi);
      style.opacity = gui::opacity_preset("ramp", std::max({brick.width, brick.height, brick.depth}));
      (void)gui::render_volume({brick.values.data(), brick.width, brick.height, brick.depth}, camera, mode, style,
                               a.view_w / scale, a.view_h / scale);
    };
    const auto take = [&](const Frame& f) {
      const auto w0 = Clock::now();
      f.wait();  // the frame complete (the GUI polls Frame::ready instead, drawing what it holds meanwhile)
      wait_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - w0).count());
      const auto s0 = Clock::now();
      BrickSampler::begin(brick, g, BrickSampler::stride_for(g, a.max_brick));
      sampler.sample(f, d.fields[field], own_block(d), brick);
      BrickSampler::finish(brick);
      copy_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s0).count());
      bytes = static_cast<double>(sampler.bytes_copied());
      packed += f.every() > 1 ? 1 : 0;
    };
    auto first = c.next_frame(10s);
    if (!first) throw Error(Errc::timeout, "no frame from daemon '" + a.name + "' within 10 s of attaching");
    const double verified_ms = static_cast<double>(monotonic_ns() - t0) * 1e-6;
    first.reset();
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.seconds));
    const auto period =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.hz > 0 ? 1 / a.hz : 0));
    auto next = start;
    while (Clock::now() < deadline) {
      auto f = c.next_frame(500ms);
      if (!f) continue;
      take(*f);
      const auto r0 = Clock::now();
      draw(1);
      ray_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - r0).count());
      latency.push_back(ms_since(f->info().stamp_ns));
      f.reset();
      if (a.hz > 0) {
        next += period;
        if (next < Clock::now()) next = Clock::now();
        std::this_thread::sleep_until(next);
      }
    }
    const double secs = std::chrono::duration<double>(Clock::now() - start).count();
    // Interaction: a camera change drawn from the brick held, 20 times, at the resolution the GUI
    // draws while the mouse moves (gui::interactive_scale of the full picture's time).
    const int scale = gui::interactive_scale(percentile(ray_ms, 0.5));
    for (int i = 0; i < 20 && !brick.values.empty(); ++i) {
      camera.azimuth_deg += 3;
      const auto r0 = Clock::now();
      draw(scale);
      orbit_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - r0).count());
    }
    const auto dl = latency_dist(latency);
    std::printf(
        "viewer frames=%zu seconds=%.3f latency_p50_ms=%.4f latency_p99_ms=%.4f attach_ms=%.2f verified_ms=%.2f "
        "wait_p50_ms=%.3f copy_p50_ms=%.3f rays_p50_ms=%.3f orbit_p50_ms=%.3f orbit_p99_ms=%.3f orbit_scale=%d "
        "brick_bytes=%.0f brick_cells=%d stride=%d packed=%zu\n",
        latency.size(), secs, dl.median, dl.p99, attach_ms, verified_ms, percentile(wait_ms, 0.5),
        percentile(copy_ms, 0.5), percentile(ray_ms, 0.5), percentile(orbit_ms, 0.5), percentile(orbit_ms, 0.99),
        scale, bytes, brick.width, brick.stride, packed);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuview-bench viewer: %s\n", e.what());
    return 1;
  }
}
}  // namespace

int run_viewer(const ViewerArgs& a) {
  if (a.render.rfind("volume-", 0) == 0) return run_volume_viewer(a);
  const auto t0 = monotonic_ns();
  try {
    auto c = Client::attach({.name = a.name, .client = "cuview-bench viewer"});
    const double attach_ms = static_cast<double>(monotonic_ns() - t0) * 1e-6;
    ViewRenderer view(c.description(), a.view_w, a.view_h, render_mode(a.render), a.plane);
    c.read_fields({c.description().fields.at(0).name});  // the field it shows, as cuview-gui reads
    auto first = c.next_frame(10s);
    if (!first) throw Error(Errc::timeout, "no frame from daemon '" + a.name + "' within 10 s of attaching");
    if (auto bad = first->verify()) throw Error(Errc::bad_value, *bad);
    const double verified_ms = static_cast<double>(monotonic_ns() - t0) * 1e-6;
    first.reset();
    std::vector<double> latency;
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.seconds));
    const auto period =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.hz > 0 ? 1 / a.hz : 0));
    auto next = start;
    while (Clock::now() < deadline) {
      auto f = c.next_frame(500ms);
      if (!f) continue;
      view.render(*f);
      latency.push_back(ms_since(f->info().stamp_ns));
      f.reset();
      if (a.hz > 0) {
        next += period;
        if (next < Clock::now()) next = Clock::now();
        std::this_thread::sleep_until(next);
      }
    }
    const double secs = std::chrono::duration<double>(Clock::now() - start).count();
    const auto d = latency_dist(latency);
    std::printf(
        "viewer frames=%zu seconds=%.3f latency_p50_ms=%.4f latency_p99_ms=%.4f attach_ms=%.2f verified_ms=%.2f\n",
        latency.size(), secs, d.median, d.p99, attach_ms, verified_ms);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuview-bench viewer: %s\n", e.what());
    return 1;
  }
}

std::string system_sections(const Options& o, const std::string& backend) {
  const bool cuda = backend == "cuda";
  const auto& sizes = cuda ? o.sizes : o.host_sizes;
  const auto tb = cuda ? test::Backend::cuda : test::Backend::host;
  test::RuntimeDir rt;  // daemons and helpers of this run only
  double clock_error_ns = 0;
  const double w = o.window_s;
  const auto viewer_secs = kWindows * w + 2.5;  // covers the rate windows after the viewer attached
  const auto limit = std::chrono::seconds(static_cast<int>(viewer_secs) + 60);

  Table handoff{{"grid", "simulation", "event record → wait returns", "frame complete → wait returns",
                 "frame timestamp → viewer pixels ready"},
                {}};
  Table cost{{"grid", "daemon publishes", "viewers", "simulation steps/s", "vs no viewer", "frames/s per viewer",
              "viewer: frame timestamp → pixels (median / p99 ms)"},
             {}};
  Table attach{{"grid", "start → attached (ms)", "start → first verified frame (ms)", "process start → exit (ms)"}, {}};
  Table sharing{{"grid", "sharing", "start → attached (ms)", "start → first verified frame (ms)",
                 "handoff idle: record → wait returns", "handoff saturated: record → wait returns"},
                {}};
  Table copy{
      {"grid", "frame", "latency zero-copy (median / p99 ms)", "latency via host (median / p99 ms)", "latency ratio",
       "sim. slowdown zero-copy (60 Hz, handoff only)", "sim. slowdown via host (60 Hz)", "frames delivered via host"},
      {}};
  std::map<int, Dist> zero_copy_latency;
  std::map<int, double> zero_copy_slowdown;

  for (int n : sizes) {
    const std::string grid = std::to_string(n) + "²", size = std::to_string(n) + "x" + std::to_string(n);
    const std::string name = "bench-" + std::to_string(n);
    {
      auto daemon = test::start_daemon(name, tb, {"--log-level", "warn", "--no-final-checkpoint"}, size);
      auto ctl = attach_control(name);
      if (o.wants("cost")) {
        // Each row against the mean of no-viewer windows taken just before and just after it.
        struct Row {
          int viewers;
          const char* render;
          const char* label;
        };
        const Row rows[] = {{1, "wait", "1 at 60 Hz, handoff only (host wait, renders nothing)"},
                            {1, "view", "1 at 60 Hz, as cuview-gui (host wait, rows by copy engine, CPU colours)"},
                            {4, "view", "4 at 60 Hz, as cuview-gui"},
                            {1, "kernel", "1 at 60 Hz, previous path (stream wait + render kernel)"},
                            {4, "kernel", "4 at 60 Hz, previous path"}};
        double before = step_rate(ctl, w);
        cost.rows.push_back({grid, "60 frames/s", "none", fmt(before, "%.0f"), "1.000", "—", "—"});
        for (const auto& row : rows) {
          if (!cuda && std::string(row.render) == "kernel") continue;  // the host backend has no kernels
          std::vector<test::ChildProcess> viewers;
          for (int i = 0; i < row.viewers; ++i) viewers.push_back(spawn_viewer(name, 60, viewer_secs, row.render));
          const auto k = static_cast<std::uint32_t>(row.viewers);
          (void)test::wait_stats(name, [k](const test::StatsView& st) { return st.readers == k; });
          const double rate = step_rate(ctl, w);
          std::vector<double> fps, p50, p99;
          for (auto& v : viewers) {
            const auto r = finish_helper(v, "viewer", limit);
            fps.push_back(r.at("frames") / r.at("seconds"));
            p50.push_back(r.at("latency_p50_ms"));
            p99.push_back(r.at("latency_p99_ms"));
          }
          const double after = step_rate(ctl, w);
          const double none = 0.5 * (before + after);
          if (row.viewers == 1 && std::string(row.render) == "wait") zero_copy_slowdown[n] = 1 - rate / none;
          cost.rows.push_back({grid, "60 frames/s", row.label, fmt(rate, "%.0f"), fmt(rate / none, "%.3f"),
                               fmt(rate_dist(fps).median, "%.1f"),
                               fmt(latency_dist(p50).median, "%.2f") + " / " + fmt(latency_dist(p99).median, "%.2f")});
          before = after;
        }
      }
      if (o.wants("handoff") || o.wants("copy")) {
        auto c = Client::attach({.name = name, .client = "cuview-bench handoff"});
        for (bool idle : {true, false}) {
          const auto h = measure_handoff(c, idle, o.samples, cuda);
          clock_error_ns = std::max(clock_error_ns, h.clocks.error_ns);
          if (!idle) zero_copy_latency[n] = latency_dist(h.record_to_wait);
          handoff.rows.push_back({grid, idle ? "idle (paused, 1 step per frame)" : "saturated (simulation running)",
                                  ms(latency_dist(h.record_to_wait)), ms(latency_dist(h.done_to_wait)),
                                  ms(latency_dist(h.stamp_to_pixels))});
        }
      }
      if (o.wants("attach")) {
        std::vector<double> a, v, total;
        for (int i = 0; i < 5; ++i) {
          const auto t0 = Clock::now();
          auto p = spawn_viewer(name, 60, 0);
          const auto r = finish_helper(p, "viewer", limit);
          total.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
          a.push_back(r.at("attach_ms"));
          v.push_back(r.at("verified_ms"));
        }
        attach.rows.push_back({grid, fmt(latency_dist(a).median, "%.1f"), fmt(latency_dist(v).median, "%.1f"),
                               fmt(latency_dist(total).median, "%.1f")});
      }
      ctl.shutdown();
      (void)daemon.wait_for(30s);
    }
    for (const char* mechanism : {"legacy", "vmm", "pool"}) {  // the same figures through each mechanism
      if (!cuda || !o.wants("sharing")) break;
      auto daemon =
          test::start_daemon(name, tb, {"--log-level", "warn", "--no-final-checkpoint", "--sharing", mechanism}, size);
      auto ctl = attach_control(name);
      std::vector<double> a, v;
      for (int i = 0; i < 5; ++i) {
        auto p = spawn_viewer(name, 60, 0);
        const auto r = finish_helper(p, "viewer", limit);
        a.push_back(r.at("attach_ms"));
        v.push_back(r.at("verified_ms"));
      }
      std::vector<std::string> row{grid, mechanism, fmt(latency_dist(a).median, "%.1f"),
                                   fmt(latency_dist(v).median, "%.1f")};
      {
        auto c = Client::attach({.name = name, .client = "cuview-bench sharing"});
        for (bool idle : {true, false})
          row.push_back(ms(latency_dist(measure_handoff(c, idle, o.samples, cuda).record_to_wait)));
      }
      sharing.rows.push_back(std::move(row));
      ctl.shutdown();
      (void)daemon.wait_for(30s);
    }
    if (o.wants("cost")) {  // a daemon that publishes after every batch, for a viewer that reads as fast as it can
      auto daemon = test::start_daemon(name, tb, {"--log-level", "warn", "--no-final-checkpoint", "--fps", "0"}, size);
      auto ctl = attach_control(name);
      const double none = step_rate(ctl, w);
      cost.rows.push_back({grid, "every batch", "none", fmt(none, "%.0f"), "1.000", "—", "—"});
      auto viewer = spawn_viewer(name, 0, viewer_secs);
      (void)test::wait_stats(name, [](const test::StatsView& s) { return s.readers == 1; });
      const double rate = step_rate(ctl, w);
      const auto r = finish_helper(viewer, "viewer", limit);
      const double after = step_rate(ctl, w);
      cost.rows.push_back({grid, "every batch", "1 as fast as it can, as cuview-gui", fmt(rate, "%.0f"),
                           fmt(rate / (0.5 * (none + after)), "%.3f"), fmt(r.at("frames") / r.at("seconds"), "%.1f"),
                           fmt(r.at("latency_p50_ms"), "%.2f") + " / " + fmt(r.at("latency_p99_ms"), "%.2f")});
      ctl.shutdown();
      (void)daemon.wait_for(30s);
    }
    if (cuda && o.wants("copy")) {
      const std::string endpoint = "ipc://" + (rt.path() / ("copy-" + std::to_string(n))).string();
      const double secs = 3 * w;
      // The consumer binds first; the producer measures its rate alone, then while copying out.
      std::size_t bytes = 0;
      std::vector<double> lat;
      std::thread consumer([&] { lat = consume_copied_frames(endpoint, 2 * secs + 30, &bytes); });
      test::ChildProcess producer({self_exe(), "copy-producer", "--size", std::to_string(n), "--seconds",
                                   fmt(secs, "%g"), "--endpoint", endpoint});
      std::map<std::string, double> r;
      try {
        r = finish_helper(producer, "producer", std::chrono::seconds(static_cast<int>(2 * secs) + 120));
      } catch (...) {
        consumer.join();
        throw;
      }
      consumer.join();
      const auto via_host = latency_dist(lat);
      const auto zc = zero_copy_latency[n];
      const double slow_host = 1 - r.at("copying_steps_per_s") / r.at("alone_steps_per_s");
      copy.rows.push_back({grid, fmt(static_cast<double>(bytes) / (1 << 20), "%.0f") + " MiB", ms(zc), ms(via_host),
                           zc.median > 0 ? fmt(via_host.median / zc.median, "%.0f") + "×" : "—",
                           o.wants("cost") ? fmt(100 * zero_copy_slowdown[n], "%.1f") + " %" : "—",
                           fmt(100 * slow_host, "%.1f") + " %",
                           fmt(r.at("frames_sent"), "%.0f") + " sent, " + fmt(lat.size(), "%.0f") + " received"});
    }
  }

  std::ostringstream md;
  const std::string on = cuda ? "" : " — host backend";
  const auto number = [cuda](const char* n) { return std::string(cuda ? n : "6"); };
  if (o.wants("handoff")) {
    md << "\n### " << number("2") << ". Frame handoff" << on << " (median / p99, ms)\n\n";
    md << "One client in this process, " << o.samples
       << " frames per row. *Event record*: the daemon's host clock when it queued the frame's copy and event "
          "record (the frame's timestamp); *frame complete*: "
       << (cuda ? "the GPU's global timer written after the copy (offset to CLOCK_REALTIME calibrated to ±" +
                      fmt(clock_error_ns / 1000, "%.1f") + " µs, again before each row)"
                : "the daemon's clock when its copy finished")
       << "; *wait returns*: this process's "
       << (cuda ? "cudaEventSynchronize on the imported event" : "futex wake (host frames need no wait)")
       << "; *viewer pixels*: rendered as cuview-gui renders (1280×720, "
       << (cuda ? "GPU colormap + resample + copy of the pixels" : "CPU loop") << ").\n\n"
       << handoff.markdown();
  }
  if (o.wants("cost")) {
    md << "\n### " << number("3") << ". Cost to the simulation" << on << "\n\n";
    md << "Steps per second of the daemon (median of " << kWindows << " windows of " << fmt(w, "%g")
       << " s) with viewer processes attached, against the mean of the no-viewer rates measured just before and "
          "just after each row. Viewers render a 1280×720 view. Target: under 2 % slowdown with one viewer at "
          "60 Hz.\n\n"
       << cost.markdown();
  }
  if (cuda && o.wants("copy") && !copy.rows.empty()) {
    md << "\n### 4. Zero-copy against copying through the host\n\n"
       << "Via host: a producer process runs the same simulation and, 60 times a second, copies the frame device → "
          "pinned host on a second stream, sends it as a ZeroMQ message (ipc://, no extra copy on the sending side), "
          "and this process copies it host → device. Latency: frame timestamp → data usable on the consumer's GPU "
          "(zero-copy: the saturated row of table 2, event record → wait returns). Slowdown: steps/s while frames "
          "flow against steps/s without a consumer.\n\n"
       << copy.markdown();
  }
  if (o.wants("attach")) {
    md << "\n### " << number("5") << ". Attach" << on << "\n\n"
       << "A fresh viewer process (median of 5): from its main() to attached (hello, describe, handles, "
       << (cuda ? "CUDA context, IPC opens" : "shared-memory maps")
       << "), to its first frame verified (trailer and checksum over the whole frame, on the CPU), and the "
          "whole process lifetime seen from outside.\n\n"
       << attach.markdown();
  }
  if (cuda && o.wants("sharing")) {
    md << "\n### " << number("6") << ". Sharing mechanisms" << on << "\n\n"
       << "The same daemon started with each --sharing: a fresh viewer process to attached and to its first "
          "verified frame (median of 5; VMM and pool include fetching the descriptor over the socket and mapping "
          "it), and the handoff (daemon records the frame's event → a viewer's host wait on it returns).\n\n"
       << sharing.markdown();
  }
  return md.str();
}

}  // namespace cuview::bench
