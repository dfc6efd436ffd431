// A run: whatever a name and an address denote — a whole publisher or a run of parts (an MPI
// run, docs/protocol.md "Parts"), on this host or through the gateways of the hosts it is on.
// cuview::open is the one way in: every front-end (the viewer, cuview-ctl, the C API and Python)
// opens a run with it and never decides by itself between local and remote, whole and parts.
//
// Group is a run on this host (its frames zero-copy); RemoteGroup one through gateways (views
// assembled from every part, frames fetched). A whole publisher is a run of one part.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuview/assembly.hpp"
#include "cuview/attachment.hpp"
#include "cuview/frame.hpp"

namespace cuview {

/// What to open: a name, and where it runs.
struct OpenOptions {
  std::string name = "default";  ///< the publisher's instance name (every part of a run has it)
  /// The cuview-gateways of the hosts the run is on, one URL each, any order (ssh://..., tcp://...,
  /// unix:...; docs/remote.md). Empty: the run is on this host.
  std::vector<std::string> remote{};
  std::string client = "cuview client";
  Import import = Import::frames;  ///< local runs: control_only imports no ring
  /// For each control request; also how long a part not up yet (or still one of an earlier run)
  /// is waited for.
  std::chrono::milliseconds timeout{3000};
};

namespace detail {
struct RunState;
}

/// What both kinds of run do. Steering goes through leader() (part 0: its program hands every
/// request to all parts at one step; the other parts refuse steering). next() is for one thread
/// at a time; the control calls may run on other threads. Destroying a run detaches every part.
class Run {
 public:
  virtual ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  [[nodiscard]] const std::string& name() const noexcept;
  /// False when the name is a whole publisher (a run of one part).
  [[nodiscard]] bool decomposed() const noexcept;
  [[nodiscard]] std::size_t size() const noexcept;
  /// Part k's connection (its description, stats). Throws Error(out_of_range).
  [[nodiscard]] Attachment& part(std::size_t k);
  [[nodiscard]] const Attachment& part(std::size_t k) const;
  /// Part 0, which takes the run's steering.
  [[nodiscard]] Attachment& leader() { return part(0); }
  [[nodiscard]] const Attachment& leader() const { return part(0); }
  /// Where part k's block lies in the global grid (for a whole publisher: all of it, offset 0,
  /// count 1, rank -1). Throws Error(out_of_range).
  [[nodiscard]] const proto::PartDesc& part_desc(std::size_t k) const;
  /// Part k's block in the global grid, as an extent's offset and dims.
  [[nodiscard]] Block block(std::size_t k) const;
  /// The run's group id (for a whole publisher: its session).
  [[nodiscard]] const std::string& group_id() const noexcept;
  /// The global grid's extent (cells; components are per field).
  [[nodiscard]] Extent extent() const;
  /// The gateways this run is reached through, one per host; empty for a run on this host.
  [[nodiscard]] const std::vector<std::string>& via() const noexcept;

  /// The frames of one step from every part (the newest step all parts offer that is newer than
  /// the last returned; never blocks of two steps side by side); empty on timeout. Local: the
  /// parts' slots, held zero-copy. Remote: every part's frame fetched (RemoteClient::next_frame's
  /// cost, per part). Never makes a publisher wait. Throws Error(daemon_gone) naming the part, its
  /// rank, pid and host and its reason when any part's publisher goes away.
  [[nodiscard]] virtual std::optional<FrameGroup> next(std::chrono::milliseconds timeout) = 0;
  /// Reads only these fields (a particle set's name: all its attributes) from now on; empty:
  /// every field, the default. On this host every part's publisher then copies only what its
  /// readers read (Client::read_fields), and next() returns frames that hold them. Through
  /// gateways it changes nothing: a gateway reads the fields its views and fetches name. Throws
  /// Error(bad_value) naming a field the run lacks.
  virtual void read_fields(const std::vector<std::string>& names) = 0;
  /// Also takes frames of every k-th cell from now on (Client::read_every): a volume view's. On
  /// this host a whole publisher may then write only those cells; parts and gateways always send
  /// whole frames (it changes nothing there).
  virtual void read_every(std::uint32_t k) { (void)k; }

  /// A picture of a volume field of the whole run, cast from every cell where the data is
  /// (protocol 10, `render`; Attachment::render): a whole publisher's own; in a run of parts each
  /// part casts its block, and the parts' pictures of one step are composited here front to back
  /// (composite_pictures). Through gateways each picture comes compressed losslessly (the gateway's
  /// `picture` op). `pending` until every part has a picture of a common step. Throws as
  /// Attachment::render does, naming the part.
  [[nodiscard]] proto::RenderResult render(const proto::RenderArgs& view);

  /// True while every part's publisher runs and has not shut down.
  [[nodiscard]] bool alive() const noexcept;
  /// Empty while alive(); otherwise which part went and why: "part 1 of 'flow' (rank 1, pid 4711
  /// on host-b) shut down: rank 1 failed", with the reason the part said as it went, if it did.
  [[nodiscard]] std::optional<std::string> gone_reason() const;
  /// Every part's stats, in part order.
  [[nodiscard]] std::vector<proto::Stats> stats();
  /// Detaches from every part (the destructor does it).
  void detach() noexcept;

 protected:
  explicit Run(std::unique_ptr<detail::RunState> state);
  Run(Run&&) noexcept;
  Run& operator=(Run&&) noexcept;
  std::unique_ptr<detail::RunState> state_;
};

/// A run on this host: every part's ring imported, frames of one step from all parts held
/// zero-copy. Move-only.
class Group final : public Run {
 public:
  /// Attaches part 0 of `options.name`, learns the number of parts and the run's group id from
  /// it, then the other parts at once (in parallel); a whole publisher is a group of one part. A
  /// part that is not running yet, or that is from another run (another group id) is retried until
  /// `options.timeout` passes; then this throws Error naming the part ("part 2 of 'flow' is from
  /// another run ..."). `options.part` is ignored; a `remote` is refused (RemoteGroup). Throws as
  /// Client::attach does otherwise (no_daemon, version_mismatch, ...).
  static Group attach(const AttachOptions& options);

  Group(Group&&) noexcept;
  Group& operator=(Group&&) noexcept;
  ~Group() override;

  [[nodiscard]] Client& part(std::size_t k);
  [[nodiscard]] const Client& part(std::size_t k) const;
  [[nodiscard]] Client& leader() { return part(0); }
  [[nodiscard]] const Client& leader() const { return part(0); }
  [[nodiscard]] std::optional<FrameGroup> next(std::chrono::milliseconds timeout) override;
  void read_fields(const std::vector<std::string>& names) override;
  void read_every(std::uint32_t k) override;

 private:
  explicit Group(std::unique_ptr<detail::RunState> state);
};

/// A run through the cuview-gateways of the hosts it is on: views of a region of the global grid
/// assembled from every part's gateway, frames fetched. Move-only.
class RemoteGroup final : public Run {
 public:
  /// Attaches through `gateways` (one URL per host, any order). Each gateway lists the parts on its
  /// host ("NAME/part-K", docs/remote.md); part 0 says how many parts the run has, and each part
  /// is attached through the gateway that serves it. A whole publisher named so on one of them is a
  /// group of one part. Throws Error(no_daemon) naming the parts no gateway serves and what to add,
  /// Error(bad_value) when two gateways serve one part; otherwise as RemoteClient::attach does.
  static RemoteGroup attach(const AttachOptions& options, const std::vector<std::string>& gateways);

  RemoteGroup(RemoteGroup&&) noexcept;
  RemoteGroup& operator=(RemoteGroup&&) noexcept;
  ~RemoteGroup() override;

  [[nodiscard]] RemoteClient& part(std::size_t k);
  [[nodiscard]] const RemoteClient& part(std::size_t k) const;
  [[nodiscard]] RemoteClient& leader() { return part(0); }
  [[nodiscard]] const RemoteClient& leader() const { return part(0); }
  [[nodiscard]] std::optional<FrameGroup> next(std::chrono::milliseconds timeout) override;
  void read_fields(const std::vector<std::string>& names) override;
  /// From now on every part's gateway sends views of `watch`, a region of the global grid (each
  /// part sends the samples of its own block). Throws as RemoteClient::watch does.
  void watch(const ViewWatch& watch);
  /// The newest view of the whole region into `out`, assembled from every part's view of one step
  /// (assemble_view, ViewMatcher); waits at most `timeout`, false when none came. Throws
  /// Error(daemon_gone) naming the part that went; Error(not_attached) before watch().
  [[nodiscard]] bool next_view(RemoteView& out, std::chrono::milliseconds timeout);

 private:
  explicit RemoteGroup(std::unique_ptr<detail::RunState> state);
};

/// The one way in: opens whatever `options` denote — a whole publisher or a run of parts, on this
/// host (a Group) or through gateways (a RemoteGroup). Throws as Group::attach and
/// RemoteGroup::attach do. A caller that needs what only one kind offers asks for it
/// (dynamic_cast<Group*>: zero-copy frames; dynamic_cast<RemoteGroup*>: views).
std::unique_ptr<Run> open(const OpenOptions& options);

}  // namespace cuview
