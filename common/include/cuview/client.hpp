// The client library: attach to a running cuview-compute daemon, import its frame ring,
// receive verified frames zero-copy, steer it, detach. One API over both backends.
//
// Thread-safety: a Client may be used from any number of threads at once (control calls are
// serialised on its socket; frame waits take no lock). A Frame is used by one thread at a time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cuview/cuda/stream_ref.hpp"
#include "cuview/frame_layout.hpp"
#include "cuview/protocol.hpp"
#include "cuview/remote_protocol.hpp"
#include "cuview/ring.hpp"
#include "cuview/schema.hpp"
#include "cuview/view_sampler.hpp"

namespace cuview {

/// Whether attach imports the frame ring (a reader) or only opens the control channel.
enum class Import { frames, control_only };

struct AttachOptions {
  std::string name = "default";  ///< instance name of the daemon
  std::string client = "cuview client";
  Import import = Import::frames;
  std::chrono::milliseconds timeout{3000};  ///< for each control request
  /// Empty: the daemon runs on this host. Otherwise the cuview-gateway to reach it through:
  /// ssh://[user@]host[:port], tcp://host:port[?key=KEY] or unix:PATH (docs/remote.md). A remote
  /// attachment imports nothing, whatever `import` says: it receives views (watch, next_view) and
  /// full-resolution regions (fetch); every control call works as it does locally.
  std::string remote{};
  /// Part K of a publisher decomposed into parts (docs/protocol.md "Parts"); cuview::Group
  /// attaches every part. Empty: a whole publisher (attaching a decomposed one this way is refused).
  std::optional<std::uint32_t> part{};
};

/// What a remote client asks to see: one field over a region, at the region's output size.
struct ViewWatch {
  std::string field;
  ViewRegion region;  ///< field_w, field_h: the grid's; view_w, view_h: the output's
  std::string encoding = "auto";  ///< "auto" (fitted to the link), or pinned: u8, u16, f32
};

/// A view of a remote frame: its values (NaN outside the grid) and how exact they are.
struct RemoteView {
  remote::ViewHeader header;  ///< seq, step, encoding, error bound, range, the gateway's link estimate
  SampledView view;           ///< the region and its values
};

/// A rectangle of a field at full resolution: float32, exact.
struct RemoteRegion {
  std::uint64_t seq = 0, step = 0;
  double sim_time = 0;
  std::uint32_t x = 0, y = 0, w = 0, h = 0, components = 1;
  std::vector<float> values;  ///< h × w × components, row-major
};

namespace detail {
struct Imports;
struct GroupLayout;
}  // namespace detail

class Group;

/// Every call on a Client or Frame leaves the calling thread's current CUDA device as it found
/// it: GPU work runs in the frame's GPU's primary context, pushed for the call and popped after.
///
/// One frame held by this client: the daemon will not overwrite its slot until the Frame is
/// destroyed (or the client process dies). Move-only; a moved-from Frame releases nothing.
/// On CUDA, destroy it only after the GPU work that reads device_slot() has completed
/// (synchronize that stream first): releasing the slot lets the daemon write it again.
class Frame {
 public:
  Frame(Frame&& other) noexcept;
  Frame& operator=(Frame&& other) noexcept;
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
  ~Frame();  // releases the slot; never throws

  [[nodiscard]] const FrameInfo& info() const noexcept { return info_; }
  /// Host backend: the field's data in shared memory (row-major, `description().fields`).
  /// CUDA backend: nullptr (use device_slot()).
  [[nodiscard]] const float* host_field(std::size_t field) const noexcept;
  /// CUDA backend: the slot's device pointer in this process (fields at their offsets); the data
  /// is complete once work on a stream made to wait with wait_on() runs. Host backend: nullptr.
  [[nodiscard]] const void* device_slot() const noexcept;
  /// CUDA backend: the ordinal, in this process, of the GPU the frame is on. Host backend: -1.
  [[nodiscard]] int device() const noexcept;
  /// The slot's first byte in this process: device memory on CUDA, shared memory on the host.
  [[nodiscard]] const void* slot_data() const noexcept;
  /// CUDA backend: makes `stream` (a cudaStream_t converts) wait for the daemon's interprocess event of
  /// this frame, without blocking the host. Host backend: nothing to wait for. Costly to the
  /// publisher: a stream of another context waiting on its event makes the GPU switch contexts
  /// (~2 % of a simulation at 60 Hz on an H100 without MPS); prefer wait() and copies.
  void wait_on(cuda::StreamRef stream) const;
  /// Blocks the calling thread until the frame's data is complete (CUDA: waits on the daemon's
  /// interprocess event from the host, no GPU work in this process). Host backend: returns at once.
  void wait() const;
  /// The slot's trailer (seq, step, checksum, done_ns), after wait(). On CUDA this copies 32
  /// bytes from the device.
  [[nodiscard]] SlotTrailer trailer() const;
  /// Copies the whole slot (fields and trailer) to `dst`, which must hold slot_bytes. On CUDA it
  /// waits for the frame's interprocess event on the host first, then copies with the copy engine. Throws Error(cuda |
  /// bad_value).
  void copy_to_host(std::span<std::byte> dst) const;
  /// Copies dst.size() bytes of the slot from byte `offset` (a field, an attribute) to `dst`, as
  /// above. Throws Error(out_of_range) when the range leaves the slot.
  void copy_to_host(std::size_t offset, std::span<std::byte> dst) const;
  /// CUDA backend: waits until all GPU work this process queued on the frame's GPU is done (call
  /// it before releasing a frame your kernels read). Host backend: returns at once.
  void synchronize_device() const;
  /// Checks the frame is intact: trailer sequence and step match, and the checksum over every
  /// field matches the publisher's (no simulation's value range is assumed). Empty when good,
  /// otherwise a sentence saying what is wrong.
  [[nodiscard]] std::optional<std::string> verify() const;

 private:
  friend class Client;
  Frame(std::shared_ptr<const detail::Imports> imports, const FrameInfo& info) noexcept;
  std::shared_ptr<const detail::Imports> imports_;
  FrameInfo info_;
};

/// An attachment to one daemon session. Move-only. Destroying it detaches (best effort).
class Client {
 public:
  /// Connects, says hello, describes and imports the ring. Throws Error: no_daemon (nothing runs
  /// under that name), version_mismatch, timeout, access, cuda, ...
  static Client attach(const AttachOptions& options);

  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  ~Client();

  [[nodiscard]] const proto::HelloResult& hello() const noexcept;
  [[nodiscard]] const proto::DescribeResult& description() const noexcept;
  [[nodiscard]] const std::string& name() const noexcept;
  /// How the ring reached this process: "shm", "legacy", "vmm" or "pool"; empty when control-only.
  [[nodiscard]] const std::string& sharing() const noexcept;

  /// Waits for a frame newer than the last one returned. Empty on timeout. Throws
  /// Error(daemon_gone) within ~100 ms of the daemon exiting, shutting down or restarting.
  [[nodiscard]] std::optional<Frame> next_frame(std::chrono::milliseconds timeout);
  /// The oldest frame the ring still offers whose step is at least `min_step`, held (whatever
  /// next_frame returned before); empty when there is none now. For a reader that must show one
  /// given step of several publishers (a gateway serving a run of parts). Throws as next_frame.
  [[nodiscard]] std::optional<Frame> frame_from_step(std::uint64_t min_step);
  /// Whether this attachment goes through a gateway (AttachOptions::remote).
  [[nodiscard]] bool remote() const noexcept;
  /// Remote: from now on the gateway sends views of `watch` (replacing an earlier one). Throws
  /// Error(bad_value) naming an unknown field or encoding; Error(unsupported) when local.
  void watch(const ViewWatch& watch);
  /// Remote: the newest view into `out` (its buffers reused), waiting at most `timeout`; false when
  /// none came. Throws Error(daemon_gone) within a second of the daemon, the gateway or the link
  /// going away; Error(bad_message) for a view that does not decode.
  [[nodiscard]] bool next_view(RemoteView& out, std::chrono::milliseconds timeout);
  /// Remote: the rectangle [x, x+w) × [y, y+h) of `field` in the newest frame, exact. Throws
  /// Error(bad_value | out_of_range) naming the field or the rectangle.
  RemoteRegion fetch(const std::string& field, std::uint32_t x, std::uint32_t y, std::uint32_t w, std::uint32_t h);

  /// True while the daemon of this session runs and has not shut down.
  [[nodiscard]] bool daemon_alive() const noexcept;
  /// Seconds since the daemon's last loop turn (large when it is frozen).
  [[nodiscard]] double daemon_silence_s() const noexcept;

  // Control. Each throws Error with the daemon's code and message when it refuses.
  [[nodiscard]] proto::Stats stats();
  void pause();
  void resume();
  void step(std::uint64_t n);
  void set(const std::map<std::string, double>& params, const std::optional<std::string>& preset = {});
  void reset();
  /// Draws (value 1) or erases (0) a disc in one of the daemon's inputs (description().inputs).
  void draw(const Stroke& stroke);
  /// Asks the daemon to write a checkpoint (to `path`, absolute; else into its checkpoint
  /// directory) and returns its ticket. Throws Error(unsupported) when the daemon writes none.
  std::uint64_t checkpoint(const std::string& path = {});
  /// Waits until the checkpoint of `ticket` is written and returns the daemon's checkpoint status
  /// (its path, step, sizes and times). Throws Error(system) with the daemon's reason when the
  /// write failed, Error(timeout) when it takes longer than `timeout`.
  proto::CheckpointStatus wait_checkpoint(std::uint64_t ticket, std::chrono::milliseconds timeout);
  void shutdown();
  /// Sends `op` with `args` as they are (a MessagePack map) and returns the daemon's reply, whose
  /// `result` is the daemon's result: for a gateway forwarding requests it did not make. Throws as
  /// the typed calls do, with the daemon's code and message.
  proto::Reply forward(proto::Op op, const msgpack::object& args);
  /// Tells the daemon this client is leaving; later frame waits throw. Called by the destructor.
  void detach() noexcept;

 private:
  friend class Group;
  struct Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  /// For Group, which picks frames across parts itself: this attachment's ring, after the checks
  /// next_frame() makes (`call` names the caller in their errors; throws Error(daemon_gone) when
  /// the publisher is gone).
  [[nodiscard]] const RingReader& frame_ring(std::string_view call) const;
  /// For Group: the Frame of `info`, which the caller holds through frame_ring() (the Frame
  /// releases it).
  [[nodiscard]] Frame adopt(const FrameInfo& info) const noexcept;
  /// For Group's messages: whether the publisher said it shut down (rather than just exited).
  [[nodiscard]] bool said_shut_down() const noexcept;
  /// For Group: next_view() without placing a part's samples in the whole view (`out.view.values`
  /// holds header.rect's samples only when the header has a rect); with `credit` false it returns
  /// no credit to the gateway (the caller does, with view_credit()).
  [[nodiscard]] bool take_view(RemoteView& out, std::chrono::milliseconds timeout, bool credit = true);
  /// For Group: watch() granting `credits` views.
  void watch_with(const ViewWatch& watch, std::uint32_t credits);
  /// For Group: one more view, after `seq`, of the first frame at or after `from_step` if given.
  void view_credit(std::uint64_t seq, std::optional<std::uint64_t> from_step);
  std::unique_ptr<Impl> impl_;
};

/// The frames of one step from every part of a publisher decomposed into parts (Group::next):
/// part k's Frame is its block of the global grid, which starts at part_desc(k)'s offset. Every
/// frame is held until the FrameGroup is destroyed, then all are released together. Move-only;
/// one thread at a time. It stays readable after its Group is gone (as a Frame after its Client).
class FrameGroup {
 public:
  FrameGroup(FrameGroup&&) noexcept;
  FrameGroup& operator=(FrameGroup&&) noexcept;
  ~FrameGroup();  // releases every part's slot; never throws

  /// The step every part's frame shows.
  [[nodiscard]] std::uint64_t step() const noexcept { return step_; }
  /// Parts, one frame each.
  [[nodiscard]] std::size_t size() const noexcept { return frames_.size(); }
  /// Part k's frame (its FrameInfo, its block's data). Throws Error(out_of_range).
  [[nodiscard]] const Frame& part(std::size_t k) const;
  [[nodiscard]] const std::vector<Frame>& frames() const noexcept { return frames_; }
  /// Where part k's block lies in the global grid. Throws Error(out_of_range).
  [[nodiscard]] const proto::PartDesc& part_desc(std::size_t k) const;
  [[nodiscard]] std::uint32_t global_width() const noexcept;
  [[nodiscard]] std::uint32_t global_height() const noexcept;
  /// Bytes of field `field` over the whole global grid: global_width × global_height × the bytes
  /// of one cell (components × the dtype's size). Throws Error(out_of_range).
  [[nodiscard]] std::size_t global_field_bytes(std::size_t field) const;
  /// Copies field `field` of every part into `dst` (global_field_bytes(field) bytes) as one
  /// row-major global grid, each part's block at its offset; cells no part covers are left as
  /// they were. On CUDA it waits for each frame first, as Frame::copy_to_host does. Throws
  /// Error(out_of_range) for a field that does not exist, Error(bad_value) for a `dst` of another
  /// size.
  void copy_field_to_host(std::size_t field, std::span<std::byte> dst) const;
  /// Each part's Frame::verify(); empty when all are intact, otherwise the first problem, naming
  /// the part.
  [[nodiscard]] std::optional<std::string> verify() const;

 private:
  friend class Group;
  FrameGroup(std::shared_ptr<const detail::GroupLayout> layout, std::vector<Frame> frames, std::uint64_t step) noexcept;
  std::shared_ptr<const detail::GroupLayout> layout_;
  std::vector<Frame> frames_;
  std::uint64_t step_ = 0;
};

/// An attachment to every part of a publisher decomposed into parts (an MPI run; docs/protocol.md
/// "Parts"): one Client per part, and frames of one step from all of them at once (next()).
/// Attached to the name of a whole publisher, it is a group of one part (decomposed() false,
/// part_desc(0) covering the whole grid, next() returning that publisher's frames), so that a
/// caller can always use a Group. Steer the run through leader() (part 0: its program hands every
/// request to all parts at one step; the other parts refuse steering). Move-only. next() is for one thread at a time; the control calls may
/// run on other threads, as a Client's do. Destroying it detaches from every part.
class Group {
 public:
  /// Attaches part 0 of `options.name`, learns the number of parts and the run's group id from
  /// it, then the other parts at once (in parallel). A part that is not running yet, or that is
  /// from another run (another group id) is retried until `options.timeout` passes; then this
  /// throws Error naming the part ("part 2 of 'flow' is from another run ..."). `options.part`
  /// is ignored. Throws as Client::attach does otherwise (no_daemon, version_mismatch, ...).
  /// With `options.remote` set it is attach_remote(options, {options.remote}).
  static Group attach(const AttachOptions& options);
  /// Attaches through the cuview-gateways of the hosts the run is on (`gateways`: one URL per
  /// host, as AttachOptions::remote takes; any order). Each gateway lists the parts on its host
  /// ("NAME/part-K", docs/remote.md); part 0 says how many parts the run has, and each part is
  /// attached through the gateway that serves it. A whole publisher named so on one of them is a
  /// group of one part. Throws Error(no_daemon) naming the parts no gateway serves and what to add,
  /// Error(bad_value) when two gateways serve one part; otherwise as Client::attach does.
  static Group attach_remote(const AttachOptions& options, const std::vector<std::string>& gateways);

  Group(Group&&) noexcept;
  Group& operator=(Group&&) noexcept;
  ~Group();

  [[nodiscard]] const std::string& name() const noexcept;
  /// False when the name is a whole publisher (a group of one part).
  [[nodiscard]] bool decomposed() const noexcept;
  [[nodiscard]] std::size_t size() const noexcept;
  /// One Client per part, in part order.
  [[nodiscard]] const std::vector<Client>& parts() const noexcept;
  /// Part k's Client (its description, stats; steering other than through part 0 is refused by
  /// the part). Throws Error(out_of_range).
  [[nodiscard]] Client& part(std::size_t k);
  /// Part 0, which takes the run's steering.
  [[nodiscard]] Client& leader();
  /// Where part k's block lies in the global grid (for a whole publisher: all of it, offset 0,
  /// count 1, rank -1). Throws Error(out_of_range).
  [[nodiscard]] const proto::PartDesc& part_desc(std::size_t k) const;
  /// The run's group id (for a whole publisher: its session).
  [[nodiscard]] const std::string& group_id() const noexcept;
  [[nodiscard]] std::uint32_t global_width() const noexcept;
  [[nodiscard]] std::uint32_t global_height() const noexcept;

  /// Waits for a step newer than the last group returned that every part offers, and holds that
  /// step's frame in every part: the newest such step (a part that skipped a frame because its
  /// slots were held makes the group take an older step all parts still have). Empty on timeout.
  /// Never makes a publisher wait. Throws Error(daemon_gone), naming the part, its rank, pid and
  /// host and its reason, within ~100 ms of any part's publisher going away; Error(not_attached |
  /// unsupported) for a control-only or remote attachment.
  [[nodiscard]] std::optional<FrameGroup> next(std::chrono::milliseconds timeout);
  /// Whether the group goes through gateways (attach_remote): views (watch, next_view), no frames.
  [[nodiscard]] bool remote() const noexcept;
  /// Remote: from now on every part's gateway sends views of `watch`, a region of the global grid
  /// (each part sends the samples of its own block). Throws as Client::watch does.
  void watch(const ViewWatch& watch);
  /// Remote: the newest view of the whole region into `out`, assembled from every part's view of
  /// one step (the newest step all parts have sent since the last one returned: never blocks of two
  /// steps side by side); waits at most `timeout`, false when none came. Its header is part 0's,
  /// with error_bound the largest and lo, hi the range over all parts, link_bytes_per_s the
  /// slowest gateway's. Throws Error(daemon_gone) naming the part that went; Error(not_attached)
  /// before watch().
  [[nodiscard]] bool next_view(RemoteView& out, std::chrono::milliseconds timeout);
  /// True while every part's publisher runs and has not shut down.
  [[nodiscard]] bool alive() const noexcept;
  /// Empty while alive(); otherwise which part went and why: "part 1 of 'flow' (rank 1, pid 4711
  /// on host-b) shut down: rank 1 failed", with the reason the part said as it went, if it did.
  [[nodiscard]] std::optional<std::string> gone_reason() const;

  /// Every part's stats, in part order.
  [[nodiscard]] std::vector<proto::Stats> stats();
  /// Detaches from every part (the destructor does it).
  void detach() noexcept;

 private:
  struct Impl;
  explicit Group(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Whether a daemon is running under `name` right now (its lock is held).
bool daemon_running(const std::string& name);

/// A connection to the cuview-gateway of another host, to list what runs there (attach to one
/// with AttachOptions::remote). Move-only; one thread at a time.
class RemoteHost {
 public:
  /// Connects and says hello. Throws as Client::attach does for a remote.
  static RemoteHost connect(const std::string& url, const std::string& client = "cuview client",
                            std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
  RemoteHost(RemoteHost&&) noexcept;
  RemoteHost& operator=(RemoteHost&&) noexcept;
  ~RemoteHost();
  [[nodiscard]] const remote::HelloResult& hello() const noexcept;
  /// The publishers running on that host now. Throws Error(daemon_gone) when the gateway is gone.
  std::vector<remote::PublisherEntry> publishers();

 private:
  struct Impl;
  explicit RemoteHost(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuview
