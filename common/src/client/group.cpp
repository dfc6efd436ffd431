// Group: a run on this host — one Client per part, and frames of one step from all of them
// (docs/protocol.md "Parts"). Every part has its own ring; a group picks a step all rings offer
// (choose_common_step) and holds it in each, so a viewer never shows blocks of two different steps
// side by side, and no part's publisher ever waits for it.
#include "client/attach_parts.hpp"
#include "client/imports.hpp"
#include "client/run_state.hpp"
#include "client/session.hpp"
#include "cuview/run.hpp"
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
    // Part 0's description first (how many parts, which run); then every part's ring at once. A
    // part starts offering frames when this reader's lease opens there: leases opened one import
    // apart (0.5 s at 1024³ a GPU) let part 0 spend its budget on a step the others never offered,
    // and the first group waited a whole budget period for the next step they all agree on.
    auto o = opts;
    o.part = 0;
    if (options.import == Import::frames) o.import = Import::control_only;
    auto first = std::make_unique<Client>(Client::attach(o));
    const auto d0 = first->description();
    if (!d0.part || d0.part->index != 0 || d0.part->count == 0)
      throw Error(Errc::bad_message, detail::part_who(options.name, 0) + " (pid " +
                                         std::to_string(first->hello().daemon_pid) +
                                         ") does not describe itself as part 0 of a run; is it from an older cuview?");
    // A control-only run keeps that connection as its part 0; a reader's attaches part 0 again.
    const std::uint32_t from = options.import == Import::frames ? 0 : 1;
    if (from == 1) run->parts.push_back(std::move(first));
    for (auto& c : detail::attach_others<Client>(opts, d0, deadline, {}, from))
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
