// cuview-bench's parts: statistics, table output, and the measurements of each section.
// Benchmarks print numbers; they never judge them (no timed tests, never a CI failure on speed).
#pragma once

#include <cstdint>
#include <chrono>
#include <map>
#include <optional>
#include <sstream>
#include <filesystem>
#include <string>
#include <vector>

#include "executor/executor.hpp"

namespace cuview::test {
class ChildProcess;
}

namespace cuview::bench {

/// Median and the tail: for latencies the slowest 1 % (99th percentile), for rates the slowest
/// 1 % too (1st percentile of the rates).
struct Dist {
  double median = 0, p99 = 0;
  std::size_t n = 0;
};
Dist latency_dist(std::vector<double> v);  ///< p99 = 99th percentile
Dist rate_dist(std::vector<double> v);     ///< p99 = 1st percentile (the slow tail of a rate)
/// The q-quantile (0..1) of `v`, the nearest rank above; 0 for no values.
double percentile(std::vector<double> v, double q);

std::string fmt(double v, const char* f = "%.3g");
/// "1.23 × 10¹¹" style, for Markdown.
std::string sci(double v);

/// A Markdown table, printed as soon as it is complete.
struct Table {
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> rows;
  [[nodiscard]] std::string markdown() const;
};

struct Options {
  std::vector<int> sizes{2048, 4096, 8192};
  std::vector<int> host_sizes{256, 512};
  int reps = 15;
  double window_s = 0.6;  ///< one step-rate window; five are taken, the median is reported
  int samples = 40;       ///< handoff samples per case
  std::vector<std::string> sections{"kernel", "handoff", "cost", "copy", "attach", "sharing", "checkpoint"};
  [[nodiscard]] bool wants(const std::string& s) const;
  // ---- section "remote" (bench/remote_bench.cpp), not among the defaults ----
  std::string link_label = "unlimited";    ///< the link it runs over: unlimited, 1gbit, 100mbit (sets the target)
  std::vector<std::string> remote_fields;  ///< sim/field ids; empty: all
  std::vector<int> remote_viewers{1, 4};   ///< viewer counts of the auto-encoded rows
  double remote_seconds = 2;               ///< per row
  bool remote_pinned = true;               ///< also u8, u16, f32 pinned with one viewer
  double remote_target_fps = 0;            ///< the gateway's --target-fps (0: its default)
  std::string remote_backend = "host";     ///< the daemons' backend: host (small grids) or cuda (large ones)
  // ---- section "publish" (bench/publish_cost.cpp), not among the defaults ----
  std::vector<std::string> publish_sims{"grayscott", "lbm", "nbody"};
  int publish_pairs = 8;  ///< pairs of windows (publishing off, on) per figure
  // ---- section "budget" (bench/publish_cost.cpp), not among the defaults ----
  double budget_percent = 0.3;  ///< the daemons' --max-cost
  std::uint32_t picture_size = 512;  ///< section pictures: the CUDA flow's side
  /// Section pictures: the budgets (percent); the codecs and the gateway are measured at the last.
  std::vector<double> picture_budgets{1, 5};
  bool budget_remote = false;   ///< section budget: the viewer is remote, through a gateway on this host
  // ---- section "layouts" (bench/layouts.cpp), not among the defaults ----
  int layout_size = 512;       ///< CUDA: the volume's side
  int host_layout_size = 128;  ///< host backend: the volume's side
};

/// "key=value key=value" lines, as the helper processes print their results.
std::map<std::string, double> parse_fields(const std::string& text, const std::string& prefix);

// ---- GPU helpers (bench/gpu.cu; stubs without CUDA) ----
struct Clocks {
  double offset_ns = 0;  ///< GPU global timer minus CLOCK_REALTIME
  double error_ns = 0;   ///< half the shortest round trip that measured it
};
/// Offset between the GPU's %globaltimer and CLOCK_REALTIME, from the tightest of many kernel
/// round trips. Empty without a usable GPU.
std::optional<Clocks> calibrate_gpu_clock();
/// Device-to-device copy bandwidth (bytes read + written), GB/s per repetition.
std::vector<double> copy_bandwidth(int reps);
/// FP32 rate of a kernel of nothing but independent FMAs, TFLOP/s per repetition: the peak a
/// real kernel can approach, measured (the datasheet's figure assumes every issue slot an FMA).
std::vector<double> fma_rate(int reps);

// ---- sections ----
/// Section 1: copy bandwidth and cell updates per second on CUDA (needs a usable device).
std::string kernel_section(const Options& o);
/// Section flow3d: the 3-D flow in each storage at 256³, 512³ and 1024³ (kernels.cpp).
std::string flow3d_section(const Options& o);
/// Section 6's first table: the host backend's cell updates per second.
std::string host_kernel_section(const Options& o);
/// Section 7: a checkpoint's stall, write time and rate, and the steps the loop ran meanwhile.
std::string checkpoint_section(const Options& o, Executor::Kind kind);
/// Views through cuview-gateway over one link (Options::link_label): bytes per view and encoding,
/// views/s and frame → remote latency with 1 and 4 viewers, the simulation's cost. Host backend.
std::string remote_section(const Options& o);
/// Publishing's cost (off, no reader, 1 and 4 viewers), a daemon's start → first step, and a
/// fresh client's first frame, per simulation and size, on one backend ("cuda" or "host").
std::string publish_section(const Options& o, const std::string& backend);
/// Section "slices": one viewer of a plane of the 3-D flow at 60 Hz, per axis: what it costs the
/// run and how late its frames are (bench/publish_cost.cpp).
std::string slices_section(const Options& o, const std::string& backend);
/// Section "volume": one viewer of the 3-D flow seen whole at 60 Hz (a brick by the copy engine, the
/// rays on the viewer's cores), per mode: the cost to the run, frames drawn, frame → pixels, the
/// brick's copy, the rays, a camera change → picture (bench/publish_cost.cpp).
std::string volume_section(const Options& o, const std::string& backend);
/// Pictures cast by the run (`render`) under budgets of 1 % and 5 %.
std::string pictures_section(const Options& o, const std::string& backend);
/// Section "cast": full-resolution volume pictures cast on the GPU, per grid and mode: time per
/// picture (bench/cast.cu; "" without CUDA).
std::string cast_section(const Options& o);
/// Section "budget": each simulation at its largest size under a cost budget, one viewer at 60 Hz:
/// frames delivered, the cost the publisher measured and the cost seen from outside.
std::string budget_section(const Options& o, const std::string& backend);
/// Section "layouts": a field's cost per frame as float32, float64 and float64 with a halo of ghost
/// cells read in place, against the contiguous float32 field of the same cells (bench/layouts.cpp).
std::string layouts_section(const Options& o, const std::string& backend);
/// A TCP port on 127.0.0.1 nobody listens on now (the OS's pick).
int free_port();
/// Bytes that crossed the loopback interface of this process's network namespace.
std::uint64_t loopback_bytes();
/// Keys in a private XDG_CONFIG_HOME (set for this process and its children): the bench's client
/// key is the only authorised one. Returns the gateway's public key.
std::string make_keys(const std::filesystem::path& config_home);
/// A fresh client's start → first frame, per simulation at its largest size, for cuview-ctl,
/// cuview-gui and Python, with cuview-ctl's own phases (issue 38's first-pixels table).
std::string first_section(const Options& o, const std::string& backend);
/// Sections 2, 3, 4 (CUDA only) and 5 for one backend ("cuda" or "host").
std::string system_sections(const Options& o, const std::string& backend);

// ---- helper processes (subcommands of cuview-bench, started by the sections) ----
struct ViewerArgs {
  std::string name;
  double hz = 60;      ///< 0: as fast as it can
  double seconds = 3;  ///< how long to read frames (0: stop after the first, verified, frame)
  int view_w = 1280, view_h = 720;
  std::string render = "view";  ///< view | kernel | wait (bench/system.cpp, RenderMode)
  std::string plane;            ///< a volume's: the axis across the plane rendered (its middle), x | y | z
  std::string field;            ///< volume-*: the field seen (default: the first)
  int max_brick = 128;          ///< volume-*: the brick's longest axis
};
/// Starts `cuview-bench viewer` (this program) as a child process. `render` volume-mip,
/// volume-emission or volume-isosurface views a volume whole, of the field `plane` names.
test::ChildProcess spawn_viewer(const std::string& name, double hz, double seconds, const std::string& render = "view",
                                const std::string& plane = "");
std::map<std::string, double> finish_helper(test::ChildProcess& p, const std::string& prefix,
                                            std::chrono::seconds limit);
/// A viewer as cuview-gui renders: takes the newest frame, renders it (cuview::ViewSampler, or
/// another RenderMode), at `hz`. Prints one line
/// "viewer frames=… seconds=… latency_p50_ms=… latency_p99_ms=… attach_ms=… verified_ms=…".
int run_viewer(const ViewerArgs& a);

struct ProducerArgs {
  int size = 2048;
  double hz = 60;
  double seconds = 3;  ///< per phase: first without copying, then copying frames out
  std::string endpoint;
  std::uint32_t steps_per_frame = 16;
};
/// The alternative to cuview: a simulation that copies each frame device → pinned host and
/// sends it as a ZeroMQ message. Prints "producer alone_steps_per_s=… copying_steps_per_s=…
/// frames_sent=… frames_dropped=…".
int run_copy_producer(const ProducerArgs& a);
/// The consumer side: receives messages for `seconds`, copies each to the device, returns the
/// latencies (frame timestamp → data on this process's GPU) in ms.
std::vector<double> consume_copied_frames(const std::string& endpoint, double seconds, std::size_t* bytes);

}  // namespace cuview::bench
