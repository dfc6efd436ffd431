// RemoteGroup: a run through the cuview-gateways of the hosts it is on (docs/remote.md "Runs of
// parts"): one RemoteClient per part, through the gateway that serves it; views of a region of
// the global grid assembled from every part's view of one step (ViewMatcher, assemble_view), and
// frames fetched from every part.
#include <algorithm>
#include <map>
#include <thread>

#include "client/attach_parts.hpp"
#include "client/imports.hpp"
#include "client/run_state.hpp"
#include "cuview/run.hpp"
#include "cuview/runtime_dir.hpp"

namespace cuview {
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace detail {
struct RemoteRun final : RunState {
  // Views: what is watched, each part's view not yet assembled (the newest), the matcher.
  std::optional<ViewWatch> watching;
  std::vector<std::optional<RemoteView>> views;  ///< each part's view since it was last asked
  ViewMatcher matcher;                           ///< which step's views make a picture, whom to ask
  RemoteView incoming;
  std::optional<std::uint64_t> last_step;  ///< of the last frames next() returned

  RemoteClient& part(std::size_t k) const { return static_cast<RemoteClient&>(*parts[k]); }
};
}  // namespace detail

RemoteGroup::RemoteGroup(std::unique_ptr<detail::RunState> state) : Run(std::move(state)) {}
RemoteGroup::RemoteGroup(RemoteGroup&&) noexcept = default;
RemoteGroup& RemoteGroup::operator=(RemoteGroup&&) noexcept = default;
RemoteGroup::~RemoteGroup() = default;

RemoteClient& RemoteGroup::part(std::size_t k) { return static_cast<RemoteClient&>(Run::part(k)); }
const RemoteClient& RemoteGroup::part(std::size_t k) const { return static_cast<const RemoteClient&>(Run::part(k)); }

RemoteGroup RemoteGroup::attach(const AttachOptions& options, const std::vector<std::string>& gateways) {
  validate_instance_name(options.name);
  if (gateways.empty())
    throw Error(Errc::bad_value, "attaching '" + options.name + "' remotely needs the URL of at least one gateway");
  const auto deadline = Clock::now() + options.timeout;
  std::string urls;
  for (const auto& g : gateways) urls += (urls.empty() ? "" : ", ") + g;
  // Which gateway serves the name whole, and which serves each part.
  std::optional<std::string> whole;
  std::map<std::uint32_t, std::string> part_at;
  std::string others;
  for (const auto& url : gateways) {
    auto host = RemoteHost::connect(url, options.client, options.timeout);
    for (const auto& p : host.publishers()) {
      std::optional<PublisherAddress> a;
      try {
        a = parse_publisher_address(p.name);
      } catch (const Error&) {
        continue;  // a name this client cannot use
      }
      if (a->name != options.name) {
        if (others.find("'" + a->name + "'") == std::string::npos) others += (others.empty() ? "'" : ", '") + a->name + "'";
        continue;
      }
      if (!a->part) {
        whole = url;
      } else if (auto [it, fresh] = part_at.emplace(*a->part, url); !fresh && it->second != url) {
        throw Error(Errc::bad_value, "part " + std::to_string(*a->part) + " of '" + options.name +
                                         "' is served by two gateways, " + it->second + " and " + url +
                                         ": two runs on two hosts use one name; give each run its own --name");
      }
    }
  }
  auto run = std::make_unique<detail::RemoteRun>();
  run->name = options.name;
  run->via = gateways;
  auto opts = options;
  opts.part.reset();
  run->decomposed = !part_at.empty();
  if (!run->decomposed) {
    if (!whole)
      throw Error(Errc::no_daemon, "no publisher named '" + options.name + "' on the gateway(s) " + urls +
                                       (others.empty() ? std::string(" (they serve none)") : "; they serve " + others) +
                                       "; start one with `cuview-compute --name " + options.name +
                                       "` on that host, or add the gateway of the host where it runs");
    auto o = opts;
    o.remote = *whole;
    run->parts.push_back(std::make_unique<RemoteClient>(RemoteClient::attach(o)));
  } else {
    std::string listed;
    for (const auto& [k, url] : part_at) listed += (listed.empty() ? "" : ", ") + std::to_string(k);
    if (!part_at.count(0))
      throw Error(Errc::no_daemon, "part 0 of '" + options.name + "' is on none of the gateways " + urls +
                                       " (they serve its parts " + listed +
                                       "): add the gateway of the host where rank 0 runs");
    auto o = opts;
    o.part = 0;
    o.remote = part_at[0];
    run->parts.push_back(std::make_unique<RemoteClient>(RemoteClient::attach(o)));
    const auto& d0 = run->parts[0]->description();
    if (!d0.part || d0.part->index != 0 || d0.part->count == 0)
      throw Error(Errc::bad_message, detail::part_who(options.name, 0) + " through " + part_at[0] +
                                         " does not describe itself as part 0 of a run; is it from an older cuview?");
    std::string missing;
    std::size_t n_missing = 0;
    std::vector<std::string> serving(d0.part->count);
    for (std::uint32_t k = 0; k < d0.part->count; ++k) {
      if (auto it = part_at.find(k); it != part_at.end())
        serving[k] = it->second;
      else
        missing += (missing.empty() ? "" : ", ") + std::to_string(k), ++n_missing;
    }
    if (n_missing > 0)
      throw Error(Errc::no_daemon, std::string(n_missing == 1 ? "part " : "parts ") + missing + " of '" +
                                       options.name + "' (a run of " + std::to_string(d0.part->count) +
                                       " parts) " + (n_missing == 1 ? "is" : "are") + " on none of the gateways " +
                                       urls + ": add the gateway of every host the run is on (--remote URL once per host)");
    for (auto& c : detail::attach_others<RemoteClient>(opts, d0, deadline, serving))
      run->parts.push_back(std::make_unique<RemoteClient>(std::move(c)));
  }
  run->lay_out();
  return RemoteGroup(std::move(run));
}

void RemoteGroup::read_fields(const std::vector<std::string>& names) {
  // Checked as locally; the gateways read what views and fetches name.
  (void)proto::blocks_named(leader().description(), names, "'" + name() + "'");
}

std::optional<FrameGroup> RemoteGroup::next(std::chrono::milliseconds timeout) {
  auto& im = static_cast<detail::RemoteRun&>(*state_);
  const auto deadline = Clock::now() + timeout;
  // Part 0's newest frame sets the step; every other part's gateway is asked for its first frame
  // at or after that step. A part that no longer offers it (it skipped, or moved on) starts the
  // round again from part 0's newest.
  for (;;) {
    if (auto reason = im.gone_reason()) im.throw_gone(*reason);
    const auto newest = im.part(0).probe_newer(im.last_step, true, deadline);
    if (!newest) return std::nullopt;
    const auto& lead = *newest;
    std::vector<Frame> frames;
    for (std::size_t k = 0; k < im.parts.size(); ++k) {
      std::optional<RemoteRegion> at;
      try {
        at = k == 0 ? lead : im.part(k).probe({{}, lead.step});
      } catch (const Error& e) {
        if (e.code() != Errc::timeout) throw;  // not published yet by part k: again
      }
      if (!at || at->step != lead.step) break;
      auto f = im.part(k).fetch_frame(*at);
      if (!f) break;
      frames.push_back(std::move(*f));
    }
    if (frames.size() == im.parts.size()) {
      im.last_step = lead.step;
      return detail::FrameAccess::group(im.layout, std::move(frames), lead.step);
    }
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(10ms);
  }
}

void RemoteGroup::watch(const ViewWatch& w) {
  auto& im = static_cast<detail::RemoteRun&>(*state_);
  if (!im.decomposed) return im.part(0).watch(w);
  // One view in flight per part: the group asks each part for the step it needs (view_credit).
  for (std::size_t k = 0; k < im.parts.size(); ++k) im.part(k).watch_with(w, 1);
  im.watching = w;
  im.views.assign(im.parts.size(), std::nullopt);
  im.matcher = ViewMatcher(im.parts.size(), Clock::now());
}

bool RemoteGroup::next_view(RemoteView& out, std::chrono::milliseconds timeout) {
  auto& im = static_cast<detail::RemoteRun&>(*state_);
  if (!im.decomposed) return im.part(0).next_view(out, timeout);
  if (!im.watching)
    throw Error(Errc::not_attached, "RemoteGroup::next_view on '" + im.name + "' before watch(): say what to view first");
  const auto& want = *im.watching;
  const std::size_t n = im.parts.size();
  // Every part's gateway sends one view per credit; the matcher says when they make one picture
  // and whom to ask for which step (assembly.hpp).
  auto of_watch = [&](const remote::ViewHeader& h) { return shows_watch(h, want) && h.rect.has_value(); };
  auto keep = [&](std::size_t k) {
    if (!of_watch(im.incoming.header)) return;  // of an earlier watch: its credit is spent
    im.matcher.arrived(k, im.incoming.header.step, im.incoming.header.latest_step);
    im.views[k] = std::move(im.incoming);
    im.incoming = RemoteView{};
  };
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    for (std::size_t k = 0; k < n; ++k)
      while (im.part(k).take_view(im.incoming, 0ms, false)) keep(k);
    const auto now = Clock::now();
    const auto decision = im.matcher.decide(now);
    if (decision.picture) {
      std::vector<const RemoteView*> parts;
      for (const auto& v : im.views) parts.push_back(&*v);
      assemble_view(parts, out);
    }
    for (const auto& ask : decision.asks) {
      auto& held = im.views[ask.part];
      im.part(ask.part).view_credit(held ? held->header.seq : 0, ask.from_step);
      held.reset();
    }
    if (decision.picture) return true;
    if (now >= deadline) return false;
    const std::size_t waiting = im.matcher.waiting_on();
    if (im.part(waiting).take_view(im.incoming, std::min(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now), 20ms), false))
      keep(waiting);
  }
}

}  // namespace cuview
