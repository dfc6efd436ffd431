// cuview::Group: one attachment per part of a publisher decomposed into parts (an MPI run), and
// frames of one step from all of them (docs/protocol.md "Parts"). Every part has its own ring;
// a group picks a step all rings offer and holds it in each, so a viewer never shows blocks of
// two different steps side by side, and no part's publisher ever waits for it.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <map>
#include <exception>
#include <mutex>
#include <thread>
#include <zmq.hpp>

#include "cuview/client.hpp"
#include "cuview/runtime_dir.hpp"
#include "cuview/zmq_util.hpp"

namespace cuview {
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace detail {
/// What a FrameGroup needs to place each part's block: shared by the Group and its FrameGroups,
/// so that a FrameGroup outliving its Group can still be assembled.
struct GroupLayout {
  std::string name;
  std::vector<proto::PartDesc> parts;
  /// Each part's own field descriptions: blocks of different sizes put a field at different
  /// offsets in their slots.
  std::vector<std::vector<proto::FieldDesc>> fields;
};
}  // namespace detail

namespace {
/// Parts attached at once while a group attaches: enough to hide each attach's round trips,
/// few enough that a run of hundreds of ranks does not start hundreds of threads.
constexpr std::size_t kAttachThreads = 16;
/// Snapshot-and-hold attempts per wake-up: a part's writer can overwrite the chosen step between
/// the snapshot and the hold.
constexpr int kAcquireAttempts = 8;

std::string part_who(const std::string& name, std::uint32_t k) {
  return "part " + std::to_string(k) + " of '" + name + "'";
}

/// The bytes of one cell of a field (components × the dtype's size), from its strides.
std::size_t cell_bytes(const proto::FieldDesc& f) {
  if (f.shape.size() < 2 || f.strides.size() != f.shape.size())
    throw Error(Errc::bad_message, "field '" + f.name + "' has shape of " + std::to_string(f.shape.size()) +
                                       " dimensions and " + std::to_string(f.strides.size()) +
                                       " strides; a grid field needs {height, width[, components]}");
  return f.strides[1];
}

/// Throws Error(bad_value) naming part k when it does not fit with part 0: every part must
/// declare the same fields on the same backend, inside the same global grid.
void check_fits(const std::string& name, std::uint32_t k, const proto::DescribeResult& d0,
                const proto::DescribeResult& dk) {
  const auto& p0 = *d0.part;
  const auto& pk = *dk.part;
  const std::string who = part_who(name, k);
  auto refuse = [&](const std::string& what) {
    throw Error(Errc::bad_value, who + " " + what + "; every part of a run must declare the same fields on one " +
                                     "backend and the same global grid: check the program's PartOptions and fields");
  };
  if (dk.backend != d0.backend) refuse("runs on backend " + dk.backend + ", part 0 on " + d0.backend);
  if (pk.global_width != p0.global_width || pk.global_height != p0.global_height)
    refuse("says the global grid is " + std::to_string(pk.global_width) + "x" + std::to_string(pk.global_height) +
           ", part 0 says " + std::to_string(p0.global_width) + "x" + std::to_string(p0.global_height));
  if (std::uint64_t{pk.offset_x} + dk.width > pk.global_width ||
      std::uint64_t{pk.offset_y} + dk.height > pk.global_height)
    refuse("has a block of " + std::to_string(dk.width) + "x" + std::to_string(dk.height) + " at (" +
           std::to_string(pk.offset_x) + ", " + std::to_string(pk.offset_y) + ") outside the global grid");
  if (dk.fields.size() != d0.fields.size())
    refuse("declares " + std::to_string(dk.fields.size()) + " fields, part 0 " + std::to_string(d0.fields.size()));
  for (std::size_t i = 0; i < dk.fields.size(); ++i) {
    const auto& a = d0.fields[i];
    const auto& b = dk.fields[i];
    if (a.name != b.name || a.dtype != b.dtype || a.components != b.components)
      refuse("declares field " + std::to_string(i) + " as '" + b.name + "' (" + b.dtype + " x" +
             std::to_string(b.components) + "), part 0 as '" + a.name + "' (" + a.dtype + " x" +
             std::to_string(a.components) + ")");
  }
}

/// Attaches part k of the run part 0 belongs to, retrying a part that is not up yet or is still
/// one of another run until `deadline`.
Client attach_part(const AttachOptions& base, std::uint32_t k, const proto::DescribeResult& d0,
                   Clock::time_point deadline, const std::vector<std::string>& gateways) {
  auto o = base;
  o.part = k;
  if (!gateways.empty()) o.remote = gateways[k];
  const auto& p0 = *d0.part;
  for (;;) {
    std::optional<Error> problem;
    try {
      auto c = Client::attach(o);
      const auto& d = c.description();
      const std::string who = part_who(base.name, k), pid = "pid " + std::to_string(c.hello().daemon_pid);
      if (!d.part) {
        problem.emplace(Errc::bad_message, who + " (" + pid + ") describes no part; is it from an older cuview?");
      } else if (d.part->group != p0.group) {
        problem.emplace(Errc::stale_session,
                        who + " is from another run (" + pid + ", group id '" + d.part->group + "'; part 0's is '" +
                            p0.group + "'): a part of an earlier run is still up, or two runs use one name; wait "
                            "for it to end, or give each run its own --name");
      } else if (d.part->index != k || d.part->count != p0.count) {
        problem.emplace(Errc::bad_message, who + " (" + pid + ") says it is part " + std::to_string(d.part->index) +
                                               " of " + std::to_string(d.part->count) + ", part 0 says the run has " +
                                               std::to_string(p0.count) + " parts");
      } else {
        check_fits(base.name, k, d0, d);
        return c;
      }
    } catch (const Error& e) {
      // Not up yet, or going away (a part of the previous run): both may change within the wait.
      if (e.code() != Errc::no_daemon && e.code() != Errc::daemon_gone) throw;
      problem.emplace(e.code(), e.what());
    }
    if (Clock::now() >= deadline)
      throw Error(problem->code(), std::string(problem->what()) + " (tried for " +
                                       std::to_string(base.timeout.count()) + " ms while attaching the group)");
    std::this_thread::sleep_for(50ms);
  }
}

/// Parts 1..count-1, attached in parallel (through gateways[k] when given); the first failure (in
/// part order) is thrown.
std::vector<Client> attach_others(const AttachOptions& base, const proto::DescribeResult& d0,
                                  Clock::time_point deadline, const std::vector<std::string>& gateways = {}) {
  const std::uint32_t count = d0.part->count;
  std::vector<std::optional<Client>> attached(count);
  std::vector<std::exception_ptr> failed(count);
  std::atomic<std::uint32_t> next{1};
  auto worker = [&] {
    for (std::uint32_t k; (k = next.fetch_add(1)) < count;) {
      try {
        attached[k].emplace(attach_part(base, k, d0, deadline, gateways));
      } catch (...) {
        failed[k] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < std::min<std::size_t>(count - 1, kAttachThreads); ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  for (const auto& e : failed)
    if (e) std::rethrow_exception(e);
  std::vector<Client> out;
  for (std::uint32_t k = 1; k < count; ++k) out.push_back(std::move(*attached[k]));
  return out;
}
}  // namespace

// ---------------------------------------------------------------- FrameGroup

FrameGroup::FrameGroup(std::shared_ptr<const detail::GroupLayout> layout, std::vector<Frame> frames,
                       std::uint64_t step) noexcept
    : layout_(std::move(layout)), frames_(std::move(frames)), step_(step) {}
FrameGroup::FrameGroup(FrameGroup&&) noexcept = default;
FrameGroup& FrameGroup::operator=(FrameGroup&&) noexcept = default;
FrameGroup::~FrameGroup() = default;

namespace {
void check_part_index(std::size_t k, std::size_t size, const std::string& name) {
  if (k >= size)
    throw Error(Errc::out_of_range, "part " + std::to_string(k) + " of '" + name + "' does not exist: the group has " +
                                        std::to_string(size) + " part(s), 0 to " + std::to_string(size - 1));
}
}  // namespace

const Frame& FrameGroup::part(std::size_t k) const {
  check_part_index(k, frames_.size(), layout_->name);
  return frames_[k];
}

const proto::PartDesc& FrameGroup::part_desc(std::size_t k) const {
  check_part_index(k, layout_->parts.size(), layout_->name);
  return layout_->parts[k];
}

std::uint32_t FrameGroup::global_width() const noexcept { return layout_->parts.front().global_width; }
std::uint32_t FrameGroup::global_height() const noexcept { return layout_->parts.front().global_height; }

std::size_t FrameGroup::global_field_bytes(std::size_t field) const {
  const auto& fields = layout_->fields.front();
  if (field >= fields.size())
    throw Error(Errc::out_of_range, "field " + std::to_string(field) + " of '" + layout_->name +
                                        "' does not exist: it has " + std::to_string(fields.size()) + " fields");
  return std::size_t{global_width()} * global_height() * cell_bytes(fields[field]);
}

void FrameGroup::copy_field_to_host(std::size_t field, std::span<std::byte> dst) const {
  const std::size_t need = global_field_bytes(field);
  if (dst.size() != need)
    throw Error(Errc::bad_value, "copying field '" + layout_->fields.front()[field].name + "' of '" + layout_->name +
                                     "' needs a buffer of " + std::to_string(need) + " bytes (its global grid), not " +
                                     std::to_string(dst.size()));
  const std::size_t cell = cell_bytes(layout_->fields.front()[field]);
  const std::size_t global_row = std::size_t{global_width()} * cell;
  std::vector<std::byte> block;
  for (std::size_t k = 0; k < frames_.size(); ++k) {
    const auto& f = layout_->fields[k][field];
    const auto& p = layout_->parts[k];
    const std::size_t rows = f.shape[0], row = std::size_t{f.shape[1]} * cell;
    // One copy per block (on CUDA one transfer), then rows into place.
    block.resize(rows * row);
    frames_[k].copy_to_host(f.offset, block);
    for (std::size_t r = 0; r < rows; ++r)
      std::memcpy(dst.data() + (p.offset_y + r) * global_row + std::size_t{p.offset_x} * cell, block.data() + r * row,
                  row);
  }
}

std::optional<std::string> FrameGroup::verify() const {
  for (std::size_t k = 0; k < frames_.size(); ++k) {
    if (auto problem = frames_[k].verify()) {
      if (frames_.size() == 1) return problem;
      return part_who(layout_->name, static_cast<std::uint32_t>(k)) + ", " + *problem;
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- Group

struct Group::Impl {
  AttachOptions opts;
  bool decomposed = false;
  std::vector<Client> parts;
  std::shared_ptr<detail::GroupLayout> layout;
  /// Remote: part k's gateway (empty for a local group).
  std::vector<std::string> gateways;
  // Remote views: what is watched, each part's views not yet assembled (newest last), the step of
  // the last view returned.
  std::optional<ViewWatch> watching;
  std::vector<std::optional<RemoteView>> views;  ///< each part's view since it was last asked
  std::vector<Clock::time_point> asked;          ///< when each part was last asked for a view
  std::vector<std::optional<std::uint64_t>> asked_step;
  std::optional<std::uint64_t> last_view_step;
  RemoteView incoming;
  /// Per part: frames at or below this seq are never offered again (taken by an earlier group,
  /// or from before this group attached).
  std::vector<std::uint64_t> last_seq;
  // Each part's `bye` notices (their reason for going), read only once it is gone.
  zmq::context_t zmq{1};
  mutable std::vector<zmq::socket_t> byes;
  mutable std::mutex bye_mu;
  mutable std::vector<std::string> bye_reasons;
  /// Per part: until when a notice is waited for, set when the part is first found gone, so that
  /// asking again (a UI polling gone_reason()) does not wait again.
  mutable std::vector<std::optional<Clock::time_point>> bye_until;

  [[nodiscard]] std::string who(std::size_t k) const {
    const auto& p = layout->parts[k];
    const std::string pid = std::to_string(parts[k].hello().daemon_pid);
    if (!decomposed) return "daemon '" + opts.name + "' (pid " + pid + ")";
    return part_who(opts.name, p.index) + " (" + (p.rank >= 0 ? "rank " + std::to_string(p.rank) + ", " : "") +
           "pid " + pid + (p.host.empty() ? "" : " on " + p.host) + ")";
  }

  void subscribe_byes() {
    for (std::uint32_t k = 0; k < parts.size(); ++k) {
      auto& s = byes.emplace_back(zmq, zmq::socket_type::sub);
      configure_client_socket(s);
      s.set(zmq::sockopt::subscribe, std::string(proto::kByeTopic));
      s.connect(InstancePaths(opts.name, k).frames_endpoint());
    }
    bye_reasons.resize(parts.size());
    bye_until.resize(parts.size());
  }

  /// The reason part k gave as it went, if its notice came (waiting briefly: it is sent just
  /// after the ring says the part shut down).
  std::string bye_reason(std::size_t k) const {
    std::lock_guard lock(bye_mu);
    if (k >= byes.size()) return {};
    if (!bye_reasons[k].empty()) return bye_reasons[k];
    auto& s = byes[k];
    zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
    if (!bye_until[k]) bye_until[k] = Clock::now() + 100ms;
    for (bool once = true; bye_reasons[k].empty() && (once || Clock::now() < *bye_until[k]); once = false) {
      zmq::poll(&item, 1, Clock::now() < *bye_until[k] ? 20ms : 0ms);
      if (!(item.revents & ZMQ_POLLIN)) continue;
      zmq::message_t topic, body;
      if (!s.recv(topic, zmq::recv_flags::dontwait) || !topic.more() || !s.recv(body, zmq::recv_flags::dontwait))
        continue;
      try {
        const auto bye = proto::decode_bytes<proto::ByeNotice>(body.to_string(), "bye notice");
        if (bye.session == parts[k].hello().session) bye_reasons[k] = bye.reason;
      } catch (const Error&) {
        // not a notice we can read: the part's going is reported without its reason
      }
    }
    return bye_reasons[k];
  }

  [[nodiscard]] std::optional<std::string> gone_reason() const {
    for (std::size_t k = 0; k < parts.size(); ++k) {
      if (parts[k].daemon_alive()) continue;
      const std::string reason = bye_reason(k);
      return who(k) + (parts[k].said_shut_down() ? " shut down" : " exited") +
             (reason.empty() ? std::string() : ": " + reason);
    }
    return std::nullopt;
  }

  [[noreturn]] void throw_gone(const std::string& reason) const {
    throw Error(Errc::daemon_gone, reason + "; the group of " + std::to_string(parts.size()) + " parts of '" +
                                       opts.name + "' is incomplete. Attach again once all its parts run");
  }

  /// The frames of one step that every part offers, held in every part; empty when no such step
  /// is newer than the last group's, or the writers overtook every attempt. `laggard` gets the
  /// part to wait for.
  std::optional<FrameGroup> try_take(const std::vector<const RingReader*>& rings, std::size_t& laggard) {
    const std::size_t n = parts.size();
    for (int attempt = 0; attempt < kAcquireAttempts; ++attempt) {
      // The steps part 0 offers, kept only where every other part offers them too.
      std::vector<std::uint64_t> common;
      bool lagging = false;  // a part offers nothing new: it is the one to wait for
      std::uint64_t slowest = 0;
      for (std::size_t k = 0; k < n; ++k) {
        std::vector<std::uint64_t> steps;
        for (const auto& f : rings[k]->offered())
          if (f.seq > last_seq[k]) steps.push_back(f.step);
        std::sort(steps.begin(), steps.end());
        if (steps.empty()) {
          if (!lagging) laggard = k;
          lagging = true;
        } else if (!lagging && (k == 0 || steps.back() < slowest)) {
          slowest = steps.back();
          laggard = k;
        }
        if (k == 0) {
          common = std::move(steps);
        } else {
          std::vector<std::uint64_t> both;
          std::set_intersection(common.begin(), common.end(), steps.begin(), steps.end(), std::back_inserter(both));
          common = std::move(both);
        }
      }
      if (common.empty()) return std::nullopt;
      const std::uint64_t step = common.back();
      std::vector<Frame> frames;
      frames.reserve(n);
      for (std::size_t k = 0; k < n; ++k) {
        auto info = rings[k]->acquire_step(step, last_seq[k]);
        if (!info) break;  // overwritten since the snapshot: the frames taken so far are released
        frames.push_back(parts[k].adopt(*info));
      }
      if (frames.size() < n) continue;
      for (std::size_t k = 0; k < n; ++k) last_seq[k] = frames[k].info().seq;
      return FrameGroup(layout, std::move(frames), step);
    }
    return std::nullopt;
  }
};

Group::Group(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Group::Group(Group&&) noexcept = default;
Group& Group::operator=(Group&&) noexcept = default;
Group::~Group() = default;

Group Group::attach(const AttachOptions& options) {
  if (!options.remote.empty()) return attach_remote(options, {options.remote});
  const auto deadline = Clock::now() + options.timeout;
  auto impl = std::make_unique<Impl>();
  impl->opts = options;
  impl->opts.part.reset();
  auto layout = std::make_shared<detail::GroupLayout>();
  layout->name = options.name;
  // Through a gateway, or a name with no part 0: a whole publisher (Client::attach says so when
  // nothing runs under the name).
  impl->decomposed = options.remote.empty() && running_parts(options.name) > 0;
  if (!impl->decomposed) {
    impl->parts.push_back(Client::attach(impl->opts));
    const auto& d = impl->parts[0].description();
    layout->parts.push_back(proto::PartDesc{0, 1, 0, 0, d.width, d.height, d.session, -1, ""});
  } else {
    auto o = impl->opts;
    o.part = 0;
    impl->parts.push_back(Client::attach(o));
    const auto& d0 = impl->parts[0].description();
    if (!d0.part || d0.part->index != 0 || d0.part->count == 0)
      throw Error(Errc::bad_message, part_who(options.name, 0) + " (pid " +
                                         std::to_string(impl->parts[0].hello().daemon_pid) +
                                         ") does not describe itself as part 0 of a run; is it from an older cuview?");
    for (auto& c : attach_others(impl->opts, d0, deadline)) impl->parts.push_back(std::move(c));
    for (const auto& c : impl->parts) layout->parts.push_back(*c.description().part);
  }
  for (const auto& c : impl->parts) layout->fields.push_back(c.description().fields);
  impl->layout = std::move(layout);
  impl->last_seq.assign(impl->parts.size(), 0);
  if (impl->decomposed) {
    impl->subscribe_byes();
    if (options.import == Import::frames) {
      // Like a single client, never offered a frame older than the newest each ring has now (nor a
      // withdrawn one: RingWriter::open_lease).
      for (std::size_t k = 0; k < impl->parts.size(); ++k) {
        const std::uint64_t latest = impl->parts[k].frame_ring("Group::attach").block().latest.load();
        const std::uint64_t seq = latest_seq_of(latest);
        impl->last_seq[k] = latest_slot_of(latest) == kNoSlot || seq == 0 ? seq : seq - 1;
      }
    }
  }
  return Group(std::move(impl));
}

Group Group::attach_remote(const AttachOptions& options, const std::vector<std::string>& gateways) {
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
  auto impl = std::make_unique<Impl>();
  impl->opts = options;
  impl->opts.part.reset();
  auto layout = std::make_shared<detail::GroupLayout>();
  layout->name = options.name;
  impl->decomposed = !part_at.empty();
  if (!impl->decomposed) {
    if (!whole)
      throw Error(Errc::no_daemon, "no publisher named '" + options.name + "' on the gateway(s) " + urls +
                                       (others.empty() ? std::string(" (they serve none)") : "; they serve " + others) +
                                       "; start one with `cuview-compute --name " + options.name +
                                       "` on that host, or add the gateway of the host where it runs");
    auto o = impl->opts;
    o.remote = *whole;
    impl->parts.push_back(Client::attach(o));
    impl->gateways.push_back(*whole);
    const auto& d = impl->parts[0].description();
    layout->parts.push_back(proto::PartDesc{0, 1, 0, 0, d.width, d.height, d.session, -1, ""});
  } else {
    std::string listed;
    for (const auto& [k, url] : part_at) listed += (listed.empty() ? "" : ", ") + std::to_string(k);
    if (!part_at.count(0))
      throw Error(Errc::no_daemon, "part 0 of '" + options.name + "' is on none of the gateways " + urls +
                                       " (they serve its parts " + listed +
                                       "): add the gateway of the host where rank 0 runs");
    auto o = impl->opts;
    o.part = 0;
    o.remote = part_at[0];
    impl->parts.push_back(Client::attach(o));
    const auto& d0 = impl->parts[0].description();
    if (!d0.part || d0.part->index != 0 || d0.part->count == 0)
      throw Error(Errc::bad_message, part_who(options.name, 0) + " through " + part_at[0] +
                                         " does not describe itself as part 0 of a run; is it from an older cuview?");
    std::string missing;
    std::size_t n_missing = 0;
    impl->gateways.resize(d0.part->count);
    for (std::uint32_t k = 0; k < d0.part->count; ++k) {
      if (auto it = part_at.find(k); it != part_at.end())
        impl->gateways[k] = it->second;
      else
        missing += (missing.empty() ? "" : ", ") + std::to_string(k), ++n_missing;
    }
    if (n_missing > 0)
      throw Error(Errc::no_daemon, std::string(n_missing == 1 ? "part " : "parts ") + missing + " of '" +
                                       options.name + "' (a run of " + std::to_string(d0.part->count) +
                                       " parts) " + (n_missing == 1 ? "is" : "are") + " on none of the gateways " +
                                       urls + ": add the gateway of every host the run is on (--remote URL once per host)");
    for (auto& c : attach_others(impl->opts, d0, deadline, impl->gateways)) impl->parts.push_back(std::move(c));
    for (const auto& c : impl->parts) layout->parts.push_back(*c.description().part);
  }
  for (const auto& c : impl->parts) layout->fields.push_back(c.description().fields);
  impl->layout = std::move(layout);
  impl->last_seq.assign(impl->parts.size(), 0);
  return Group(std::move(impl));
}

const std::string& Group::name() const noexcept { return impl_->opts.name; }
bool Group::decomposed() const noexcept { return impl_->decomposed; }
std::size_t Group::size() const noexcept { return impl_->parts.size(); }
const std::vector<Client>& Group::parts() const noexcept { return impl_->parts; }

Client& Group::part(std::size_t k) {
  check_part_index(k, impl_->parts.size(), impl_->opts.name);
  return impl_->parts[k];
}
Client& Group::leader() { return impl_->parts.front(); }

const proto::PartDesc& Group::part_desc(std::size_t k) const {
  check_part_index(k, impl_->parts.size(), impl_->opts.name);
  return impl_->layout->parts[k];
}
const std::string& Group::group_id() const noexcept { return impl_->layout->parts.front().group; }
std::uint32_t Group::global_width() const noexcept { return impl_->layout->parts.front().global_width; }
std::uint32_t Group::global_height() const noexcept { return impl_->layout->parts.front().global_height; }

std::optional<FrameGroup> Group::next(std::chrono::milliseconds timeout) {
  auto& im = *impl_;
  if (!im.decomposed) {
    auto f = im.parts[0].next_frame(timeout);
    if (!f) return std::nullopt;
    const std::uint64_t step = f->info().step;
    std::vector<Frame> one;
    one.push_back(std::move(*f));
    return FrameGroup(im.layout, std::move(one), step);
  }
  const auto deadline = Clock::now() + timeout;
  std::vector<const RingReader*> rings(im.parts.size());
  std::vector<std::uint32_t> seen(im.parts.size());
  for (;;) {
    if (auto reason = im.gone_reason()) im.throw_gone(*reason);
    // Notify words before the snapshots, so that a frame published after a snapshot wakes us.
    for (std::size_t k = 0; k < im.parts.size(); ++k) {
      rings[k] = &im.parts[k].frame_ring("Group::next");
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

bool Group::remote() const noexcept { return !impl_->gateways.empty(); }

void Group::watch(const ViewWatch& w) {
  auto& im = *impl_;
  if (!im.decomposed) return im.parts[0].watch(w);
  // One view in flight per part: the group asks each part for the step it needs (view_credit).
  for (auto& c : im.parts) c.watch_with(w, 1);
  im.watching = w;
  im.views.assign(im.parts.size(), std::nullopt);
  im.asked.assign(im.parts.size(), Clock::now());
  im.asked_step.assign(im.parts.size(), std::nullopt);
  im.last_view_step.reset();
}

bool Group::next_view(RemoteView& out, std::chrono::milliseconds timeout) {
  auto& im = *impl_;
  if (!im.decomposed) return im.parts[0].next_view(out, timeout);
  if (!im.watching)
    throw Error(Errc::not_attached, "Group::next_view on '" + im.opts.name + "' before watch(): say what to view first");
  const auto& want = *im.watching;
  const auto& r = want.region;
  const std::size_t n = im.parts.size();
  // Every part's gateway sends one view per credit. The first of each part is of its newest frame;
  // then the group asks the parts behind for the step of the part furthest ahead (the first frame
  // at or after it), until all parts have sent one step; it returns that picture and asks every
  // part for the newest step any of them had published. Parts publish the same steps, so this
  // meets within a view or two; never are blocks of two steps put side by side.
  auto of_watch = [&](const remote::ViewHeader& h) {
    return h.field == want.field && h.view_w == static_cast<std::uint32_t>(r.view_w) &&
           h.view_h == static_cast<std::uint32_t>(r.view_h) && h.center_x == r.center_x &&
           h.center_y == r.center_y && h.pixels_per_cell == r.pixels_per_cell && h.rect.has_value();
  };
  auto ask = [&](std::size_t k, std::optional<std::uint64_t> from_step) {
    im.parts[k].view_credit(im.views[k] ? im.views[k]->header.seq : 0, from_step);
    im.views[k].reset();
    im.asked[k] = Clock::now();
    im.asked_step[k] = from_step;
  };
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    for (std::size_t k = 0; k < n; ++k)
      while (im.parts[k].take_view(im.incoming, 0ms, false)) {
        if (!of_watch(im.incoming.header)) continue;  // of an earlier watch: its credit is spent
        im.views[k] = std::move(im.incoming);
        im.incoming = RemoteView{};
      }
    const bool all = std::all_of(im.views.begin(), im.views.end(), [](const auto& v) { return v.has_value(); });
    if (all) {
      std::uint64_t lo = im.views[0]->header.step, hi = lo, latest = 0;
      for (const auto& v : im.views) {
        lo = std::min(lo, v->header.step), hi = std::max(hi, v->header.step);
        latest = std::max(latest, v->header.latest_step);
      }
      if (lo == hi && (!im.last_view_step || hi != *im.last_view_step)) {
        // One step from every part: the picture.
        out.view.region = im.views[0]->view.region;
        out.view.components = 1;
        out.view.vectors.clear();
        out.view.values.assign(std::size_t(r.view_w) * r.view_h, std::numeric_limits<float>::quiet_NaN());
        bool any_range = false;
        for (std::size_t k = 0; k < n; ++k) {
          const auto& h = im.views[k]->header;
          const auto& rect = *h.rect;
          for (std::uint32_t y = 0; y < rect.h; ++y)
            std::copy_n(im.views[k]->view.values.data() + std::size_t{y} * rect.w, rect.w,
                        out.view.values.data() + (std::size_t{rect.y} + y) * r.view_w + rect.x);
          auto& o = out.header;
          if (k == 0) {
            o = h;
            o.rect.reset();
            o.raw_bytes = 0;
          }
          o.raw_bytes += h.raw_bytes;
          o.sent_ns = std::max(o.sent_ns, h.sent_ns);
          o.stamp_ns = std::max(o.stamp_ns, h.stamp_ns);
          o.latest_step = std::max(o.latest_step, h.latest_step);
          o.error_bound = std::max(o.error_bound, h.error_bound);
          if (h.link_bytes_per_s > 0 && (o.link_bytes_per_s <= 0 || h.link_bytes_per_s < o.link_bytes_per_s))
            o.link_bytes_per_s = h.link_bytes_per_s;
          // The coarsest encoding any part used.
          if (remote::value_bytes(remote::encoding_named(h.encoding)) <
              remote::value_bytes(remote::encoding_named(o.encoding)))
            o.encoding = h.encoding;
          if (rect.w > 0 && rect.h > 0) {
            o.lo = any_range ? std::min(o.lo, h.lo) : h.lo;
            o.hi = any_range ? std::max(o.hi, h.hi) : h.hi;
            any_range = true;
          }
        }
        im.last_view_step = hi;
        for (std::size_t k = 0; k < n; ++k) ask(k, std::max(latest, hi + 1));
        return true;
      }
      // Parts at different steps (or all at the step already shown): the ones behind catch up.
      const std::uint64_t target = lo == hi ? hi + 1 : hi;
      for (std::size_t k = 0; k < n; ++k)
        if (im.views[k]->header.step < target) ask(k, target);
    }
    const auto now = Clock::now();
    // A step that never comes (the run was reset to an earlier step; a part skipped it and then
    // paused): after a second, ask for the newest frame instead; a view lost on the way (dropped
    // by a full queue): ask again every few seconds (the gateway caps a client's credits at 8).
    for (std::size_t k = 0; k < n; ++k)
      if (!im.views[k] && now - im.asked[k] > (im.asked_step[k] ? 1s : 3s)) ask(k, std::nullopt);
    if (now >= deadline) return false;
    std::size_t waiting = 0;
    while (waiting + 1 < n && im.views[waiting]) ++waiting;
    if (im.parts[waiting].take_view(im.incoming, std::min(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now), 20ms), false) &&
        of_watch(im.incoming.header)) {
      im.views[waiting] = std::move(im.incoming);
      im.incoming = RemoteView{};
    }
  }
}

bool Group::alive() const noexcept {
  return std::all_of(impl_->parts.begin(), impl_->parts.end(), [](const Client& c) { return c.daemon_alive(); });
}

std::optional<std::string> Group::gone_reason() const { return impl_->gone_reason(); }

std::vector<proto::Stats> Group::stats() {
  std::vector<proto::Stats> out;
  for (auto& c : impl_->parts) out.push_back(c.stats());
  return out;
}

void Group::detach() noexcept {
  for (auto& c : impl_->parts) c.detach();
}

}  // namespace cuview
