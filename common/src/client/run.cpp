// Run: what both kinds of run share (its parts, their blocks, how a part's going is told), and
// cuview::open, the one place that chooses between a run on this host and one through gateways.
#include "cuview/run.hpp"

#include <algorithm>

#include "client/run_state.hpp"
#include "client/session.hpp"

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

}  // namespace cuview
