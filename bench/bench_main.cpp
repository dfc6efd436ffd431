// cuview-bench: the performance figures of cuview on this machine, as Markdown tables
// (docs/benchmarks.md holds the GPU host's). Benchmarks print numbers; they never judge them.
//   cuview-bench [--sizes 2048,4096,8192] [--host-sizes 256,512] [--sections
//   kernel,handoff,cost,copy,attach,sharing,checkpoint,publish]
//                [--reps 15] [--window 1] [--samples 40] [--out FILE]
//   cuview-bench --sections remote --link-label 100mbit   (one link; scripts/bench-remote.sh runs all)
// The subcommands `viewer` and `copy-producer` are the helper processes the suite starts.
#include <sys/utsname.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "bench.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include "cuview/cuda/probe.hpp"
#endif

using namespace cuview;
using namespace cuview::bench;

int main(int argc, char** argv) {
  CLI::App app{
      "cuview-bench: kernel efficiency, frame handoff latency, cost of viewers to the simulation, "
      "zero-copy against copying through the host, attach time"};
  Options o;
  std::string out;
  app.add_option("--sizes", o.sizes, "CUDA grid sides")->delimiter(',')->capture_default_str();
  app.add_option("--host-sizes", o.host_sizes, "host-backend grid sides")->delimiter(',')->capture_default_str();
  app.add_option("--sections", o.sections, "which sections to run")
      ->delimiter(',')
      ->check(CLI::IsMember(
          {"kernel", "handoff", "cost", "copy", "attach", "sharing", "checkpoint", "remote", "publish", "slices", "volume", "cast", "budget", "layouts",
           "first", "pictures", "flow3d"}))
      ->capture_default_str();
  std::vector<std::string> backends{"cuda", "host"};
  app.add_option("--backends", backends, "which backends to measure")
      ->delimiter(',')
      ->check(CLI::IsMember({"cuda", "host"}))
      ->capture_default_str();
  app.add_option("--reps", o.reps, "timed repetitions per kernel figure (after a warm-up)")->capture_default_str();
  app.add_option("--window", o.window_s, "seconds per step-rate window (five per figure)")->capture_default_str();
  app.add_option("--samples", o.samples, "frames per handoff figure")->capture_default_str();
  app.add_option("--link-label", o.link_label,
                 "section remote: the link it runs over (unlimited, 1gbit, 100mbit: which target applies); "
                 "scripts/bench-remote.sh sets the limit")
      ->capture_default_str();
  app.add_option("--remote-fields", o.remote_fields,
                 "section remote: grayscott/u, lbm/speed, lbm/vorticity, nbody/density (default: all)")
      ->delimiter(',');
  app.add_option("--remote-viewers", o.remote_viewers, "section remote: viewer counts of the auto rows")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--remote-seconds", o.remote_seconds, "section remote: seconds per row")->capture_default_str();
  app.add_flag("!--no-pinned", o.remote_pinned, "section remote: skip the rows of pinned encodings");
  app.add_option("--remote-target-fps", o.remote_target_fps, "section remote: the gateway's --target-fps (0: default)");
  app.add_option("--remote-backend", o.remote_backend, "section remote: the daemons' backend (cuda: GPU-sized grids)")
      ->check(CLI::IsMember({"host", "cuda"}))
      ->capture_default_str();
  app.add_option("--publish-sims", o.publish_sims, "section publish: the simulations")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--publish-pairs", o.publish_pairs, "section publish: pairs of windows (off, on) per figure")
      ->capture_default_str();
  app.add_flag("--budget-remote", o.budget_remote,
               "section budget: the viewer watches through a cuview-gateway on this host (cuview-ctl --remote)");
  app.add_option("--layout-size", o.layout_size, "section layouts: the CUDA volume's side")->capture_default_str();
  app.add_option("--host-layout-size", o.host_layout_size, "section layouts: the host volume's side")
      ->capture_default_str();
  app.add_option("--picture-size", o.picture_size, "section pictures: the CUDA flow's side")->capture_default_str();
  app.add_option("--picture-budgets", o.picture_budgets,
                 "section pictures: budgets in percent, e.g. 1,5 (codecs and the gateway measured at the last)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--budget", o.budget_percent, "section budget: the daemons' --max-cost, in percent")
      ->capture_default_str();
  app.add_option("--out", out, "also append the tables to this Markdown file");
  std::string label;
  app.add_option("--label", label, "a note for the heading, e.g. \"under MPS\"");

  ViewerArgs viewer;
  auto* vcmd = app.add_subcommand("viewer", "(helper) a viewer process that renders frames like cuview-gui");
  vcmd->add_option("--name", viewer.name)->required();
  vcmd->add_option("--hz", viewer.hz, "frames per second to render (0: as fast as it can)");
  vcmd->add_option("--seconds", viewer.seconds, "how long (0: stop after the first verified frame)");
  vcmd->add_option("--plane", viewer.plane, "a volume's plane to render, across x, y or z (its middle)");
  vcmd->add_option("--render", viewer.render,
                   "view (as cuview-gui), kernel (the previous GPU render path), wait (no render), or volume-mip, "
                   "volume-emission, volume-isosurface (the volume view)");
  vcmd->add_option("--field", viewer.field, "volume-*: the field seen whole");
  vcmd->add_option("--max-brick", viewer.max_brick, "volume-*: the brick's longest axis, cells");
  ProducerArgs producer;
  auto* pcmd = app.add_subcommand("copy-producer", "(helper) the copy-through-the-host alternative's producer");
  pcmd->add_option("--size", producer.size)->required();
  pcmd->add_option("--seconds", producer.seconds);
  pcmd->add_option("--endpoint", producer.endpoint)->required();
  CLI11_PARSE(app, argc, argv);

  if (*vcmd) return run_viewer(viewer);
  if (*pcmd) return run_copy_producer(producer);

  // Helper processes and daemons are this program's siblings unless CUVIEW_BIN_DIR says otherwise.
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) ::setenv("CUVIEW_BIN_DIR", self.parent_path().c_str(), 0);

  const auto now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::string cmdline;
  for (int i = 0; i < argc; ++i) cmdline += (i ? " " : "") + std::string(i == 0 ? "cuview-bench" : argv[i]);
  utsname u{};
  ::uname(&u);

  bool cuda = false;
  std::ostringstream head;
  head << "\n## " << date << (label.empty() ? "" : ", " + label) << " — `" << cmdline << "`\n\n";
#ifdef CUVIEW_HAVE_CUDA
  const auto probe = cuda::probe();
  cuda = probe.usable;
  if (cuda)
    head << "GPU: " << probe.name << ", driver " << probe.driver_version / 1000 << "."
         << (probe.driver_version % 1000) / 10 << " (CUDA runtime " << probe.runtime_version / 1000 << "."
         << (probe.runtime_version % 1000) / 10 << "). ";
  else
    head << "No usable GPU (" << probe.reason << "): host backend only. ";
#else
  head << "Built without CUDA: host backend only. ";
#endif
  head << "Host: " << u.nodename << ", " << u.machine << ", " << std::thread::hardware_concurrency() << " CPUs.\n";
  std::fputs(head.str().c_str(), stdout);
  std::fflush(stdout);
  std::string md = head.str();
  const auto emit = [&](const std::string& part) {
    std::fputs(part.c_str(), stdout);
    std::fflush(stdout);
    md += part;
  };
  int rc = 0;
  const auto guarded = [&](const char* what, auto&& fn) {
    try {
      emit(fn());
    } catch (const std::exception& e) {
      emit(std::string("\n(") + what + " failed: " + e.what() + ")\n");
      rc = 1;
    }
  };
  const auto want_backend = [&](const char* b) {
    return std::find(backends.begin(), backends.end(), b) != backends.end();
  };
  cuda = cuda && want_backend("cuda");
  const bool host = want_backend("host");
  if (cuda && o.wants("kernel")) guarded("kernel section", [&] { return kernel_section(o); });
  if (cuda && o.wants("flow3d")) guarded("3-D flow section", [&] { return flow3d_section(o); });
  if (cuda && (o.wants("handoff") || o.wants("cost") || o.wants("copy") || o.wants("attach") || o.wants("sharing")))
    guarded("CUDA system sections", [&] { return system_sections(o, "cuda"); });
  if (host && o.wants("kernel")) guarded("host kernel section", [&] { return host_kernel_section(o); });
  if (host && (o.wants("handoff") || o.wants("cost") || o.wants("attach")))
    guarded("host-backend system sections", [&] { return system_sections(o, "host"); });
  if (cuda && o.wants("checkpoint"))
    guarded("CUDA checkpoint section", [&] { return checkpoint_section(o, Executor::Kind::cuda); });
  if (host && o.wants("checkpoint"))
    guarded("host checkpoint section", [&] { return checkpoint_section(o, Executor::Kind::host); });
  if (o.wants("remote")) guarded("remote section", [&] { return remote_section(o); });
  if (o.wants("publish")) {
    if (std::getenv("DISPLAY") == nullptr) ::setenv("QT_QPA_PLATFORM", "offscreen", 0);  // the first-frame GUI runs
    if (cuda) guarded("CUDA publish section", [&] { return publish_section(o, "cuda"); });
    if (host) guarded("host publish section", [&] { return publish_section(o, "host"); });
  }
  if (o.wants("volume")) {
    if (cuda) guarded("CUDA volume section", [&] { return volume_section(o, "cuda"); });
    if (host) guarded("host volume section", [&] { return volume_section(o, "host"); });
  }
  if (o.wants("pictures")) {
    if (cuda) guarded("CUDA pictures section", [&] { return pictures_section(o, "cuda"); });
    if (host) guarded("host pictures section", [&] { return pictures_section(o, "host"); });
  }
  if (cuda && o.wants("cast")) guarded("volume cast section", [&] { return cast_section(o); });
  if (o.wants("slices")) {
    if (cuda) guarded("CUDA slices section", [&] { return slices_section(o, "cuda"); });
    if (host) guarded("host slices section", [&] { return slices_section(o, "host"); });
  }
  if (o.wants("budget")) {
    if (cuda) guarded("CUDA budget section", [&] { return budget_section(o, "cuda"); });
    if (host) guarded("host budget section", [&] { return budget_section(o, "host"); });
  }
  if (o.wants("layouts")) {
    if (cuda) guarded("CUDA layouts section", [&] { return layouts_section(o, "cuda"); });
    if (host) guarded("host layouts section", [&] { return layouts_section(o, "host"); });
  }
  if (o.wants("first")) {
    if (std::getenv("DISPLAY") == nullptr) ::setenv("QT_QPA_PLATFORM", "offscreen", 0);
    if (cuda) guarded("CUDA first-pixels section", [&] { return first_section(o, "cuda"); });
    if (host) guarded("host first-pixels section", [&] { return first_section(o, "host"); });
  }
  if (!out.empty()) std::ofstream(out, std::ios::app) << md;
  return rc;
}
