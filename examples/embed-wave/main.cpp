// embed-wave: a program with its own main loop that publishes its state to cuview viewers.
//   embed-wave [--name NAME] [--backend auto|cuda|host] [--sharing auto|legacy|vmm|pool] [--size WxH] [--fps N]
// Watch it with `cuview-gui --name NAME`; steer it with `cuview-ctl --name NAME set c=0.3`;
// stop it with Ctrl-C or `cuview-ctl --name NAME shutdown`.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuview/publisher.hpp>
#include <random>
#include <string>

#include "wave.hpp"

namespace {
volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

struct Options {
  std::string name = "wave", backend = "auto", sharing = "auto";
  int width = 512, height = 512;
  double fps = 60;
};

int usage(const char* why) {
  std::fprintf(stderr,
               "embed-wave: %s\nusage: embed-wave [--name NAME] [--backend auto|cuda|host] "
               "[--sharing auto|legacy|vmm|pool] [--size WxH] [--fps N]\n",
               why);
  return 2;
}
}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help") return usage("publishes a 2D wave to cuview viewers");
    if (i + 1 >= argc) return usage(("option " + arg + " needs a value").c_str());
    const char* value = argv[++i];
    if (arg == "--name")
      o.name = value;
    else if (arg == "--backend")
      o.backend = value;
    else if (arg == "--sharing")
      o.sharing = value;
    else if (arg == "--fps")
      o.fps = std::atof(value);
    else if (arg == "--size") {
      if (std::sscanf(value, "%dx%d", &o.width, &o.height) != 2 || o.width < 8 || o.height < 8)
        return usage("--size must be WxH, each at least 8");
    } else
      return usage(("unknown option " + arg).c_str());
  }
#ifndef WAVE_HAVE_CUDA
  if (o.backend == "auto") o.backend = "host";  // built without a CUDA compiler: the buffers are on the host
#endif
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  try {
    // 1. Claim the name and choose where the data lives.
    cuview::Publisher pub(
        {.name = o.name, .backend = o.backend, .sharing = o.sharing, .title = "wave", .max_fps = o.fps});
    std::unique_ptr<wave::Wave> sim;
#ifdef WAVE_HAVE_CUDA
    if (pub.backend() == "cuda") sim = wave::make_cuda(o.width, o.height);
#endif
    if (!sim) sim = wave::make_host(o.width, o.height);
    sim->reset();

    // 2. Declare what viewers see and what they may steer.
    const auto memory = pub.backend() == "cuda" ? cuview::Memory::device : cuview::Memory::host;
    const std::size_t bytes = std::size_t(o.width) * o.height * sizeof(float);
    pub.add_field({.name = "u",
                   .data = sim->u(),
                   .bytes = bytes,
                   .dims = {std::uint32_t(o.height), std::uint32_t(o.width)},
                   .memory = memory,
                   .help = "displacement"});
    pub.add_field({.name = "v",
                   .data = sim->v(),
                   .bytes = bytes,
                   .dims = {std::uint32_t(o.height), std::uint32_t(o.width)},
                   .memory = memory,
                   .help = "velocity"});
    wave::Params p;
    pub.add_param({.name = "c", .value = p.c, .min = 0.05, .max = 0.7, .help = "wave speed (cells per step)"});
    pub.add_param({.name = "damping", .value = p.damping, .min = 0, .max = 0.05, .help = "velocity lost per step"});
    pub.add_param({.name = "rain", .value = p.rain, .min = 0, .max = 20, .help = "drops per 1000 steps"});
    // The first preset is where the program starts.
    pub.add_preset({"drizzle", {{"rain", p.rain}, {"damping", p.damping}}});
    pub.add_preset({"storm", {{"rain", 20.0}, {"damping", 0.01}}});
    pub.add_preset({"still", {{"rain", 0.0}, {"damping", 0.0}}});

    // 3. The program's own loop: steer, step, publish.
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    const int steps_per_batch = 8;
    std::uint64_t step = 0;
    std::printf("embed-wave: publishing '%s' on %s (%s); watch it with: cuview-gui --name %s\n", o.name.c_str(),
                pub.backend().c_str(), pub.device().c_str(), o.name.c_str());
    std::fflush(stdout);
    while (g_stop == 0) {
      const cuview::Requests r = pub.poll();
      if (r.shutdown) break;
      if (!r.params.empty()) {  // applied here, between steps: never under a running kernel
        p.c = static_cast<float>(r.params.at("c"));
        p.damping = static_cast<float>(r.params.at("damping"));
        p.rain = static_cast<float>(r.params.at("rain"));
      }
      if (r.reset) {
        sim->reset();
        step = 0;
      }
      const auto n = static_cast<int>(pub.steps_allowed(steps_per_batch));
      if (n == 0) {  // paused by a viewer: a change still shows at once
        if (r.changes_frame()) pub.publish(step, static_cast<double>(step), sim->stream());
        pub.wait_for_requests(std::chrono::milliseconds(50));
        continue;
      }
      if (unit(rng) < p.rain * n / 1000.0f)
        sim->drop(unit(rng) * o.width, unit(rng) * o.height, 2.0f + unit(rng) * o.width / 32.0f, 0.5f);
      sim->step(n, p);
      step += n;
      // 4. Publish: queued on the wave's stream after its steps; never waits for a viewer.
      pub.publish(step, static_cast<double>(step), sim->stream());
      sim->sync();
    }
    std::printf("embed-wave: stopped at step %llu\n", static_cast<unsigned long long>(step));
    return 0;
  } catch (const cuview::Error& e) {
    std::fprintf(stderr, "embed-wave: %s\n", e.what());
    return e.code() == cuview::Errc::already_running ? 3 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "embed-wave: %s\n", e.what());
    return 1;
  }
}
