// embed-mpi: a heat equation on a grid split over MPI ranks, each rank publishing its rows as one
// part of one cuview instance; viewers show the parts as one picture.
//   mpirun -n 2 embed-mpi [--name NAME] [--size WxH] [--fps N]
// Watch it with `cuview-gui --name NAME`; steer it with `cuview-ctl --name NAME set diffusivity=0.1`;
// add a heater with `cuview-ctl --name NAME draw heat X Y --radius 4` (global coordinates);
// stop it with Ctrl-C or `cuview-ctl --name NAME shutdown`.
//
// Host memory only, so that it runs anywhere. A CUDA program does the same with device buffers
// (Memory::device, backend "cuda", one GPU per rank), its kernels and publish() on one stream,
// and its halos exchanged on that stream (NCCL ncclSend/ncclRecv, or a CUDA-aware MPI); the turn
// and the publish agreement stay small MPI collectives on the host, as here.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cuview/mpi_parts.hpp>  // first: it includes <mpi.h>, the C API only
#include <cuview/publisher.hpp>
#include <string>
#include <vector>

namespace {
volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

// This rank's rows [first, first + rows) of a W x H grid, held with one ghost row above and below.
struct Slab {
  int w = 0, h = 0, first = 0, rows = 0, up = MPI_PROC_NULL, down = MPI_PROC_NULL;
  std::vector<float> t, next;        // temperature, (rows + 2) x w; ghost rows outside the grid stay 0
  std::vector<std::uint8_t> heater;  // rows x w: cells held at temperature 1
  float* row(int r) { return t.data() + std::size_t(r + 1) * w; }  // r = -1 and rows: the ghosts

  void reset() {
    std::fill(t.begin(), t.end(), 0.0f);
    std::fill(heater.begin(), heater.end(), 0);
    paint(w / 2.0, h / 2.0, std::min(w, h) / 8.0, 1);  // one heater in the middle of the global grid
  }
  // A stroke in global coordinates: this rank sets the cells of the disc that lie in its rows.
  void paint(double cx, double cy, double radius, int value) {
    for (int r = 0; r < rows; ++r)
      for (int x = 0; x < w; ++x) {
        const double dx = x + 0.5 - cx, dy = first + r + 0.5 - cy;
        if (dx * dx + dy * dy > radius * radius) continue;
        heater[std::size_t(r) * w + x] = std::uint8_t(value);
        if (value != 0) row(r)[x] = 1.0f;  // shown at once, also while paused
      }
  }
  void step(float d, MPI_Comm comm) {
    // Halos: my first row up and my last row down; the neighbours' into my ghost rows.
    MPI_Sendrecv(row(0), w, MPI_FLOAT, up, 0, row(rows), w, MPI_FLOAT, down, 0, comm, MPI_STATUS_IGNORE);
    MPI_Sendrecv(row(rows - 1), w, MPI_FLOAT, down, 1, row(-1), w, MPI_FLOAT, up, 1, comm, MPI_STATUS_IGNORE);
    for (int r = 0; r < rows; ++r) {
      const float *c = row(r), *n = row(r - 1), *s = row(r + 1);
      float* out = next.data() + std::size_t(r + 1) * w;
      for (int x = 0; x < w; ++x) {
        const float west = x > 0 ? c[x - 1] : 0.0f, east = x + 1 < w ? c[x + 1] : 0.0f;
        out[x] = heater[std::size_t(r) * w + x] ? 1.0f : c[x] + d * (n[x] + s[x] + west + east - 4 * c[x]);
      }
    }
    // Back into t, whose interior is the published buffer (its address must not change).
    std::copy(next.begin() + w, next.end() - w, t.begin() + w);
  }
};

int fail(int rank, const std::string& why, int code) {
  if (rank == 0) std::fprintf(stderr, "embed-mpi: %s\n", why.c_str());
  MPI_Finalize();
  return code;
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::string name = "slabs";
  int width = 256, height = 256;
  double fps = 30;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return fail(rank, "usage: mpirun -n N embed-mpi [--name NAME] [--size WxH] [--fps N]", 2);
    const char* value = argv[++i];
    if (arg == "--name")
      name = value;
    else if (arg == "--fps")
      fps = std::atof(value);
    else if (arg == "--size") {
      if (std::sscanf(value, "%dx%d", &width, &height) != 2 || width < 8 || height < 2 * size)
        return fail(rank, "--size must be WxH with W >= 8 and at least 2 rows per rank", 2);
    } else
      return fail(rank, "unknown option " + arg, 2);
  }
  std::signal(SIGINT, on_signal);  // mpirun forwards these to every rank; rank 0's decides
  std::signal(SIGTERM, on_signal);

  Slab slab;
  slab.w = width, slab.h = height;
  slab.first = int(std::int64_t(rank) * height / size);
  slab.rows = int(std::int64_t(rank + 1) * height / size) - slab.first;
  if (rank > 0) slab.up = rank - 1;
  if (rank + 1 < size) slab.down = rank + 1;
  slab.t.assign(std::size_t(slab.rows + 2) * width, 0.0f);
  slab.next = slab.t;
  slab.heater.assign(std::size_t(slab.rows) * width, 0);
  slab.reset();
  std::uint64_t step = 0;
  try {
    // 1. One part per rank: this rank's rows of the global grid, all under one name (collective).
    const auto part = cuview::mpi::part_options(comm, {std::uint32_t(height), std::uint32_t(width)},
                                                {std::uint32_t(slab.first), 0});
    cuview::Publisher pub({.name = name, .backend = "host", .title = "heat (MPI)", .max_fps = fps, .part = part});
    pub.add_field({.name = "T",
                   .data = slab.row(0),
                   .bytes = std::size_t(slab.rows) * width * sizeof(float),
                   .dims = {std::uint32_t(slab.rows), std::uint32_t(width)},
                   .memory = cuview::Memory::host,
                   .help = "temperature"});
    pub.add_param({.name = "diffusivity", .value = 0.2, .min = 0, .max = 0.25, .help = "per step (stable up to 0.25)"});
    pub.add_input({.name = "heat", .help = "heaters: cells held at temperature 1 (erase to remove)"});
    pub.start();
    MPI_Barrier(comm);  // every part is attachable before anyone is told to attach
    if (rank == 0) {
      std::printf("embed-mpi: %d ranks publish '%s' (%dx%d) as %d parts; watch it with: cuview-gui --name %s\n", size,
                  name.c_str(), width, height, size, name.c_str());
      std::fflush(stdout);
    }
    float diffusivity = 0.2f;
    for (;;) {
      // 2. Rank 0 polls its clients and decides; every rank gets the same turn (collective).
      const cuview::mpi::Turn turn = cuview::mpi::next_turn(pub, comm, 8, g_stop != 0);
      if (turn.stop) break;
      const cuview::Requests& r = turn.requests;  // applied by every rank before the same step
      if (!r.params.empty()) diffusivity = float(r.params.at("diffusivity"));
      if (r.reset) {
        slab.reset();
        step = 0;
      }
      for (const cuview::Stroke& s : r.strokes) slab.paint(s.x, s.y, s.radius, s.value);
      for (std::uint64_t i = 0; i < turn.steps; ++i) slab.step(diffusivity, comm);
      step += turn.steps;
      // 3. Every rank publishes the same steps: a frame when any part's viewers want one (collective).
      cuview::mpi::publish(pub, comm, step, double(step));
    }
    if (rank == 0) std::printf("embed-mpi: stopped at step %llu\n", static_cast<unsigned long long>(step));
  } catch (const std::exception& e) {
    // The other ranks wait in a collective this one will not join: end them all.
    std::fprintf(stderr, "embed-mpi: rank %d: %s\n", rank, e.what());
    MPI_Abort(comm, 1);
  }
  MPI_Finalize();
  return 0;
}
