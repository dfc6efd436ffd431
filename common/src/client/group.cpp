// Group: a run on this host — one Client per part, and frames of one step from all of them
// (docs/protocol.md "Parts"). Every part has its own ring; a group picks a step all rings offer
// (choose_common_step) and holds it in each, so a viewer never shows blocks of two different steps
// side by side, and no part's publisher ever waits for it.
#include "client/attach_parts.hpp"
#include "client/imports.hpp"
#include "client/run_state.hpp"
#include "client/session.hpp"
#include "cuview/run.hpp"
#include "cuview/volume_composite.hpp"
#include "cuview/runtime_dir.hpp"

namespace cuview {
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {
/// Snapshot-and-hold attempts per wake-up: a part's writer can overwrite the chosen step between
/// the snapshot and the hold.
constexpr int kAcquireAttempts = 8;
}  // namespace

namespace detail {
struct LocalRun final : RunState {
  /// Per part: frames at or below this seq are never offered again (taken by an earlier group,
  /// or from before this group attached).
  std::vector<std::uint64_t> last_seq;
  Client& part(std::size_t k) const { return static_cast<Client&>(*parts[k]); }

  std::string farewell(std::size_t k) const override {
    return part(k).session_->channel->farewell(part(k).hello().session);
  }

  /// The frames of one step that every part offers, held in every part; empty when no such step
  /// is newer than the last group's, or the writers overtook every attempt. `laggard` gets the
  /// part to wait for.
  std::optional<FrameGroup> try_take(const std::vector<const RingReader*>& rings, std::size_t& laggard) {
    const std::size_t n = parts.size();
    for (int attempt = 0; attempt < kAcquireAttempts; ++attempt) {
      std::vector<std::vector<std::uint64_t>> offered(n);
      for (std::size_t k = 0; k < n; ++k)
        for (const auto& f : rings[k]->offered())
          if (f.seq > last_seq[k] && holds_all(f.fields, part(k).reads())) offered[k].push_back(f.step);
      const auto choice = choose_common_step(offered);
      laggard = choice.laggard;
      if (!choice.step) return std::nullopt;
      const std::uint64_t step = *choice.step;
      std::vector<Frame> frames;
      frames.reserve(n);
      for (std::size_t k = 0; k < n; ++k) {
        auto info = rings[k]->acquire_step(step, last_seq[k]);
        if (info && !holds_all(info->fields, part(k).reads())) {  // another frame of that step, from before we asked
          rings[k]->release(info->slot);
          info.reset();
        }
        if (!info) break;  // overwritten since the snapshot: the frames taken so far are released
        frames.push_back(take_frame(*part(k).session_, *info));
      }
      if (frames.size() < n) continue;
      for (std::size_t k = 0; k < n; ++k) last_seq[k] = frames[k].info().seq;
      return detail::FrameAccess::group(layout, std::move(frames), step);
    }
    return std::nullopt;
  }
};
}  // namespace detail

Group::Group(std::unique_ptr<detail::RunState> state) : Run(std::move(state)) {}
Group::Group(Group&&) noexcept = default;
Group& Group::operator=(Group&&) noexcept = default;
Group::~Group() = default;

Client& Group::part(std::size_t k) { return static_cast<Client&>(Run::part(k)); }
const Client& Group::part(std::size_t k) const { return static_cast<const Client&>(Run::part(k)); }

Group Group::attach(const AttachOptions& options) {
  if (!options.remote.empty())
    throw Error(Errc::bad_value, "Group::attach('" + options.name + "') attaches on this host, and was given the "
                                     "gateway " + options.remote + ": use RemoteGroup::attach, or cuview::open");
  const auto deadline = Clock::now() + options.timeout;
  auto run = std::make_unique<detail::LocalRun>();
  run->name = options.name;
  auto opts = options;
  opts.part.reset();
  // A name with no part 0: a whole publisher (Client::attach says so when nothing runs under it).
  run->decomposed = running_parts(options.name) > 0;
  if (!run->decomposed) {
    run->parts.push_back(std::make_unique<Client>(Client::attach(opts)));
  } else {
    auto o = opts;
    o.part = 0;
    run->parts.push_back(std::make_unique<Client>(Client::attach(o)));
    const auto& d0 = run->parts[0]->description();
    if (!d0.part || d0.part->index != 0 || d0.part->count == 0)
      throw Error(Errc::bad_message, detail::part_who(options.name, 0) + " (pid " +
                                         std::to_string(run->parts[0]->hello().daemon_pid) +
                                         ") does not describe itself as part 0 of a run; is it from an older cuview?");
    for (auto& c : detail::attach_others<Client>(opts, d0, deadline, {}))
      run->parts.push_back(std::make_unique<Client>(std::move(c)));
  }
  run->lay_out();
  run->last_seq.assign(run->parts.size(), 0);
  if (run->decomposed) {
    if (options.import == Import::frames) {
      // Like a single client, never offered a frame older than the newest each ring has now (nor a
      // withdrawn one: RingWriter::open_lease).
      for (std::size_t k = 0; k < run->parts.size(); ++k) {
        const std::uint64_t latest = run->part(k).frame_ring("Group::attach").block().latest.load();
        const std::uint64_t seq = latest_seq_of(latest);
        run->last_seq[k] = latest_slot_of(latest) == kNoSlot || seq == 0 ? seq : seq - 1;
      }
    }
  }
  return Group(std::move(run));
}

void Group::read_fields(const std::vector<std::string>& names) {
  auto& im = static_cast<detail::LocalRun&>(*state_);
  for (std::size_t k = 0; k < im.parts.size(); ++k) im.part(k).read_fields(names);
}

void Group::read_every(std::uint32_t k) {
  auto& im = static_cast<detail::LocalRun&>(*state_);
  if (!im.decomposed) im.part(0).read_every(k);  // parts publish whole frames
}

proto::RenderResult Group::render(const proto::RenderArgs& view) {
  auto& im = static_cast<detail::LocalRun&>(*state_);
  if (!im.decomposed) return im.part(0).render(view);
  const std::size_t n = size();
  std::vector<proto::RenderResult> got(n);
  const auto ask = [&](std::size_t k, const proto::RenderArgs& v) {
    try {
      return part(k).render(v);
    } catch (const Error& e) {
      throw Error(e.code(), im.who(k) + ": " + e.what());
    }
  };
  for (std::size_t k = 0; k < n; ++k) {
    got[k] = ask(k, view);
    if (got[k].pending) return {};
  }
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
  const VolumeMode mode = view.mode == "emission" ? VolumeMode::emission
                          : view.mode == "isosurface" ? VolumeMode::isosurface
                                                      : VolumeMode::mip;
  composite_pictures(mode, nearest_first, pixels, reinterpret_cast<std::uint32_t*>(r.argb.data()),
                     reinterpret_cast<float*>(r.values.data()));
  return r;
}

std::optional<FrameGroup> Group::next(std::chrono::milliseconds timeout) {
  auto& im = static_cast<detail::LocalRun&>(*state_);
  if (!im.decomposed) {
    auto f = im.part(0).next_frame(timeout);
    if (!f) return std::nullopt;
    const std::uint64_t step = f->info().step;
    std::vector<Frame> one;
    one.push_back(std::move(*f));
    return detail::FrameAccess::group(im.layout, std::move(one), step);
  }
  const auto deadline = Clock::now() + timeout;
  std::vector<const RingReader*> rings(im.parts.size());
  std::vector<std::uint32_t> seen(im.parts.size());
  for (;;) {
    if (auto reason = im.gone_reason()) im.throw_gone(*reason);
    // Notify words before the snapshots, so that a frame published after a snapshot wakes us.
    for (std::size_t k = 0; k < im.parts.size(); ++k) {
      rings[k] = &im.part(k).frame_ring("Group::next");
      seen[k] = rings[k]->notify_value();
    }
    std::size_t laggard = 0;
    if (auto group = im.try_take(rings, laggard)) return group;
    const auto now = Clock::now();
    if (now >= deadline) return std::nullopt;
    // Every part publishes the same steps: the group waits for the one furthest behind. Short
    // slices, so that a part that dies without waking us is noticed quickly.
    rings[laggard]->wait_notify(seen[laggard], std::min<Clock::duration>(deadline - now, 100ms));
  }
}

}  // namespace cuview
