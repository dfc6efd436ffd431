// Run: what both kinds of run share (its parts, their blocks, how a part's going is told), and
// cuview::open, the one place that chooses between a run on this host and one through gateways.
#include "cuview/run.hpp"

#include <algorithm>

#include "client/run_state.hpp"
#include "client/session.hpp"
#include "cuview/volume_composite.hpp"

namespace cuview {

namespace detail {

std::string part_who(const std::string& name, std::uint32_t k) {
  return "part " + std::to_string(k) + " of '" + name + "'";
}

void check_part_index(std::size_t k, std::size_t size, const std::string& name) {
  if (k >= size)
    throw Error(Errc::out_of_range, "part " + std::to_string(k) + " of '" + name + "' does not exist: the group has " +
                                        std::to_string(size) + " part(s), 0 to " + std::to_string(size - 1));
}

void RunState::lay_out() {
  auto l = std::make_shared<GroupLayout>();
  l->name = name;
  for (const auto& c : parts) {
    const auto& d = c->description();
    const Axes grid = d.dims;
    if (decomposed)
      l->parts.push_back(*d.part);
    else
      l->parts.push_back(proto::PartDesc{.group = d.session, .host = "", .offset = Axes(grid.size(), 0), .global_dims = grid});
    l->fields.push_back(d.fields);
    l->blocks.push_back(Block{l->parts.back().offset, grid});
  }
  l->extent = Extent{l->parts.front().global_dims};
  layout = std::move(l);
}

std::string RunState::who(std::size_t k) const {
  const auto& p = layout->parts[k];
  const std::string pid = std::to_string(parts[k]->hello().daemon_pid);
  if (!decomposed) return "daemon '" + name + "' (pid " + pid + ")";
  return part_who(name, p.index) + " (" + (p.rank >= 0 ? "rank " + std::to_string(p.rank) + ", " : "") + "pid " +
         pid + (p.host.empty() ? "" : " on " + p.host) + ")";
}

std::optional<std::string> RunState::gone_reason() const {
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (parts[k]->daemon_alive()) continue;
    const std::string reason = farewell(k);
    return who(k) + (parts[k]->session_->said_shut_down() ? " shut down" : " exited") +
           (reason.empty() ? std::string() : ": " + reason);
  }
  return std::nullopt;
}

void RunState::throw_gone(const std::string& reason) const {
  throw Error(Errc::daemon_gone, reason + "; the group of " + std::to_string(parts.size()) + " parts of '" + name +
                                     "' is incomplete. Attach again once all its parts run");
}

}  // namespace detail

Run::Run(std::unique_ptr<detail::RunState> state) : state_(std::move(state)) {}
Run::Run(Run&&) noexcept = default;
Run& Run::operator=(Run&&) noexcept = default;
Run::~Run() = default;

const std::string& Run::name() const noexcept { return state_->name; }
bool Run::decomposed() const noexcept { return state_->decomposed; }
std::size_t Run::size() const noexcept { return state_->parts.size(); }

Attachment& Run::part(std::size_t k) {
  detail::check_part_index(k, state_->parts.size(), state_->name);
  return *state_->parts[k];
}
const Attachment& Run::part(std::size_t k) const {
  detail::check_part_index(k, state_->parts.size(), state_->name);
  return *state_->parts[k];
}

const proto::PartDesc& Run::part_desc(std::size_t k) const {
  detail::check_part_index(k, state_->parts.size(), state_->name);
  return state_->layout->parts[k];
}

Block Run::block(std::size_t k) const {
  detail::check_part_index(k, state_->parts.size(), state_->name);
  return state_->layout->blocks[k];
}

const std::string& Run::group_id() const noexcept { return state_->layout->parts.front().group; }
Extent Run::extent() const { return state_->layout->extent; }
const std::vector<std::string>& Run::via() const noexcept { return state_->via; }

bool Run::alive() const noexcept {
  return std::all_of(state_->parts.begin(), state_->parts.end(), [](const auto& c) { return c->daemon_alive(); });
}

std::optional<std::string> Run::gone_reason() const { return state_->gone_reason(); }

std::vector<proto::Stats> Run::stats() {
  std::vector<proto::Stats> out;
  for (auto& c : state_->parts) out.push_back(c->stats());
  return out;
}

void Run::detach() noexcept {
  for (auto& c : state_->parts) c->detach();
}

std::unique_ptr<Run> open(const OpenOptions& options) {
  AttachOptions o;
  o.name = options.name;
  o.client = options.client;
  o.import = options.import;
  o.timeout = options.timeout;
  if (options.remote.empty()) return std::make_unique<Group>(Group::attach(o));
  return std::make_unique<RemoteGroup>(RemoteGroup::attach(o, options.remote));
}

proto::RenderResult Run::render(const proto::RenderArgs& view) {
  auto& im = *state_;
  if (!im.decomposed) return part(0).render(view);
  const std::size_t n = size();
  std::vector<proto::RenderResult> got(n);
  const auto ask = [&](std::size_t k, const proto::RenderArgs& v) {
    try {
      return part(k).render(v);
    } catch (const Error& e) {
      throw Error(e.code(), im.who(k) + ": " + e.what());
    }
  };
  // Every part is asked, also after one answered pending: each starts casting the view now.
  bool pending = false;
  for (std::size_t k = 0; k < n; ++k) {
    got[k] = ask(k, view);
    pending = pending || got[k].pending;
  }
  if (pending) return {};
  // One step: the oldest of the parts' newest; the parts ahead are asked for it (each keeps its
  // last few pictures).
  std::uint64_t step = got[0].step;
  for (const auto& g : got) step = std::min(step, g.step);
  for (std::size_t k = 0; k < n; ++k) {
    if (got[k].step == step) continue;
    auto v = view;
    v.of_step = step;
    got[k] = ask(k, v);
    if (got[k].pending || got[k].step != step) return {};
  }
  const std::size_t pixels = std::size_t{view.width} * view.height;
  for (std::size_t k = 0; k < n; ++k)
    if (got[k].width != view.width || got[k].height != view.height || got[k].argb.size() != pixels * 4 ||
        got[k].values.size() != pixels * 4)
      throw Error(Errc::bad_message, im.who(k) + " answered 'render' with a picture of " + std::to_string(got[k].width) +
                                         "x" + std::to_string(got[k].height) + " pixels for one of " +
                                         std::to_string(view.width) + "x" + std::to_string(view.height) +
                                         "; the publisher is at fault: please report it");
  // The parts' blocks, nearest the camera first: their centres in world units along the view.
  const auto& d = part(0).description();
  const auto field = std::find_if(d.fields.begin(), d.fields.end(), [&](const auto& f) { return f.name == view.field; });
  std::array<double, 3> cell{1, 1, 1};
  if (field != d.fields.end())
    if (const auto grid = d.grid_of(*field); grid.spacing.size() == 3) cell = {grid.spacing[2], grid.spacing[1], grid.spacing[0]};
  std::vector<std::array<double, 3>> centres;
  for (std::size_t k = 0; k < n; ++k) {
    const Block b = block(k);
    std::array<double, 3> c{};
    for (std::size_t a = 0; a < 3 && a < b.dims.size(); ++a) {
      const std::size_t axis = b.dims.size() - 1 - a;  // x, y, z from the fastest
      c[a] = (static_cast<double>(b.offset[axis]) + (static_cast<double>(b.dims[axis]) - 1) / 2) * cell[a];
    }
    centres.push_back(c);
  }
  std::vector<PartPicture> nearest_first;
  for (const std::size_t k : front_to_back(centres, view_direction(view.azimuth, view.elevation)))
    nearest_first.push_back({reinterpret_cast<const std::uint32_t*>(got[k].argb.data()),
                             reinterpret_cast<const float*>(got[k].values.data())});
  proto::RenderResult r;
  r.pending = false;
  r.seq = got[0].seq, r.step = step, r.sim_time = got[0].sim_time;
  r.width = view.width, r.height = view.height, r.every = 1;
  for (const auto& g : got) {
    r.stamp_ns = std::max(r.stamp_ns, g.stamp_ns);
    r.cast_ms = std::max(r.cast_ms, g.cast_ms);  // the parts cast at once, each on its own GPU
    r.every = std::max(r.every, g.every);
  }
  r.argb.resize(pixels * 4), r.values.resize(pixels * 4);
  // A plane: each pixel's cell lies in one part's block, the others' pictures miss there — the
  // first part with a value (isosurface's rule) is that part.
  const VolumeMode mode = view.mode == proto::kPlaneMode ? VolumeMode::isosurface
                                                         : volume_mode_of(view.mode).value_or(VolumeMode::mip);  // the parts refused another
  composite_pictures(mode, nearest_first, pixels, reinterpret_cast<std::uint32_t*>(r.argb.data()),
                     reinterpret_cast<float*>(r.values.data()));
  return r;
}

}  // namespace cuview
