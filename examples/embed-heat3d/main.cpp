// embed-heat3d: the heat equation in a box, with its own main loop on the host, published to
// cuview viewers as a volume (a field of dims {depth, height, width}, x fastest).
//   embed-heat3d [--name NAME] [--size WxHxD] [--fps N]
// Watch it with `cuview-gui --name NAME` (a plane at a time: Page Up/Down moves it); steer it with
// `cuview-ctl --name NAME set alpha=0.1` or draw a hot ball: `cuview-ctl --name NAME draw heat X Y Z`.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cuview/publisher.hpp>
#include <string>
#include <vector>

namespace {
volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

/// Temperature on a w × h × d box; the faces are held at 0, a hot ball at the centre at 1.
struct Heat {
  int w, h, d;
  std::vector<float> t, next;
  Heat(int w_, int h_, int d_) : w(w_), h(h_), d(d_), t(std::size_t(w_) * h_ * d_), next(t.size()) {}
  std::size_t at(int x, int y, int z) const { return (std::size_t(z) * h + y) * w + x; }
  void ball(double cx, double cy, double cz, double r, float value) {
    for (int z = 0; z < d; ++z)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          if ((x + 0.5 - cx) * (x + 0.5 - cx) + (y + 0.5 - cy) * (y + 0.5 - cy) + (z + 0.5 - cz) * (z + 0.5 - cz) <=
              r * r)
            t[at(x, y, z)] = value;
  }
  void reset() {
    std::fill(t.begin(), t.end(), 0.0f);
    ball(w / 2.0, h / 2.0, d / 2.0, std::min({w, h, d}) / 6.0, 1.0f);
  }
  /// `n` explicit steps of the 7-point Laplacian (stable for alpha ≤ 1/6).
  void step(int n, float alpha) {
    for (int s = 0; s < n; ++s) {
      for (int z = 1; z < d - 1; ++z)
        for (int y = 1; y < h - 1; ++y)
          for (int x = 1; x < w - 1; ++x) {
            const std::size_t c = at(x, y, z), row = std::size_t(w), layer = std::size_t(w) * h;
            const float lap = t[c - 1] + t[c + 1] + t[c - row] + t[c + row] + t[c - layer] + t[c + layer] - 6 * t[c];
            next[c] = t[c] + alpha * lap;
          }
      std::swap(t, next);
    }
  }
};
}  // namespace

int main(int argc, char** argv) {
  std::string name = "heat3d";
  int w = 96, h = 64, d = 48;
  double fps = 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    if (arg == "--name") name = argv[i + 1];
    else if (arg == "--fps") fps = std::atof(argv[i + 1]);
    else if (arg == "--size" && std::sscanf(argv[i + 1], "%dx%dx%d", &w, &h, &d) == 3 && std::min({w, h, d}) >= 8) {
    } else {
      std::fprintf(stderr, "embed-heat3d: bad option %s; usage: embed-heat3d [--name NAME] [--size WxHxD] [--fps N]\n",
                   arg.c_str());
      return 2;
    }
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  try {
    cuview::Publisher pub({.name = name, .backend = "host", .title = "heat3d", .max_fps = fps});
    Heat heat(w, h, d);
    heat.reset();
    // A volume: dims slowest first, {depth, height, width}. Both arrays swap each step, so the
    // field is written at publish time (a FieldWriter) rather than read from a fixed buffer.
    pub.add_field({.name = "temperature",
                   .bytes = heat.t.size() * sizeof(float),
                   .dims = {std::uint32_t(d), std::uint32_t(h), std::uint32_t(w)},
                   .memory = cuview::Memory::host,
                   .help = "temperature (faces held at 0)"});
    pub.add_param({.name = "alpha", .value = 0.15, .min = 0.01, .max = 1.0 / 6, .help = "diffusivity × time step"});
    pub.add_input({"heat", "mask", "a hot ball: draw to heat (1), erase to cool (0)"});
    const auto write = [&](const std::vector<cuview::FieldTarget>& targets) {
      std::copy(heat.t.begin(), heat.t.end(), static_cast<float*>(targets[0].data));
    };
    pub.start();
    float alpha = 0.15f;
    std::uint64_t step = 0;
    std::printf("embed-heat3d: publishing '%s', a %dx%dx%d volume; watch it with: cuview-gui --name %s\n",
                name.c_str(), w, h, d, name.c_str());
    std::fflush(stdout);
    while (g_stop == 0) {
      const cuview::Requests r = pub.poll();
      if (r.shutdown) break;
      if (!r.params.empty()) alpha = static_cast<float>(r.params.at("alpha"));
      if (r.reset) heat.reset(), step = 0;
      for (const auto& s : r.strokes) heat.ball(s.x, s.y, s.z.value_or(d / 2.0), s.radius, s.value ? 1.0f : 0.0f);
      const auto n = static_cast<int>(pub.steps_allowed(4));
      if (n == 0) {  // paused by a viewer: a change still shows at once
        if (r.changes_frame()) pub.publish(step, double(step), write, {});
        pub.wait_for_requests(std::chrono::milliseconds(50));
        continue;
      }
      heat.step(n, alpha);
      step += n;
      pub.publish(step, double(step), write, {});  // copies into a free slot; never waits for a viewer
    }
    std::printf("embed-heat3d: stopped at step %llu\n", static_cast<unsigned long long>(step));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "embed-heat3d: %s\n", e.what());
    return 1;
  }
}
