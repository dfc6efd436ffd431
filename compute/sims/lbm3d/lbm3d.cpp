// The 3-D lattice-Boltzmann flow on the Simulation interface: declarations, the obstacle mask and
// strokes, the host loop, and the factory that picks the host or CUDA implementation. The physics
// is lbm3d.hpp's, shared by both.
#if defined(__SSE2__)
#include <pmmintrin.h>
#include <xmmintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "cuview/error.hpp"
#include "sims/host_array.hpp"
#include "sims/host_isa.hpp"
#include "sims/lbm3d/lbm3d_setup.hpp"
#include "sims/row_pool.hpp"

namespace cuview::sim::lbm3d {

Options options_from(const std::map<std::string, std::string>& options) {
  Options o;
  for (const auto& [key, value] : options) {
    if (key == "flow" && (value == "channel" || value == "periodic")) {
      o.periodic = value == "periodic";
    } else if (key == "obstacle" && (value == "sphere" || value == "none")) {
      o.sphere = value == "sphere";
    } else if (key == "overlap" && (value == "on" || value == "off")) {
      o.overlap = value == "on";
    } else if (key == "storage" && (value == "fp32" || value == "fp16s")) {
      o.fp16s = value == "fp16s";
    } else {
      throw Error(Errc::bad_value, "lbm3d: option " + key + "=" + value +
                                       " is not known; lbm3d has flow=channel|periodic, obstacle=sphere|none, "
                                       "overlap=on|off and storage=fp32|fp16s");
    }
  }
  return o;
}

std::vector<FieldSpec> fields() {
  return {{"velocity", DType::float32, 3, "flow velocity (ux, uy, uz), lattice units"},
          {"speed", DType::float32, 1, "|velocity|"},
          {"vorticity", DType::float32, 1, "|curl of the velocity|"},
          {"density", DType::float32, 1, "fluid density (1 at rest)"}};
}

std::vector<StateSpec> state(const Window& g, const Options& o) {
  const auto w = static_cast<std::uint64_t>(g.width), h = static_cast<std::uint64_t>(g.height),
             d = static_cast<std::uint64_t>(g.layers);
  return {{"populations", o.fp16s ? DType::float16 : DType::float32, {kQ, d, h, w},
           o.fp16s ? "D3Q19 populations (f_i − w_i)·2^15 as binary16 (storage=fp16s), direction outermost"
                   : "D3Q19 populations f_i − w_i, direction outermost"},
          {"obstacles", DType::uint8, {d, h, w}, "1 where the cell is solid (walls, the sphere, what was drawn)"}};
}

std::vector<ParamSpec> params() {
  return {{"viscosity", 0.02, 0.005, 0.5, false, "kinematic viscosity ν (τ = 3ν + ½); lower is more turbulent"},
          {"inflow", 0.05, 0.0, 0.12, false, "velocity the inlet (the x = 0 face) holds, flow=channel"},
          {"force", 0.0, 0.0, 0.001, false, "body force along x (drives a periodic duct)"}};
}

std::vector<Preset> presets() {
  return {{"wake", {{"viscosity", 0.02}, {"inflow", 0.05}, {"force", 0.0}}},
          {"laminar", {{"viscosity", 0.1}, {"inflow", 0.04}, {"force", 0.0}}},
          {"fast", {{"viscosity", 0.01}, {"inflow", 0.08}, {"force", 0.0}}}};
}

Params from(const std::map<std::string, double>& values, const Options& o) {
  Params p;
  double nu = 0.02;
  if (auto it = values.find("viscosity"); it != values.end()) nu = it->second;
  p.omega = static_cast<float>(1.0 / (3.0 * nu + 0.5));
  if (auto it = values.find("inflow"); it != values.end()) p.u_in = static_cast<float>(it->second);
  if (auto it = values.find("force"); it != values.end()) p.force = static_cast<float>(it->second);
  p.periodic = o.periodic ? 1 : 0;
  return p;
}

std::vector<InputSpec> inputs() {
  return {{"obstacles", "mask", "solid cells the flow goes around: draw a ball to add, erase to remove"}};
}

namespace {
/// The duct's walls: the grid's y and z faces, and the ghost layers beyond its z faces.
bool wall(const Window& g, int y, int z) { return y <= 0 || y >= g.height - 1 || z <= 0 || z >= g.global_depth - 1; }
}  // namespace

std::vector<std::uint8_t> obstacle_mask(const Window& g, const Options& o) {
  std::vector<std::uint8_t> solid(g.cells(), 0);
  const double cx0 = g.width / 5.0, cy0 = g.height / 2.0 + 1.0, cz0 = g.global_depth / 2.0;
  const double r = std::max(2.0, std::min(g.height, g.global_depth) / 10.0);
  for (int lz = 0; lz < g.stored_layers(); ++lz)
    for (int y = 0; y < g.height; ++y) {
      std::uint8_t* row = solid.data() + g.at(0, y, lz);
      const int z = g.global_layer(lz);
      if (wall(g, y, z)) {
        std::fill(row, row + g.width, std::uint8_t{1});
        continue;
      }
      if (o.sphere)
        for (int x = 0; x < g.width; ++x)
          if ((x - cx0) * (x - cx0) + (y - cy0) * (y - cy0) + (z - cz0) * (z - cz0) <= r * r) row[x] = 1;
    }
  return solid;
}

void compute_flags(const std::uint8_t* solid, std::uint8_t* flags, const Window& g, const Options& o, int lz0,
                   int lz1) {
  lz0 = std::max(lz0, 0), lz1 = std::min(lz1, g.stored_layers());
  for (int lz = lz0; lz < lz1; ++lz)
    for (int y = 0; y < g.height; ++y)
      for (int x = 0; x < g.width; ++x) flags[g.at(x, y, lz)] = flags_of(solid, g, x, y, lz, o.periodic ? 1 : 0);
}

Layers draw(const Stroke& s, std::vector<std::uint8_t>& solid, const Window& g, std::vector<std::size_t>& changed) {
  changed.clear();
  const int r = static_cast<int>(std::ceil(s.radius));
  const double sz = s.z.value_or(0.0);
  const int x0 = static_cast<int>(s.x), y0 = static_cast<int>(s.y), z0 = static_cast<int>(sz);
  // Global layers within the stored ones (ghost layers included: they must follow the strokes the
  // neighbours apply to their own layers).
  const int first = std::max(z0 - r, g.global_layer(0)), last = std::min(z0 + r, g.global_layer(g.stored_layers() - 1));
  for (int z = first; z <= last; ++z)
    for (int y = std::max(0, y0 - r); y <= std::min(g.height - 1, y0 + r); ++y) {
      if (wall(g, y, z)) continue;
      for (int x = std::max(0, x0 - r); x <= std::min(g.width - 1, x0 + r); ++x) {
        const double dx = x + 0.5 - s.x, dy = y + 0.5 - s.y, dz = z + 0.5 - sz;
        if (dx * dx + dy * dy + dz * dz > s.radius * s.radius) continue;
        const std::size_t c = g.at(x, y, z - g.global_layer(0));
        const std::uint8_t now = s.value ? 1 : 0;
        if (solid[c] != now) changed.push_back(c);
        solid[c] = now;
      }
    }
  // A cell's flags depend on its neighbours: one layer more on each side, within the stored ones.
  const int lz0 = std::max(0, z0 - r - 1 - g.global_layer(0));
  const int lz1 = std::max(lz0, std::min(g.stored_layers(), z0 + r + 2 - g.global_layer(0)));
  return {lz0, lz1};
}

void exchange_mask_ghosts(Halo* halo, const Window& g, std::vector<std::uint8_t>& solid) {
  if (!halo) return;
  const std::size_t l = g.layer_cells();
  std::uint8_t* m = solid.data();  // layers are contiguous: send and receive in place
  halo->exchange(m + l, m, m + l * g.layers, m + l * (g.layers + 1), l, false, cuda::StreamRef{});
}

namespace {

/// Row y of stored layer lz, one step: the walls (solid, no loads) and the x faces by cell_update,
/// the interior vectorised. Compiled once per instruction set below (inlined into each, so that
/// the compiler vectorises the row at that width).
template <class T>
[[gnu::always_inline]] inline void step_row_body(const T* f, T* fo, const std::uint8_t* flags, int y, int lz,
                                                 const Window& g, std::size_t plane, const Params& p) {
  if (y == 0 || y == g.height - 1) {
    for (int x = 0; x < g.width; ++x) cell_update(f, fo, flags, x, y, lz, g, plane, p);
    return;
  }
  cell_update(f, fo, flags, 0, y, lz, g, plane, p);
  row_interior(f, fo, flags, y, lz, g, plane, p);
  cell_update(f, fo, flags, g.width - 1, y, lz, g, plane, p);
}
template <class T>
using StepRow = void (*)(const T*, T*, const std::uint8_t*, int, int, const Window&, std::size_t, const Params&);
template <class T>
void step_row_generic(const T* f, T* fo, const std::uint8_t* flags, int y, int lz, const Window& g, std::size_t plane,
                      const Params& p) {
  step_row_body(f, fo, flags, y, lz, g, plane, p);
}
#ifdef CUVIEW_HOST_ISAS
template <class T>
__attribute__((target("avx2,fma,f16c"))) void step_row_avx2(const T* f, T* fo, const std::uint8_t* flags, int y, int lz,
                                                   const Window& g, std::size_t plane, const Params& p) {
  step_row_body(f, fo, flags, y, lz, g, plane, p);
}
template <class T>
__attribute__((target("avx512f,f16c"))) void step_row_avx512f(const T* f, T* fo, const std::uint8_t* flags, int y,
                                                         int lz, const Window& g, std::size_t plane,
                                                         const Params& p) {
  step_row_body(f, fo, flags, y, lz, g, plane, p);
}
#endif
/// Widest first, as lbm's (the same names: sim::lbm::host_isas()); AVX-512F implies FMA, the AVX2
/// build asks for it (collide's `fused`: one instruction, not a call of libm's fmaf).
template <class T>
constexpr IsaBuild<StepRow<T>> kIsas[] = {
#ifdef CUVIEW_HOST_ISAS
    {"avx512f", step_row_avx512f<T>,
     [] { return __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("f16c") != 0; }},
    {"avx2", step_row_avx2<T>,
     [] {
       return __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0 &&
              __builtin_cpu_supports("f16c") != 0;
     }},
    {"sse2", step_row_generic<T>, [] { return true; }},
#else
    {"generic", step_row_generic<T>, [] { return true; }},
#endif
};

/// On the host: one pass over the owned rows per step on every core (one thread for a rank of an
/// MPI run), then the ghost layers from the neighbours. A → B, populations of type T (float, or
/// FP16S's binary16 bits).
template <class T>
class Lbm3dHost final : public Simulation {
 public:
  Lbm3dHost(const Window& g, Halo* halo, const Options& o)
      : g_(g), halo_(halo), o_(o), solid_(obstacle_mask(g_, o_)), flags_(g_.cells()),
        step_row_(pick_isa(kIsas<T>, "the 3-D flow's host loop")),
        plane_(staggered_stride(g_.cells(), 112)),
        populations_((2 * kQ * plane_ + kSecondArrayShift) * sizeof(T) / sizeof(float) + 1),
        rows_(host_threads(halo != nullptr)) {
    f_ = reinterpret_cast<T*>(populations_.data()), f2_ = f_ + kQ * plane_ + kSecondArrayShift;
    if (halo_) halo_layers_.resize(4 * layer_values());
    refresh_flags(0, g_.stored_layers());
  }
  std::vector<FieldSpec> fields() const override { return lbm3d::fields(); }
  std::vector<ParamSpec> params() const override { return lbm3d::params(); }
  std::vector<Preset> presets() const override { return lbm3d::presets(); }
  void set_params(const std::map<std::string, double>& values) override { p_ = from(values, o_); }
  void reset(std::uint64_t) override {
    initial_state(g_, solid_, o_.periodic ? 0.0f : p_.u_in, f_, plane_);
    std::memcpy(f2_, f_, kQ * plane_ * sizeof(T));  // solid cells read back as rest either way
    exchange_populations();
  }
  void step(std::uint32_t n) override {
#if defined(__SSE2__)
    _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);  // as the CUDA build (--ftz=true): the same bits
    _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
#endif
    const Params p = p_;
    for (std::uint32_t s = 0; s < n; ++s) {
      rows_.run(0, static_cast<std::int64_t>(g_.height) * g_.layers, [&](std::int64_t r0, std::int64_t r1) {
        for (std::int64_t r = r0; r < r1; ++r)
          step_row_(f_, f2_, flags_.data(), static_cast<int>(r % g_.height), 1 + static_cast<int>(r / g_.height), g_,
                    plane_, p);
      }, std::max<std::int64_t>(1, 4096 / g_.width));
      std::swap(f_, f2_);
      exchange_populations();
    }
  }
  std::vector<InputSpec> inputs() const override { return lbm3d::inputs(); }
  void draw(const Stroke& s) override {
    std::vector<std::size_t> changed;
    const Layers l = lbm3d::draw(s, solid_, g_, changed);
    for (const std::size_t c : changed)  // at rest: both arrays, as a solid cell's after a step
      for (int i = 0; i < kQ; ++i) f_[i * plane_ + c] = f2_[i * plane_ + c] = T{};
    refresh_flags(l.lz0, l.lz1);
  }
  std::vector<StateSpec> state() const override { return lbm3d::state(g_, o_); }
  void save_state(const std::vector<void*>& out) override {
    auto* f = static_cast<T*>(out[0]);
    const std::size_t owned = g_.owned_cells(), first = g_.layer_cells();
    for (int i = 0; i < kQ; ++i) std::memcpy(f + i * owned, f_ + i * plane_ + first, owned * sizeof(T));
    std::memcpy(out[1], solid_.data() + first, owned);
  }
  void load_state(const std::vector<const void*>& in) override {
    const auto* f = static_cast<const T*>(in[0]);
    const std::size_t owned = g_.owned_cells(), first = g_.layer_cells();
    for (int i = 0; i < kQ; ++i) std::memcpy(f_ + i * plane_ + first, f + i * owned, owned * sizeof(T));
    std::memcpy(solid_.data() + first, in[1], owned);
    exchange_mask_ghosts(halo_, g_, solid_);
    refresh_flags(0, g_.stored_layers());
    exchange_populations();
  }
  bool writes_every() const override { return true; }
  void write_fields(const std::vector<FieldTarget>& t) override {
    // Every k-th cell (FieldTarget::every; a whole grid, never a part): the rows of the packed grid.
    const Packed k(g_, t[0].every);
    const Pulled<T> pops{f_, plane_};
    const int periodic = o_.periodic ? 1 : 0;
    const auto ghost = [&](int x, int y, int lz, float* v) {  // a ghost layer holds the neighbour's populations
      float r;
      cell_moments(pops, flags_.data(), x, y, lz, g_, periodic, p_.force, r, v[0], v[1], v[2]);
    };
    rows_.run(0, static_cast<std::int64_t>(k.height) * k.layers, [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t r = r0; r < r1; ++r) {
        const int y = static_cast<int>(r % k.height) * k.every, lz = 1 + static_cast<int>(r / k.height) * k.every;
        for (int i = 0; i < k.width; ++i)
          publish_cell(observe_cell(pops, flags_.data(), i * k.every, y, lz, g_, periodic, p_.force, ghost),
                       static_cast<std::size_t>(r) * k.width + i, static_cast<float*>(t[0].data),
                       static_cast<float*>(t[1].data), static_cast<float*>(t[2].data), static_cast<float*>(t[3].data));
      }
    }, std::max<std::int64_t>(1, 1024 / k.width));
  }

 private:
  /// Populations between the arrays beyond the first's planes: the second's cells then fall at
  /// other offsets modulo 4 KiB than the first's (lbm's padded_plane says why).
  static constexpr std::size_t kSecondArrayShift = 72;
  [[nodiscard]] std::size_t layer_values() const { return kQ * g_.layer_cells(); }
  void refresh_flags(int lz0, int lz1) {
    lz0 = std::max(lz0, 0), lz1 = std::min(lz1, g_.stored_layers());
    rows_.run(lz0, lz1, [&](std::int64_t a, std::int64_t b) {
      compute_flags(solid_.data(), flags_.data(), g_, o_, static_cast<int>(a), static_cast<int>(b));
    }, 1);
  }
  /// Sends the first and last owned layers of every population to the parts before and after and
  /// receives their edge layers into the ghost layers (packed: the planes are far apart).
  void exchange_populations() {
    if (!halo_) return;
    const std::size_t l = g_.layer_cells(), bytes = l * sizeof(T);
    T *to_up = halo_layers_.data(), *to_down = to_up + layer_values(), *from_up = to_down + layer_values(),
      *from_down = from_up + layer_values();
    for (int i = 0; i < kQ; ++i) {
      std::memcpy(to_up + i * l, f_ + i * plane_ + l, bytes);
      std::memcpy(to_down + i * l, f_ + i * plane_ + l * g_.layers, bytes);
    }
    halo_->exchange(to_up, from_up, to_down, from_down, layer_values() * sizeof(T), false, cuda::StreamRef{});
    for (int i = 0; i < kQ; ++i) {
      if (halo_->has_up()) std::memcpy(f_ + i * plane_, from_up + i * l, bytes);
      if (halo_->has_down()) std::memcpy(f_ + i * plane_ + l * (g_.layers + 1), from_down + i * l, bytes);
    }
  }
  Window g_;
  Halo* halo_;
  Options o_;
  Params p_;
  std::vector<std::uint8_t> solid_, flags_;
  StepRow<T> step_row_;  ///< for this CPU's widest vectors
  std::size_t plane_;
  HostArray populations_;
  T* f_;
  T* f2_;
  std::vector<T> halo_layers_;
  RowPool rows_;
};

}  // namespace

namespace {
/// The memory the kernel would give this process now (MemAvailable), or 0 where it does not say.
std::uint64_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

}  // namespace

void refuse_unless_fits(const Window& g, const Options& o, double per_cell, const char* layout, double need,
                        double available, const std::string& place) {
  if (available <= 0 || need <= available) return;
  const auto side = std::to_string(static_cast<long>(std::cbrt(available / per_cell)));
  // The other storage's bytes a cell, in the same layout: the populations' share halves or doubles.
  const double populations = per_cell - 2.0, fp16s = 2.0 + populations / 2;
  char text[256];
  std::snprintf(text, sizeof text, " needs %.1f GB (%.0f bytes a cell: %s) and %s has %.1f GB free. ", need / 1e9,
                per_cell, layout, place.c_str(), available / 1e9);
  char hint[96] = "A";
  if (!o.fp16s) std::snprintf(hint, sizeof hint, "--sim-option storage=fp16s needs %.0f bytes a cell; a", fp16s);
  throw Error(Errc::out_of_range,
              "lbm3d: a " + std::to_string(g.width) + "x" + std::to_string(g.height) + "x" + std::to_string(g.layers) +
                  (g.layers == g.global_depth ? " grid" : " part") + " with storage=" + (o.fp16s ? "fp16s" : "fp32") +
                  text + hint + " smaller --size fits (about " + side + "x" + side + "x" + side +
                  " here), or run it over more GPUs or ranks (mpirun)");
}

std::unique_ptr<Simulation> make(Executor& executor, const SimulationConfig& config) {
  const Options o = options_from(config.options);
  const int w = static_cast<int>(config.width), h = static_cast<int>(config.height),
            d = static_cast<int>(config.depth);
  Window g{w, h, 0, d, d};
  Halo* halo = nullptr;
  if (const Slab* slab = config.slab) {  // a z-slab: the slab's rows are layers
    if (slab->rows != config.depth || slab->rows == 0 ||
        std::uint64_t{slab->first_row} + slab->rows > slab->global_height)
      throw Error(Errc::bad_value, "lbm3d: a part owning layers [" + std::to_string(slab->first_row) + ", " +
                                       std::to_string(std::uint64_t{slab->first_row} + slab->rows) + ") of a " +
                                       std::to_string(slab->global_height) + "-layer grid was made with depth " +
                                       std::to_string(config.depth) +
                                       "; a part's depth must be its layers, at least one, all within the grid "
                                       "(sim::slab_rows gives each part's)");
    g = Window{w, h, static_cast<int>(slab->first_row), static_cast<int>(slab->rows),
               static_cast<int>(slab->global_height)};
    halo = slab->halo;
  }
#ifdef CUVIEW_HAVE_CUDA
  if (executor.kind() == Executor::Kind::cuda) return make_cuda(executor, g, halo, o);
#endif
  (void)executor;
  const double per_cell = 2.0 * kQ * static_cast<double>(o.population_bytes()) + 2.0;
  refuse_unless_fits(g, o, per_cell, "two arrays of 19 populations, the obstacle mask and flags",
                     per_cell * static_cast<double>(g.cells()), static_cast<double>(available_memory()), "this host");
  if (o.fp16s) return std::make_unique<Lbm3dHost<std::uint16_t>>(g, halo, o);
  return std::make_unique<Lbm3dHost<float>>(g, halo, o);
}

}  // namespace cuview::sim::lbm3d
