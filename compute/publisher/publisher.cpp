// The publisher's declarations, start and close, on the program's thread. Publishing and steering
// are in publish.cpp; answering clients in control_ops.cpp (the meaning) and transport/ (the
// sockets), on the control thread.
#include <algorithm>
#include "cuview/publisher.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cuview/assembly.hpp"
#include "cuview/posix.hpp"
#include "cuview/protocol.hpp"
#include "publisher/parameter_set.hpp"
#include "publisher/publisher_log.hpp"
#include "share/exports.hpp"
#include "publisher/publisher_state.hpp"

namespace cuview {
namespace fs = std::filesystem;

namespace {
constexpr std::uint32_t kMaxSide = 32768;
}  // namespace

// ---------------------------------------------------------------- declaring

void Publisher::State::claim() {
  ensure_private_dir(paths.name_dir.parent_path());
  ensure_private_dir(paths.name_dir);
  if (paths.part) ensure_private_dir(paths.dir);
  lock = std::make_unique<InstanceLock>(paths, opts.words.rename);
  if (paths.part && *paths.part == 0) {
    // Parts beyond this run's count left by an earlier, larger run (nobody holds their lock)
    // would make clients count too many parts.
    for (std::uint32_t k = opts.part->count; fs::exists(InstancePaths(opts.name, k).dir); ++k) {
      const InstancePaths stale(opts.name, k);
      if (InstanceLock::is_held(stale)) continue;
      std::error_code ec;
      fs::remove_all(stale.dir, ec);
    }
  }
  // We hold the lock, so whatever is here belongs to a publisher that died without cleaning up.
  std::error_code ec;
  fs::remove(paths.control, ec);
  fs::remove(paths.frames, ec);
  fs::remove(paths.fds, ec);
  std::ifstream in(paths.segments);
  const std::string ours = "/cuview-" + std::to_string(::getuid()) + "-";
  int removed = 0;
  for (std::string name; std::getline(in, name);) {
    if (name.rfind(ours, 0) == 0 && ::shm_unlink(name.c_str()) == 0) ++removed;
  }
  if (removed > 0)
    publisher_log().warn("removed {} shared-memory segment(s) left by a '{}' that crashed", removed, opts.name);
}

void Publisher::State::check_declarable(const std::string& what) const {
  if (started)
    throw Error(Errc::bad_value, where(opts.name) + ": cannot declare " + what + " after publishing began; " +
                                     opts.words.declare_before_start);
}

void Publisher::State::check_name(const std::string& name) const {
  if (name.empty() || name.size() > 64)
    throw Error(Errc::bad_value, where(opts.name) + ": a field needs a name of 1 to 64 characters, got '" + name + "'");
  for (const auto& f : declared.fields)
    if (f.name == name) throw Error(Errc::bad_value, where(opts.name) + ": field '" + name + "' is declared twice");
  for (const auto& p : declared.particles)
    if (p.name == name)
      throw Error(Errc::bad_value, where(opts.name) + ": '" + name + "' is already the name of a particle set");
}

void Publisher::State::check_buffer(const FieldDecl& f, const std::string& what) const {
  if (f.components < 1 || f.components > 4)
    throw Error(Errc::out_of_range, what + " has " + std::to_string(f.components) +
                                        " components; a cell holds 1 to 4 values (a scalar, a vector of 2 or 3, or 4 "
                                        "such as RGBA)");
  if (f.data == nullptr) return;  // written by a FieldWriter
  const bool on_host = executor->kind() == Executor::Kind::host;
  if (f.memory == Memory::device && on_host)
    throw Error(Errc::bad_value,
                what + " is declared as device memory, but " + where(opts.name) +
                    " runs on the host backend, which reads host memory only; declare a host buffer (" +
                    opts.words.host_memory + ") or use the cuda backend");
  const BufferLocation at = executor->locate(f.data);
  if (f.memory == Memory::device && !at.device_accessible)
    throw Error(Errc::bad_value, what +
                                     " is declared as device memory but its pointer is host memory; declare it as host "
                                     "memory (" + opts.words.host_memory + ") or pass the device buffer");
  if (f.memory == Memory::device && at.device >= 0 && at.device != executor->device_id())
    throw Error(Errc::bad_value, what + " is on GPU " + std::to_string(at.device) + " but " + where(opts.name) +
                                     " runs on GPU " + std::to_string(executor->device_id()) +
                                     "; " + opts.words.choose_device);
  if (f.memory == Memory::host && !at.host_accessible)
    throw Error(Errc::bad_value, what + " is declared as host memory but its pointer is device memory (GPU " +
                                     std::to_string(at.device) + "); declare it as device memory (" +
                                     opts.words.device_memory + ")");
}

Publisher::Publisher(PublisherOptions options) : state_(std::make_unique<State>(std::move(options))) {
  auto& s = *state_;
  set_publisher_log_level(s.opts.log, where(s.opts.name) + ": " + s.opts.words.create + "'s log");
  if (s.opts.slots < 1 || s.opts.slots > kMaxSlots)
    throw Error(Errc::out_of_range, where(s.opts.name) + ": " + std::to_string(s.opts.slots) +
                                        " slots is out of range: use 1 to " + std::to_string(kMaxSlots));
  if (!(s.opts.max_fps >= 0))
    throw Error(Errc::out_of_range, where(s.opts.name) + ": max_fps must be 0 (every publish) or more");
  if (!(s.opts.max_cost > 0 && s.opts.max_cost <= 1))
    throw Error(Errc::out_of_range, where(s.opts.name) + ": max_cost " + std::to_string(s.opts.max_cost) +
                                        " is not a share of the run; use more than 0 and at most 1 (0.01: 1 %; 1: "
                                        "no budget)");
  if (const auto& p = s.opts.part) {
    if (p->count < 1 || p->index >= p->count)
      throw Error(Errc::out_of_range, where(s.opts.name) + ": part " + std::to_string(p->index) + " of " +
                                          std::to_string(p->count) +
                                          " does not exist; parts are numbered 0 to count-1");
    if (p->group.empty())
      throw Error(Errc::bad_value, where(s.opts.name) +
                                       ": its part's group is empty; give every part of the run the same id "
                                       "(cuview::mpi::part_options makes one)");
  }
  s.claim();
  s.executor = make_executor(s.opts.backend, s.opts.device);
  // CUVIEW_SHARING picks the CUDA mechanism of a program that leaves it to "auto".
  const char* env = std::getenv("CUVIEW_SHARING");
  const bool from_env =
      s.opts.sharing == "auto" && env != nullptr && *env != '\0' && s.executor->kind() == Executor::Kind::cuda;
  if (from_env) s.opts.sharing = env;
  share::check_sharing(s.opts.sharing, {s.executor->device_id(), s.executor->stream()},
                       where(s.opts.name) + (from_env ? " (from CUVIEW_SHARING)" : ""));
}

Publisher::~Publisher() {
  if (state_) state_->close("shutdown");
}
Publisher::Publisher(Publisher&&) noexcept = default;
Publisher& Publisher::operator=(Publisher&& other) noexcept {
  if (this != &other) {
    if (state_) state_->close("shutdown");
    state_ = std::move(other.state_);
  }
  return *this;
}

namespace {
/// "0, 0, 0": a list as messages show it.
template <class T>
std::string list_text(const std::vector<T>& v) {
  std::string out;
  for (const auto& x : v) {
    std::ostringstream one;
    one << x;
    out += (out.empty() ? "" : ", ") + one.str();
  }
  return out;
}

/// The C-order strides (bytes) of `dims` with cells of `cell` bytes.
std::vector<std::int64_t> contiguous_strides(const std::vector<std::uint32_t>& dims, std::size_t cell) {
  std::vector<std::int64_t> strides(dims.size());
  auto stride = static_cast<std::int64_t>(cell);
  for (std::size_t k = dims.size(); k-- > 0;) strides[k] = stride, stride *= dims[k];
  return strides;
}
/// Refuses a grid (a field's or a declared one) of no axes, of more than kMaxAxes, or with a side
/// of 0 or past kMaxSide, naming `what`.
void check_grid(const std::string& what, const Extent& grid) {
  if (grid.rank() < 1 || grid.rank() > kMaxAxes)
    throw Error(Errc::out_of_range, what + " has a grid of " + std::to_string(grid.rank()) + " axes; give dims of 1 to " +
                                        std::to_string(kMaxAxes) +
                                        " axes, slowest first ({width}, {height, width} or {depth, height, width})");
  for (const auto side : grid.dims)
    if (side < 1 || side > kMaxSide)
      throw Error(Errc::out_of_range, what + " is " + grid.text() + " cells; each side must be 1 to " +
                                          std::to_string(kMaxSide));
}
}  // namespace

void Publisher::add_grid(GridDecl g) {
  auto& s = *state_;
  const std::string what = where(s.opts.name) + ": grid '" + g.name + "'";
  s.check_declarable("grid '" + g.name + "'");
  if (g.name.empty()) throw Error(Errc::bad_value, where(s.opts.name) + ": a grid needs a name");
  for (const auto& other : s.declared.grids)
    if (other.name == g.name) throw Error(Errc::bad_value, what + " is declared twice");
  const Extent grid{g.dims};
  check_grid(what, grid);
  const auto n = grid.rank();
  if (g.origin.empty()) g.origin.assign(n, 0.0);
  if (g.spacing.empty()) g.spacing.assign(n, 1.0);
  if (g.axes.empty())
    for (std::size_t k = 0; k < n; ++k) g.axes.push_back(default_axis_name(n, k));
  if (g.origin.size() != n || g.spacing.size() != n || g.axes.size() != n)
    throw Error(Errc::bad_value, what + " has " + std::to_string(n) + " axes but " + std::to_string(g.origin.size()) +
                                     " origin values, " + std::to_string(g.spacing.size()) + " spacings and " +
                                     std::to_string(g.axes.size()) + " axis names; give one of each per axis, " +
                                     "slowest axis first (or none: origin 0, spacing 1)");
  for (std::size_t k = 0; k < n; ++k)
    if (!std::isfinite(g.origin[k]) || !(g.spacing[k] > 0) || !std::isfinite(g.spacing[k]))
      throw Error(Errc::bad_value, what + ": origin {" + list_text(g.origin) + "} and spacing {" +
                                       list_text(g.spacing) + "} must be finite, each spacing above 0");
  if (s.declared.grids.empty()) {  // the first grid: the one fields declared without a grid lie on
    if (!s.declared.fields.empty() && g.dims != s.declared.dims)
      throw Error(Errc::bad_value, what + " is " + grid.text() + " but field '" + s.declared.fields.front().name +
                                       "', declared before it without a grid, is " + Extent{s.declared.dims}.text() +
                                       "; a field without a grid lies on the first grid declared: declare the "
                                       "grids first and name each field's");
    for (auto& f : s.declared.fields) f.grid = g.name;
    s.declared.dims = g.dims;
  }
  s.declared.grids.push_back(std::move(g));
}

const GridDecl* Publisher::grid(const std::string& name) const {
  for (const auto& g : state_->declared.grids)
    if (g.name == name) return &g;
  return nullptr;
}

void Publisher::add_field(FieldDecl f) {
  auto& s = *state_;
  const std::string what = where(s.opts.name) + ": field '" + f.name + "'";
  s.check_declarable("field '" + f.name + "'");
  s.check_name(f.name);
  if (!f.grid.empty()) {
    const auto g = std::find_if(s.declared.grids.begin(), s.declared.grids.end(),
                                [&](const GridDecl& d) { return d.name == f.grid; });
    if (g == s.declared.grids.end()) {
      std::string names;
      for (const auto& d : s.declared.grids) names += (names.empty() ? "'" : ", '") + d.name + "'";
      throw Error(Errc::unknown_field, what + " lies on grid '" + f.grid + "', which is not declared; " +
                                           (names.empty() ? std::string("declare it first (add_grid)")
                                                          : "declare it first (add_grid), or name one of " + names));
    }
    if (!f.dims.empty() && f.dims != g->dims)
      throw Error(Errc::bad_value, what + " is " + Extent{f.dims}.text() + " but its grid '" + f.grid +
                                       "' is " + Extent{g->dims}.text() + "; give the grid alone");
    f.dims = g->dims;
  }
  const bool on_first = f.grid.empty() || f.grid == (s.declared.grids.empty() ? "" : s.declared.grids[0].name);
  if (f.grid.empty() && !s.declared.grids.empty()) {
    f.grid = s.declared.grids[0].name;  // checked below, or its shape when it gives none
    if (f.dims.empty()) f.dims = s.declared.grids[0].dims;
  }
  const Extent grid{f.dims};
  check_grid(what, grid);
  if (on_first && !s.declared.dims.empty() && grid.dims != s.declared.dims)
    throw Error(Errc::bad_value, what + " is " + grid.text() + " but " +
                                     (s.declared.grids.empty() ? "field '" + s.declared.fields.front().name + "'"
                                                               : "grid '" + s.declared.grids[0].name + "'") +
                                     " is " + Extent{s.declared.dims}.text() +
                                     "; a field of another shape lies on a grid of its own: declare one (add_grid) "
                                     "and name it in the field");
  s.check_buffer(f, what);  // first: a wrong component count is named as such, not as a wrong size
  const std::size_t cell = f.components * size_of(f.dtype);
  const std::size_t expected = grid.cells() * cell;
  if (!f.strides.empty() && f.strides == contiguous_strides(grid.dims, cell)) f.strides.clear();
  if (f.strides.empty()) {
    if (f.bytes != expected)
      throw Error(Errc::bad_value, what + " is declared with a buffer of " + std::to_string(f.bytes) + " bytes, but " +
                                       grid.text() + " cells of " + std::to_string(f.components) + " " +
                                       to_string(f.dtype) + " need " + std::to_string(expected) +
                                       "; pass the buffer's real size and shape");
  } else {
    const std::string layout = what + " has strides {" + list_text(f.strides) + "} (bytes, slowest axis first) for " +
                               grid.text() + " cells of " + std::to_string(cell) + " bytes";
    if (f.strides.size() != grid.rank())
      throw Error(Errc::bad_value, layout + ": give one stride per axis of the grid (" +
                                       std::to_string(grid.rank()) + ")");
    if (f.strides.back() != static_cast<std::int64_t>(cell))
      throw Error(Errc::bad_value,
                  layout + ": the fastest axis's stride must be one cell's size (" + std::to_string(cell) +
                      " bytes) — a gather of single values from a strided row costs about " +
                      std::to_string(std::max<std::int64_t>(1, f.strides.back() / static_cast<std::int64_t>(cell))) +
                      " times the memory traffic of a row copy each frame; publish a section whose rows are "
                      "contiguous, or a contiguous copy");
    for (std::size_t k = 0; k + 1 < grid.rank(); ++k)
      if (f.strides[k] < f.strides[k + 1] * static_cast<std::int64_t>(grid.dims[k + 1]))
        throw Error(Errc::bad_value, layout + ": axis " + std::to_string(k) +
                                         "'s stride is less than the extent of the axes inside it, so cells would "
                                         "overlap or lie in another order; the strides must decrease from the "
                                         "slowest axis to the fastest, each at least the next one's span");
    std::uint64_t span = cell;
    for (std::size_t k = 0; k < grid.rank(); ++k) span += std::uint64_t{grid.dims[k] - 1} * f.strides[k];
    if (f.bytes != 0 && f.bytes < span)
      throw Error(Errc::bad_value, layout + ": its cells span " + std::to_string(span) +
                                       " bytes from the first, more than the buffer's " + std::to_string(f.bytes));
  }
  if (s.declared.dims.empty()) s.declared.dims = grid.dims;
  s.declared.fields.push_back(std::move(f));
}

void Publisher::add_particles(ParticlesDecl p) {
  auto& s = *state_;
  const std::string what = where(s.opts.name) + ": particle set '" + p.name + "'";
  s.check_declarable("particle set '" + p.name + "'");
  s.check_name(p.name);
  if (p.count < 1 || p.count > (1ull << 31) || p.attributes.empty())
    throw Error(Errc::out_of_range, what + " has " + std::to_string(p.count) + " particles and " +
                                        std::to_string(p.attributes.size()) +
                                        " attributes; a set needs 1 to 2^31 particles and at least one attribute");
  if (!p.bounds.empty() && (p.bounds.size() != 4 || !(p.bounds[1] > p.bounds[0]) || !(p.bounds[3] > p.bounds[2])))
    throw Error(Errc::bad_value, what + ": bounds must be {x0, x1, y0, y1} with x1 > x0 and y1 > y0, or empty");
  std::set<std::string> names;
  for (const auto& a : p.attributes) {
    const std::string attr = what + ", attribute '" + a.name + "'";
    if (a.name.empty() || !names.insert(a.name).second)
      throw Error(Errc::bad_value, attr + " is declared twice (or with no name)");
    s.check_buffer(a, attr);
    if (!a.strides.empty())
      throw Error(Errc::bad_value, attr + " has strides; a particle attribute is a contiguous array");
    const std::size_t expected = p.count * a.components * size_of(a.dtype);
    if (a.bytes != expected)
      throw Error(Errc::bad_value, attr + " is declared with a buffer of " + std::to_string(a.bytes) + " bytes, but " +
                                       std::to_string(p.count) + " particles of " + std::to_string(a.components) + " " +
                                       to_string(a.dtype) + " need " + std::to_string(expected));
  }
  s.declared.particles.push_back(std::move(p));
}

void Publisher::add_param(ParamSpec p) {
  auto& s = *state_;
  const std::string what = where(s.opts.name) + ": parameter '" + p.name + "'";
  s.check_declarable("parameter '" + p.name + "'");
  for (const auto& q : s.declared.params)
    if (q.name == p.name) throw Error(Errc::bad_value, what + " is declared twice");
  if (p.name.empty()) throw Error(Errc::bad_value, where(s.opts.name) + ": a parameter needs a name");
  if (!(p.min <= p.value && p.value <= p.max))
    throw Error(Errc::bad_value, what + ": its default " + std::to_string(p.value) + " is outside its range [" +
                                     std::to_string(p.min) + ", " + std::to_string(p.max) + "]");
  s.declared.params.push_back(std::move(p));
}

void Publisher::add_preset(Preset p) {
  state_->check_declarable("preset '" + p.name + "'");
  state_->declared.presets.push_back(std::move(p));
}

void Publisher::add_input(InputSpec input) {
  auto& s = *state_;
  s.check_declarable("input '" + input.name + "'");
  if (input.kind != "mask" && input.kind != "points")
    throw Error(Errc::bad_value, where(s.opts.name) + ": input '" + input.name + "' is of kind '" + input.kind +
                                     "'; the kinds are: mask, points");
  for (const auto& i : s.declared.inputs)
    if (i.name == input.name)
      throw Error(Errc::bad_value, where(s.opts.name) + ": input '" + input.name + "' is declared twice");
  s.declared.inputs.push_back(std::move(input));
}

void Publisher::use_preset(const std::string& name) {
  state_->check_declarable("the starting preset");
  const auto& presets = state_->declared.presets;
  if (std::none_of(presets.begin(), presets.end(), [&](const Preset& p) { return p.name == name; })) {
    std::string known;
    for (const auto& p : presets) known += (known.empty() ? "" : ", ") + p.name;
    throw Error(Errc::unknown_field,
                where(state_->opts.name) + " has no preset '" + name + "'" +
                    (known.empty() ? "; " + state_->opts.words.declare_preset : "; it has " + known));
  }
  state_->declared.preset = name;
}

void Publisher::use_params(const std::map<std::string, double>& values) {
  state_->check_declarable("the starting parameters");
  ParameterSet check(state_->declared.params, state_->declared.presets);
  (void)check.apply(std::nullopt, values);  // refuses an unknown name or a value out of range now
  state_->declared.start_params = values;
}

void Publisher::report_checkpoint(const proto::CheckpointStatus& status) {
  std::lock_guard lock(state_->steering.m);
  state_->steering.checkpoint = status;
}

// ---------------------------------------------------------------- starting

void Publisher::State::start() {
  if (started) return;
  if (closed) throw Error(Errc::bad_value, where(opts.name) + " is closed; make a new Publisher");
  if (declared.fields.empty())
    throw Error(Errc::bad_value, where(opts.name) +
                                     ": nothing to publish: no field is declared; " + opts.words.declare_a_field);
  if (const auto& p = opts.part) {
    const cuview::Block block{p->offset, declared.dims};
    const auto& global = p->global_dims;
    if (!block.inside(global))
      throw Error(Errc::out_of_range,
                  where(opts.name) + " (" + paths.who() + "): its block of " + Extent{block.dims}.text() +
                      " cells at " + position_text(block.offset) + " does not fit in the global grid of " +
                      Extent{global}.text() +
                      " (sizes and positions fastest axis first); " + opts.words.check_part);
    // A run of parts decomposes one grid, its first; a grid of another shape has no block here.
    for (const auto& f : declared.fields)
      if (!declared.grids.empty() && f.grid != declared.grids[0].name)
        throw Error(Errc::bad_value,
                    where(opts.name) + " (" + paths.who() + "): field '" + f.name + "' lies on grid '" + f.grid +
                        "', but the parts of a run decompose one grid, their first ('" + declared.grids[0].name +
                        "'); publish a field of another grid from one process through a publisher of its own");
  }
  auto params = std::make_unique<ParameterSet>(declared.params, declared.presets);
  if (declared.preset) params->assign(params->apply(declared.preset, {}));
  if (declared.start_params) params->assign(params->apply(std::nullopt, *declared.start_params));

  // The slot: fields, then each particle attribute, each its own aligned block.
  if (declared.grids.empty()) {  // the grid the fields' dims gave: cell indices as coordinates
    GridDecl implicit{"grid", declared.dims};
    const auto n = implicit.dims.size();
    implicit.origin.assign(n, 0.0), implicit.spacing.assign(n, 1.0);
    for (std::size_t k = 0; k < n; ++k) implicit.axes.push_back(default_axis_name(n, k));
    declared.grids.push_back(std::move(implicit));
  }
  for (auto& f : declared.fields) {
    if (f.grid.empty()) f.grid = declared.grids[0].name;
    Block b{&f, "field '" + f.name + "'", Extent{f.dims}.cells() * f.components * size_of(f.dtype)};
    b.section = Section::of(f.dims, f.strides, f.components * size_of(f.dtype));  // add_field checked them
    blocks.push_back(std::move(b));
  }
  for (const auto& p : declared.particles)
    for (const auto& a : p.attributes)
      blocks.push_back({&a, "attribute '" + a.name + "' of particle set '" + p.name + "'", a.bytes});
  std::vector<std::size_t> bytes;
  for (const auto& b : blocks) bytes.push_back(b.bytes);
  layout = SlotLayout::make(bytes);
  targets.resize(bytes.size());
  fit_slots();
  slots = share::make_slot_memory(layout, opts.slots, opts.sharing, {executor->device_id(), executor->stream()},
                                  where(opts.name));
  ring = std::make_unique<RingWriter>(opts.slots, session);
  {
    std::ofstream out(paths.segments, std::ios::trunc);
    out << ring->shm_name() << '\n';
    for (const auto& seg : slots->segments()) out << seg << '\n';
    if (!out) throw_errno("writing " + paths.segments.string(), errno);
  }
  describe();
  description.presets = params->presets();
  in_effect = params->values();
  steering.params = std::move(params);
  steering.paused = opts.start_paused;

  server = make_local_control_server(paths);
  ops = std::make_unique<ControlOps>(ControlContext{opts, session, *executor, description, declared.inputs, *ring,
                                                    *slots, steering, progress, *server});
  ring->set_state(DaemonState::running);
  started = true;
  server->start(*ops);
  publisher_log().info("{} session {}: {} {} on {} ({}), {} slots of {} bytes shared by {}, control {}",
                       where(opts.name), session, opts.title, Extent{declared.dims}.text(), executor->name(),
                       executor->device(), opts.slots, layout.slot_bytes, slots->mechanism(), server->endpoint());
}

void Publisher::State::fit_slots() {
  const std::size_t free = executor->free_device_memory();
  if (free == 0 || layout.slot_bytes == 0) return;  // the host backend: the system's memory
  // Left free beside the ring: the CUDA runtime's own, a picture's buffers, a kernel's scratch.
  constexpr std::size_t kReserve = std::size_t{1} << 30;
  const std::size_t room = free > kReserve ? free - kReserve : 0;
  const auto fit = static_cast<std::uint32_t>(std::min<std::size_t>(opts.slots, room / layout.slot_bytes));
  const auto gb = [](std::size_t b) {
    char t[32];
    std::snprintf(t, sizeof t, "%.1f GB", static_cast<double>(b) / 1e9);
    return std::string(t);
  };
  if (fit == 0)
    throw Error(Errc::out_of_range,
                where(opts.name) + ": a frame of its fields takes " + gb(layout.slot_bytes) + " and " +
                    executor->device() + " has " + gb(free) + " free beside the simulation (" + gb(kReserve) +
                    " kept for the runtime): not one ring slot fits. Use a smaller --size, or a simulation that "
                    "needs less memory (lbm3d: --sim-option storage=fp16s), or run it over more GPUs (mpirun)");
  if (fit < opts.slots) {
    publisher_log().warn("{}: {} ring slots of {} do not fit in the {} free on {}; the ring has {} (a viewer then "
                         "skips more frames; a smaller --size leaves room for more)",
                         where(opts.name), opts.slots, gb(layout.slot_bytes), gb(free), executor->device(), fit);
    opts.slots = fit;
  }
}

void Publisher::State::describe() {
  description.session = session;
  description.backend = executor->name();
  description.device = executor->device();
  description.sim = opts.title;
  description.dims = declared.dims;
  description.slots = opts.slots;
  description.slot_bytes = layout.slot_bytes;
  description.trailer_offset = layout.trailer_offset;
  auto block = [&](const FieldDecl& f, std::vector<std::uint32_t> shape, std::size_t index, std::string grid) {
    const std::uint64_t value = size_of(f.dtype), cell = value * f.components;
    std::vector<std::uint64_t> strides(shape.size());
    std::uint64_t stride = cell;
    for (std::size_t k = shape.size(); k-- > 0;) strides[k] = stride, stride *= shape[k];
    if (f.components > 1) shape.push_back(f.components), strides.push_back(value);
    return proto::FieldDesc{f.name,
                            to_string(f.dtype),
                            f.components,
                            std::move(shape),
                            std::move(strides),
                            layout.fields[index].offset,
                            layout.fields[index].bytes,
                            f.help,
                            std::move(grid)};
  };
  std::size_t index = 0;
  for (const auto& f : declared.fields) description.fields.push_back(block(f, f.dims, index++, f.grid));
  for (const auto& g : declared.grids)
    description.grids.push_back({g.name, g.dims, g.origin, g.spacing, g.axes, g.units});
  for (const auto& p : declared.particles) {
    proto::ParticleSetDesc pd{p.name, p.count, {}, p.help, p.bounds};
    for (const auto& a : p.attributes)
      pd.attributes.push_back(block(a, {static_cast<std::uint32_t>(p.count)}, index++, {}));  // an attribute lies on no grid
    description.particles.push_back(std::move(pd));
  }
  for (const auto& i : declared.inputs) description.inputs.push_back({i.name, i.kind, i.help});
  if (const auto& p = opts.part) {
    std::string host = p->host;
    if (host.empty()) {
      const char* env = std::getenv("CUVIEW_HOST");  // lets tests play two hosts on one machine
      if (env != nullptr && *env != '\0') {
        host = env;
      } else {
        char buf[256] = {};
        (void)::gethostname(buf, sizeof buf - 1);
        host = buf;
      }
    }
    description.part = proto::PartDesc{.index = p->index,
                                       .count = p->count,
                                       .group = p->group,
                                       .rank = p->rank,
                                       .host = host,
                                       .offset = p->offset,
                                       .global_dims = p->global_dims};
  }
}

void Publisher::start() { state_->start(); }

// ---------------------------------------------------------------- closing

void Publisher::close(const std::string& reason) noexcept { state_->close(reason); }

void Publisher::abandon(const std::string& reason) noexcept {
  auto& s = *state_;
  if (!s.started || s.closed) return;
  s.ring->set_state(DaemonState::shut_down);
  try {
    s.server->notify(proto::kByeTopic, proto::encode(proto::ByeNotice{s.session, reason}));
  } catch (...) {
    // the ring's state already says it
  }
  // The process ends without its destructors: its shared memory goes once the clients unmap it.
  std::ifstream in(s.paths.segments);
  for (std::string name; std::getline(in, name);) ::shm_unlink(name.c_str());
  std::error_code ec;
  fs::remove(s.paths.segments, ec);
}

void Publisher::State::close(const std::string& reason) noexcept {
  if (closed) return;
  closed = true;
  if (!started) return;
  server->stop();  // no request is answered from here on
  // Clients learn it from the control block at once (and from the notice, for monitors).
  ring->set_state(DaemonState::shut_down);
  try {
    server->notify(proto::kByeTopic, proto::encode(proto::ByeNotice{session, reason}));
  } catch (const std::exception& e) {
    publisher_log().warn("{}: could not tell clients it is going: {}", where(opts.name), e.what());
  }
  try {
    executor->finish();
  } catch (const std::exception& e) {
    publisher_log().warn("{}: finishing the GPU work queued at close: {}", where(opts.name), e.what());
  }
  server.reset();  // closes the sockets and removes their files
  std::error_code ec;
  fs::remove(paths.segments, ec);
  publisher_log().info("{} stopped at step {} after {} frames ({})", where(opts.name), progress.step(),
                       ring->published(), reason);
}

}  // namespace cuview
