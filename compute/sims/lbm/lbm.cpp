// The lattice-Boltzmann flow on the Simulation interface: declarations, the host loop, and the
// factory that picks the host or CUDA implementation. The physics is lbm.hpp's, shared by both.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "cuview/error.hpp"
#include "sims/lbm/lbm_setup.hpp"
#include "sims/host_array.hpp"
#include "sims/host_isa.hpp"
#include "sims/row_pool.hpp"

namespace cuview::sim::lbm {

LbmOptions options_from(const std::map<std::string, std::string>& options) {
  LbmOptions o;
  for (const auto& [key, value] : options) {
    if (key == "flow" && (value == "channel" || value == "periodic")) {
      o.periodic = value == "periodic";
    } else if (key == "obstacle" && (value == "cylinder" || value == "none")) {
      o.cylinder = value == "cylinder";
    } else if (key == "overlap" && (value == "on" || value == "off")) {
      o.overlap = value == "on";
    } else if (key == "storage" && (value == "fp32" || value == "fp16s")) {
      o.fp16s = value == "fp16s";
    } else {
      throw Error(Errc::bad_value, "lbm: option " + key + "=" + value +
                                       " is not known; lbm has flow=channel|periodic, obstacle=cylinder|none, "
                                       "overlap=on|off and storage=fp32|fp16s");
    }
  }
  return o;
}

std::vector<StateSpec> state(int width, int rows, const LbmOptions& o) {
  const auto w = static_cast<std::uint64_t>(width), h = static_cast<std::uint64_t>(rows);
  return {{"populations", o.fp16s ? DType::float16 : DType::float32, {kQ, h, w},
           o.fp16s ? "D2Q9 populations (f_i − w_i)·2^15 as binary16 (storage=fp16s), direction outermost"
                   : "D2Q9 populations f_i − w_i, direction outermost"},
          {"obstacles", DType::uint8, {h, w}, "1 where the cell is solid (walls, the cylinder, what was drawn)"}};
}

std::vector<FieldSpec> fields() {
  return {{"velocity", DType::float32, 2, "flow velocity (ux, uy), lattice units"},
          {"speed", DType::float32, 1, "|velocity|"},
          {"vorticity", DType::float32, 1, "curl of the velocity, ∂uy/∂x − ∂ux/∂y"},
          {"density", DType::float32, 1, "fluid density (1 at rest)"}};
}

std::vector<ParamSpec> params() {
  return {{"viscosity", 0.02, 0.005, 0.5, false, "kinematic viscosity ν (τ = 3ν + ½); lower is more turbulent"},
          {"inflow", 0.08, 0.0, 0.15, false, "velocity the inlet (left column) holds, flow=channel"},
          {"force", 0.0, 0.0, 0.001, false, "body force along x (drives a periodic channel)"}};
}

std::vector<Preset> presets() {
  return {{"karman", {{"viscosity", 0.02}, {"inflow", 0.08}, {"force", 0.0}}},
          {"laminar", {{"viscosity", 0.1}, {"inflow", 0.05}, {"force", 0.0}}},
          {"fast", {{"viscosity", 0.008}, {"inflow", 0.1}, {"force", 0.0}}}};
}

LbmParams from(const std::map<std::string, double>& values, const LbmOptions& o) {
  LbmParams p;
  double nu = 0.02;
  if (auto it = values.find("viscosity"); it != values.end()) nu = it->second;
  p.omega = static_cast<float>(1.0 / (3.0 * nu + 0.5));
  if (auto it = values.find("inflow"); it != values.end()) p.u_in = static_cast<float>(it->second);
  if (auto it = values.find("force"); it != values.end()) p.force = static_cast<float>(it->second);
  p.periodic = o.periodic ? 1 : 0;
  return p;
}

std::vector<std::uint8_t> obstacle_mask(const Window& g, const LbmOptions& o) {
  std::vector<std::uint8_t> solid(g.cells(), 0);
  const int h = g.global_height;
  const double cxr = g.width / 5.0, cyr = h / 2.0 + 1.0, r = std::max(2.0, h / 10.0);
  for (int ly = 0; ly < g.stored_rows(); ++ly) {
    const int y = g.global_row(ly);
    std::uint8_t* row = solid.data() + static_cast<std::size_t>(ly) * g.width;
    if (y <= 0 || y >= h - 1) {  // the walls, and the rows beyond them
      std::fill(row, row + g.width, std::uint8_t{1});
      continue;
    }
    if (o.cylinder)
      for (int x = 0; x < g.width; ++x)
        if ((x - cxr) * (x - cxr) + (y - cyr) * (y - cyr) <= r * r) row[x] = 1;
  }
  return solid;
}

std::vector<std::uint16_t> cell_flags(const std::vector<std::uint8_t>& solid, const Window& g, const LbmOptions& o) {
  std::vector<std::uint16_t> flags(solid.size(), 0);
  update_flags(solid, flags, g, o, 0, 0, g.width, g.stored_rows());
  return flags;
}

void update_flags(const std::vector<std::uint8_t>& solid, std::vector<std::uint16_t>& flags, const Window& g,
                  const LbmOptions& o, int x0, int y0, int x1, int y1) {
  x0 = std::max(x0, 0), y0 = std::max(y0, 0), x1 = std::min(x1, g.width), y1 = std::min(y1, g.stored_rows());
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x)
      flags[static_cast<std::size_t>(y) * g.width + x] = stored_flags(solid.data(), g, x, y, o.periodic);
}

std::vector<InputSpec> inputs() {
  return {{"obstacles", "mask", "solid cells the flow goes around: draw to add, erase to remove"}};
}

Touched draw(const Stroke& s, std::vector<std::uint8_t>& solid, std::vector<std::uint16_t>& flags, const Window& g,
             const LbmOptions& o) {
  const int r = static_cast<int>(std::ceil(s.radius));
  const int cx0 = static_cast<int>(s.x), cy0 = static_cast<int>(s.y);
  // Global rows, the walls kept, within the stored ones (ghost rows included: a part's ghost rows
  // must follow the strokes its neighbours apply to their own rows).
  const int first = std::max({1, cy0 - r, g.global_row(0)});
  const int last = std::min({g.global_height - 2, cy0 + r, g.global_row(g.stored_rows() - 1)});
  for (int y = first; y <= last; ++y)
    for (int x = std::max(0, cx0 - r); x <= std::min(g.width - 1, cx0 + r); ++x) {
      const double dx = x + 0.5 - s.x, dy = y + 0.5 - s.y;
      if (dx * dx + dy * dy <= s.radius * s.radius)
        solid[static_cast<std::size_t>(y - g.global_row(0)) * g.width + x] = s.value ? 1 : 0;
    }
  // A cell's flags depend on its neighbours: redo one cell more on every side (and the far column,
  // which the periodic wrap reads from). In stored rows, clamped to them.
  const int ly0 = std::max(0, cy0 - r - 1 - g.global_row(0)),
            ly1 = std::max(ly0, std::min(g.stored_rows(), cy0 + r + 2 - g.global_row(0)));
  Touched t{std::max(0, cx0 - r - 1), ly0, std::min(g.width, cx0 + r + 2), ly1};
  if (t.y0 == t.y1) return t;
  update_flags(solid, flags, g, o, t.x0, t.y0, t.x1, t.y1);
  if (t.x0 == 0 || t.x1 == g.width) {  // the wrap sees the other edge
    update_flags(solid, flags, g, o, 0, t.y0, 1, t.y1);
    update_flags(solid, flags, g, o, g.width - 1, t.y0, g.width, t.y1);
    t.x0 = 0, t.x1 = g.width;
  }
  return t;
}

void exchange_mask_ghosts(Halo* halo, const Window& g, std::vector<std::uint8_t>& solid) {
  if (!halo) return;
  const std::size_t w = static_cast<std::size_t>(g.width);
  std::uint8_t* m = solid.data();  // rows are contiguous: send and receive in place
  halo->exchange(m + w, m, m + w * g.rows, m + w * (g.rows + 1), w, false, cuda::StreamRef{});
}

namespace {

/// Stored rows [y0, y1) of one step: the edge columns by lbm_cell, the rest by the vectorised row.
/// Compiled once per instruction set below (inlined into each, so the compiler vectorises the
/// row at that width): the collision is compute-bound at SSE2's 4 lanes (~10⁸ cells/s per core),
/// so AVX2 and AVX-512 make it memory-bound. T: the stored populations (float, or FP16S's bits).
template <class T>
[[gnu::always_inline]] inline void step_rows_body(const T* f, T* fo, const std::uint16_t* flags, int y0, int y1,
                                                  int width, std::size_t plane, const LbmParams& p) {
  for (int y = y0; y < y1; ++y) {
    lbm_cell(f, fo, flags, 0, y, width, plane, p);
    lbm_row_interior(f, fo, flags, y, width, plane, p);
    if (width > 1) lbm_cell(f, fo, flags, width - 1, y, width, plane, p);
  }
}
template <class T>
using StepRows = void (*)(const T*, T*, const std::uint16_t*, int, int, int, std::size_t, const LbmParams&);
template <class T>
void step_rows_generic(const T* f, T* fo, const std::uint16_t* flags, int y0, int y1, int width, std::size_t plane,
                       const LbmParams& p) {
  step_rows_body(f, fo, flags, y0, y1, width, plane, p);
}
#ifdef CUVIEW_HOST_ISAS
template <class T>
__attribute__((target("avx2,f16c"))) void step_rows_avx2(const T* f, T* fo, const std::uint16_t* flags, int y0,
                                                         int y1, int width, std::size_t plane, const LbmParams& p) {
  step_rows_body(f, fo, flags, y0, y1, width, plane, p);
}
template <class T>
__attribute__((target("avx512f,f16c"))) void step_rows_avx512f(const T* f, T* fo, const std::uint16_t* flags, int y0,
                                                               int y1, int width, std::size_t plane,
                                                               const LbmParams& p) {
  step_rows_body(f, fo, flags, y0, y1, width, plane, p);
}
#endif

/// Widest first; F16C (FP16S's conversions) comes with every AVX2 CPU.
template <class T>
constexpr IsaBuild<StepRows<T>> kIsas[] = {
#ifdef CUVIEW_HOST_ISAS
    {"avx512f", step_rows_avx512f<T>,
     [] { return __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("f16c") != 0; }},
    {"avx2", step_rows_avx2<T>, [] { return __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("f16c") != 0; }},
    {"sse2", step_rows_generic<T>, [] { return true; }},
#else
    {"generic", step_rows_generic<T>, [] { return true; }},
#endif
};

/// Where the host puts its two population arrays (one allocation): a cell's populations, read
/// from one array and written to the other, at distinct offsets modulo 4 KiB. Apart, the arrays
/// began at one page offset and a grid of 2048 columns put every plane at one offset too, so a
/// cell's 27 loads and 9 stores shared one L1 set and loads waited on unrelated stores (4K
/// aliasing): 2048² ran 13 % slower per cell than 2000² (8.5 × 10⁷ against 9.8 × 10⁷ cell
/// updates/s on one core); now they run alike.
/// The distance between two planes, in floats: 448 B (7 cache lines) past 4 KiB, so that the
/// nine planes' cells lie 448 B apart modulo 4 KiB.
std::size_t padded_plane(std::size_t cells) { return staggered_stride(cells, 112); }
/// Floats between the arrays beyond the first's nine planes: the second's planes then fall 224 B
/// after the first's, modulo 4 KiB (9 × 112 + 72 ≡ 56 floats).
constexpr std::size_t kSecondArrayShift = 72;

/// On the host: one loop over the owned rows per step, then the ghost rows from the neighbours.
/// Populations of type T (float, or FP16S's binary16 bits).
template <class T>
class LbmHost final : public Simulation {
 public:
  LbmHost(const Window& g, Halo* halo, const LbmOptions& o)
      : g_(g), halo_(halo), o_(o), solid_(obstacle_mask(g_, o_)), flags_(cell_flags(solid_, g_, o_)),
        step_rows_(pick_isa(kIsas<T>, "the flow's host loop")), plane_(padded_plane(g_.cells())),
        populations_((2 * kQ * plane_ + kSecondArrayShift) * sizeof(T) / sizeof(float) + 1),
        rows_(host_threads(halo != nullptr)) {
    f_ = reinterpret_cast<T*>(populations_.data()), f2_ = f_ + kQ * plane_ + kSecondArrayShift;
    if (halo_) halo_rows_.resize(4 * row_values());
  }
  std::vector<FieldSpec> fields() const override { return lbm::fields(); }
  std::vector<ParamSpec> params() const override { return lbm::params(); }
  std::vector<Preset> presets() const override { return lbm::presets(); }
  void reset(std::uint64_t) override {
    initial_state(g_, solid_, o_.periodic ? 0.0f : p_.u_in, f_, plane_);
    exchange_populations();
  }
  void set_params(const std::map<std::string, double>& values) override { p_ = from(values, o_); }
  void step(std::uint32_t n) override {
    for (std::uint32_t s = 0; s < n; ++s) {
      // Row bands on every core (one thread for a rank of an MPI run).
      rows_.run(1, g_.rows + 1, [&](std::int64_t y0, std::int64_t y1) {
        step_rows_(f_, f2_, flags_.data(), static_cast<int>(y0), static_cast<int>(y1), g_.width, plane_, p_);
      }, min_rows());
      std::swap(f_, f2_);
      exchange_populations();
    }
  }
  std::vector<InputSpec> inputs() const override { return lbm::inputs(); }
  void draw(const Stroke& s) override { (void)lbm::draw(s, solid_, flags_, g_, o_); }
  std::vector<StateSpec> state() const override { return lbm::state(g_.width, g_.rows, o_); }
  void save_state(const std::vector<void*>& out) override {
    auto* f = static_cast<T*>(out[0]);
    for (int i = 0; i < kQ; ++i)
      std::memcpy(f + i * g_.owned_cells(), plane(f_, i) + g_.width, g_.owned_cells() * sizeof(T));
    std::memcpy(out[1], solid_.data() + g_.width, g_.owned_cells());
  }
  void load_state(const std::vector<const void*>& in) override {
    const auto* f = static_cast<const T*>(in[0]);
    for (int i = 0; i < kQ; ++i)
      std::memcpy(plane(f_, i) + g_.width, f + i * g_.owned_cells(), g_.owned_cells() * sizeof(T));
    std::memcpy(solid_.data() + g_.width, in[1], g_.owned_cells());
    exchange_mask_ghosts(halo_, g_, solid_);
    flags_ = cell_flags(solid_, g_, o_);
    exchange_populations();
  }
  void write_fields(const std::vector<FieldTarget>& t) override {
    rows_.run(1, g_.rows + 1, [&](std::int64_t y0, std::int64_t y1) {
      for (int y = static_cast<int>(y0); y < static_cast<int>(y1); ++y)
        for (int x = 0; x < g_.width; ++x)
          lbm_observe(f_, flags_.data(), x, y, g_.width, plane_, g_.global_row(y), g_.global_height,
                      p_.force, static_cast<std::size_t>(y - 1) * g_.width + x, static_cast<float*>(t[0].data),
                      static_cast<float*>(t[1].data), static_cast<float*>(t[2].data), static_cast<float*>(t[3].data));
    }, min_rows());
  }

 private:
  /// Fewer rows than this run on one thread: a wake-up costs more than they do.
  [[nodiscard]] std::int64_t min_rows() const { return std::max(1, 8192 / g_.width); }
  [[nodiscard]] std::size_t row_values() const { return static_cast<std::size_t>(kQ) * g_.width; }
  [[nodiscard]] T* plane(T* f, int i) const { return f + i * plane_; }
  /// Sends the first and last owned rows of every population plane to the parts above and below
  /// and receives their edge rows into the ghost rows (packed: the planes are far apart).
  void exchange_populations() {
    if (!halo_) return;
    T *to_up = halo_rows_.data(), *to_down = to_up + row_values(), *from_up = to_down + row_values(),
      *from_down = from_up + row_values();
    const std::size_t w = static_cast<std::size_t>(g_.width), last = w * g_.rows, below = w * (g_.rows + 1);
    for (int i = 0; i < kQ; ++i) {
      std::memcpy(to_up + i * w, plane(f_, i) + w, w * sizeof(T));
      std::memcpy(to_down + i * w, plane(f_, i) + last, w * sizeof(T));
    }
    halo_->exchange(to_up, from_up, to_down, from_down, row_values() * sizeof(T), false, cuda::StreamRef{});
    for (int i = 0; i < kQ; ++i) {
      if (halo_->has_up()) std::memcpy(plane(f_, i), from_up + i * w, w * sizeof(T));
      if (halo_->has_down()) std::memcpy(plane(f_, i) + below, from_down + i * w, w * sizeof(T));
    }
  }
  Window g_;
  Halo* halo_;
  LbmOptions o_;
  LbmParams p_;
  std::vector<std::uint8_t> solid_;
  std::vector<std::uint16_t> flags_;
  StepRows<T> step_rows_;            ///< for this CPU's widest vectors (kIsas)
  std::size_t plane_;                ///< values (T) between two populations' planes (padded_plane)
  HostArray populations_;  ///< both arrays of nine planes, f_ and f2_ (which swap each step)
  T* f_;
  T* f2_;
  std::vector<T> halo_rows_;  ///< to up, to down, from up, from down: one row of every plane each
  RowPool rows_;
};

}  // namespace

std::vector<std::string> host_isas() { return usable_isas(kIsas<float>); }

std::unique_ptr<Simulation> make(Executor& executor, const SimulationConfig& config) {
  const LbmOptions o = options_from(config.options);
  const int w = static_cast<int>(config.width), h = static_cast<int>(config.height);
  Window g{w, 0, h, h};
  Halo* halo = nullptr;
  if (const Slab* slab = config.slab) {
    if (slab->rows != config.height || slab->rows == 0 ||
        std::uint64_t{slab->first_row} + slab->rows > slab->global_height)
      throw Error(Errc::bad_value, "lbm: a part owning rows [" + std::to_string(slab->first_row) + ", " +
                                       std::to_string(std::uint64_t{slab->first_row} + slab->rows) + ") of a " +
                                       std::to_string(slab->global_height) + "-row grid was made with height " +
                                       std::to_string(config.height) +
                                       "; a part's height must be its rows, at least one, all within the grid "
                                       "(sim::slab_rows gives each part's)");
    g = Window{w, static_cast<int>(slab->first_row), static_cast<int>(slab->rows),
               static_cast<int>(slab->global_height)};
    halo = slab->halo;
  }
#ifdef CUVIEW_HAVE_CUDA
  if (executor.kind() == Executor::Kind::cuda) return make_cuda(executor, g, halo, o);
#endif
  (void)executor;
  if (o.fp16s) return std::make_unique<LbmHost<std::uint16_t>>(g, halo, o);
  return std::make_unique<LbmHost<float>>(g, halo, o);
}

}  // namespace cuview::sim::lbm
