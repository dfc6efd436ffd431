// A connection to one publisher (a whole one, or one part of a run): its hello and description,
// its frames and its steering. Two implementations behind one interface: Client, on this host,
// imports the publisher's ring and holds frames zero-copy; RemoteClient goes through a
// cuview-gateway and receives views, exact regions and frames fetched into host memory. Most
// programs open a whole run with cuview::open (run.hpp), which picks between them.
//
// Thread-safety: a connection may be used from any number of threads at once (control calls are
// serialised on its socket; frame waits take no lock). A Frame is used by one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuview/assembly.hpp"
#include "cuview/frame.hpp"
#include "cuview/protocol.hpp"
#include "cuview/remote_protocol.hpp"
#include "cuview/schema.hpp"

namespace cuview {

/// Whether attach imports the frame ring (a reader) or only opens the control channel.
enum class Import { frames, control_only };

/// Which publisher to attach to, and how.
struct AttachOptions {
  std::string name = "default";  ///< instance name of the publisher
  std::string client = "cuview client";
  Import import = Import::frames;
  std::chrono::milliseconds timeout{3000};  ///< for each control request
  /// RemoteClient: the cuview-gateway to reach the publisher through: ssh://[user@]host[:port],
  /// tcp://host:port[?key=KEY] or unix:PATH (docs/remote.md). Client (local) refuses one.
  std::string remote{};
  /// Part K of a publisher decomposed into parts (docs/protocol.md "Parts"); a Group attaches
  /// every part. Empty: a whole publisher (attaching a decomposed one this way is refused).
  std::optional<std::uint32_t> part{};
};

/// A rectangle of a field at full resolution, as float32: exact for a float32, float16 or uint8
/// field; a float64 or int64 field's values (and an int32's beyond 2^24) rounded to float.
struct RemoteRegion {
  std::uint64_t seq = 0, step = 0;
  double sim_time = 0;
  std::uint32_t x = 0, y = 0, w = 0, h = 0, components = 1;
  std::vector<float> values;  ///< d × h × w × components, row-major
  std::uint32_t z = 0, d = 1;  ///< a volume's box: its first layer and layers (a plane: 0 and 1)
};

namespace detail {
struct Session;
struct RunState;
struct LocalRun;
struct RemoteRun;
}

/// What every connection to a publisher does. Move-only (through its implementations). Destroying
/// it detaches (best effort). Every call leaves the calling thread's current CUDA device as it
/// found it.
class Attachment {
 public:
  virtual ~Attachment();
  Attachment(const Attachment&) = delete;
  Attachment& operator=(const Attachment&) = delete;

  [[nodiscard]] const proto::HelloResult& hello() const noexcept;
  [[nodiscard]] const proto::DescribeResult& description() const noexcept;
  [[nodiscard]] const std::string& name() const noexcept;
  /// The gateway this connection goes through (AttachOptions::remote); empty for a local one.
  [[nodiscard]] const std::string& via() const noexcept;
  /// How attaching went, phase by phase, and in total since attach began, as a daemon's start
  /// log says it: "151.5 ms (connecting 0.5 ms, hello and description 1.1 ms, handles 0.3 ms, CUDA
  /// context (begun at hello) 138.5 ms, …, until the first frame 0.1 ms, mapping slot 1 (1 of 3
  /// mapped) 10.9 ms)". The first frame's phases appear once it is taken.
  [[nodiscard]] std::string attach_phases() const;

  /// Waits for a frame newer than the last one returned; empty on timeout. Local: the publisher's
  /// slot, zero-copy. Remote: the frame's float32 fields fetched at full resolution into host
  /// memory, all of one frame (4 bytes per value of every field, zstd-compressed, over the link;
  /// fields of other types and particles are absent: host_field() is null for them). Throws
  /// Error(daemon_gone) within ~100 ms (local) or a second (remote) of the publisher going away.
  [[nodiscard]] virtual std::optional<Frame> next_frame(std::chrono::milliseconds timeout) = 0;

  /// Asks the publisher for pictures of a volume field seen as `view` says, cast where the data is
  /// from every cell (protocol 10, `render`), and returns the newest one of that view: `pending`
  /// until a frame brings one (ask again after the next frame). Throws Error(unsupported) for a
  /// field that is not a float32 volume; Error(bad_value |
  /// out_of_range) naming a wrong argument; Error(bad_message) from a publisher of protocol 9 or
  /// older (it does not know the op). Remote: the gateway's `picture` op, the colours
  /// compressed losslessly, the values in u16 (within a 65 535th of the picture's range of
  /// values); asking again for a picture already held costs the link nothing. Error(unsupported)
  /// from a gateway of remote protocol 2 or older.
  [[nodiscard]] virtual proto::RenderResult render(const proto::RenderArgs& view) = 0;

  /// True while the publisher runs and has not shut down.
  [[nodiscard]] bool daemon_alive() const noexcept;
  /// Seconds since the publisher's last loop turn (large when it is frozen); 0 when not known here
  /// (remote, control-only).
  [[nodiscard]] double daemon_silence_s() const noexcept;

  // Control. Each throws Error with the publisher's code and message when it refuses.
  [[nodiscard]] proto::Stats stats();
  void pause();
  void resume();
  void step(std::uint64_t n);
  void set(const std::map<std::string, double>& params, const std::optional<std::string>& preset = {});
  void reset();
  /// Draws (value 1) or erases (0) a disc in one of the publisher's inputs (description().inputs).
  void draw(const Stroke& stroke);
  /// Asks the publisher to write a checkpoint (to `path`, absolute; else into its checkpoint
  /// directory) and returns its ticket. Throws Error(unsupported) when it writes none.
  std::uint64_t checkpoint(const std::string& path = {});
  /// Waits until the checkpoint of `ticket` is written and returns the publisher's checkpoint
  /// status (its path, step, sizes and times). Throws Error(system) with the publisher's reason
  /// when the write failed, Error(timeout) when it takes longer than `timeout`.
  proto::CheckpointStatus wait_checkpoint(std::uint64_t ticket, std::chrono::milliseconds timeout);
  void shutdown();
  /// Sends `op` with `args` as they are (a MessagePack map) and returns the publisher's reply, whose
  /// `result` is the publisher's result: for a gateway forwarding requests it did not make. Throws
  /// as the typed calls do, with the publisher's code and message.
  proto::Reply forward(proto::Op op, const msgpack::object& args);
  /// Tells the publisher this client is leaving; later frame waits throw. Called by the destructor.
  void detach() noexcept;

 protected:
  friend struct detail::RunState;
  explicit Attachment(std::unique_ptr<detail::Session> session);
  Attachment(Attachment&&) noexcept;
  Attachment& operator=(Attachment&&) noexcept;
  std::unique_ptr<detail::Session> session_;
};

/// A connection to a publisher on this host: it imports the frame ring, and its frames are the
/// publisher's own slots (host shared memory, or GPU memory through CUDA IPC). Move-only.
class Client final : public Attachment {
 public:
  /// Connects, says hello, describes and imports the ring. Throws Error: no_daemon (nothing runs
  /// under that name), version_mismatch, timeout, access, cuda, bad_value (a name that runs as
  /// parts: open it as a run; or a `remote` in the options: use RemoteClient), ...
  static Client attach(const AttachOptions& options);

  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  ~Client() override;

  /// How the ring reached this process: "shm", "legacy", "vmm" or "pool"; empty when control-only.
  [[nodiscard]] const std::string& sharing() const noexcept;
  [[nodiscard]] proto::RenderResult render(const proto::RenderArgs& view) override;
  /// How many of the ring's slots this process has mapped. A slot is mapped when the first frame
  /// in it is taken, so a client that takes one frame maps one slot (vmm maps its one allocation,
  /// every slot, at the first).
  [[nodiscard]] std::uint32_t mapped_slots() const;
  [[nodiscard]] std::optional<Frame> next_frame(std::chrono::milliseconds timeout) override;
  /// The oldest frame the ring still offers whose step is at least `min_step`, held (whatever
  /// next_frame returned before); empty when there is none now. For a reader that must show one
  /// given step of several publishers (a gateway serving a run of parts). Throws as next_frame.
  [[nodiscard]] std::optional<Frame> frame_from_step(std::uint64_t min_step);
  /// Reads only these fields (a particle set's name: all its attributes) from now on: the
  /// publisher copies into a frame only what some reader reads, so a viewer of one field of five
  /// costs the run a fifth. Empty: every field (the default). The publisher's next frame holds
  /// them; next_frame() and frame_from_step() skip frames published before that lack one. Throws
  /// Error(bad_value) naming a field the publisher lacks and listing those it has.
  void read_fields(const std::vector<std::string>& names);
  /// The blocks read_fields() asked for (has_block(); 0: every one).
  [[nodiscard]] std::uint64_t reads() const noexcept;
  /// Also takes frames of every k-th cell of a 3-D grid from now on (k >= 2; 1: whole frames
  /// only, the default): a volume view that draws a brick of every k-th cell. When every reader
  /// of the publisher takes the same k and its writer can, the publisher writes only those cells,
  /// packed (Frame::every): a k³-th of the cost and of the copy. next_frame() and
  /// frame_from_step() then skip frames of another k.
  void read_every(std::uint32_t k);
  /// What read_every() asked for (1: whole frames only).
  [[nodiscard]] std::uint32_t every() const noexcept;

 private:
  friend class Group;
  friend struct detail::LocalRun;
  explicit Client(std::unique_ptr<detail::Session> session);
  /// For Group, which picks frames across parts itself: this attachment's ring, after the checks
  /// next_frame() makes (`call` names the caller in their errors).
  [[nodiscard]] const RingReader& frame_ring(std::string_view call) const;
};

/// A connection to a publisher on another host, through its cuview-gateway (docs/remote.md):
/// views fitted to the link, exact regions, frames fetched whole, and every control call as
/// locally. Move-only.
class RemoteClient final : public Attachment {
 public:
  /// Connects to the gateway at `options.remote`, says hello to the publisher through it and
  /// describes it. Throws Error: no_daemon, access (a gateway that refused this client, or whose
  /// key does not match the pinned one), timeout, ...
  static RemoteClient attach(const AttachOptions& options);

  RemoteClient(RemoteClient&&) noexcept;
  RemoteClient& operator=(RemoteClient&&) noexcept;
  ~RemoteClient() override;

  [[nodiscard]] std::optional<Frame> next_frame(std::chrono::milliseconds timeout) override;
  /// From now on the gateway sends views of `watch` (replacing an earlier one). Throws
  /// Error(bad_value) naming an unknown field or encoding.
  void watch(const ViewWatch& watch);
  /// The newest view into `out` (its buffers reused), waiting at most `timeout`; false when none
  /// came. Throws Error(daemon_gone) within a second of the publisher, the gateway or the link
  /// going away; Error(bad_message) for a view that does not decode.
  [[nodiscard]] bool next_view(RemoteView& out, std::chrono::milliseconds timeout);
  [[nodiscard]] proto::RenderResult render(const proto::RenderArgs& view) override;
  /// The block `box` of `field`'s grid (offset and dims slowest axis first, as many axes as the
  /// grid's: {y, x} and {h, w} of a plane, {z, y, x} and {d, h, w} of a volume) in the newest frame
  /// (RemoteRegion: how exact). Throws Error(bad_value | out_of_range) naming the field or the box.
  RemoteRegion fetch(const std::string& field, const Block& box);

 private:
  friend class RemoteGroup;
  friend struct detail::RemoteRun;
  explicit RemoteClient(std::unique_ptr<detail::Session> session);
  /// Which frame a fetch reads: the newest; exactly `seq` (as an earlier fetch answered; refused
  /// with out_of_range once the gateway holds another); or the first at or after `from_step`.
  struct FrameChoice {
    std::optional<std::uint64_t> seq, from_step;
  };
  /// The box's values converted to float, or with `raw_values` their bytes (the field's dtype,
  /// as the gateway sent them) moved there instead.
  RemoteRegion fetch_of(const std::string& field, const Block& box, FrameChoice which,
                        std::vector<std::byte>* raw_values = nullptr);
  /// One cell of the frame `which` chooses (of its first float32 field, or its first field): its
  /// seq and step.
  RemoteRegion probe(FrameChoice which);
  /// The newest frame's probe once it is newer than `after` (a seq, or a step with `by_step`),
  /// probing every 50 ms; empty at `deadline`.
  std::optional<RemoteRegion> probe_newer(std::optional<std::uint64_t> after, bool by_step,
                                          std::chrono::steady_clock::time_point deadline);
  /// Every grid field of the frame `probe` found, whole, in its dtype (FrameInfo::fields: those a
  /// gateway from before float64 and int64 fetched: its float32 ones); empty when the gateway
  /// moved on to another frame meanwhile (ask again).
  std::optional<Frame> fetch_frame(const RemoteRegion& probe);
  /// next_view() without placing a part's samples in the whole view (`out.view.values` holds
  /// header.rect's samples only when the header has a rect); with `credit` false it returns no
  /// credit to the gateway (the caller does, with view_credit()).
  [[nodiscard]] bool take_view(RemoteView& out, std::chrono::milliseconds timeout, bool credit = true);
  /// watch() granting `credits` views.
  void watch_with(const ViewWatch& watch, std::uint32_t credits);
  /// One more view, after `seq`, of the first frame at or after `from_step` if given.
  void view_credit(std::uint64_t seq, std::optional<std::uint64_t> from_step);
};

/// Whether a publisher is running under `name` on this host right now (its lock, or a part's).
bool daemon_running(const std::string& name);

/// A connection to the cuview-gateway of another host, to list what runs there. Move-only; one
/// thread at a time.
class RemoteHost {
 public:
  /// Connects and says hello. Throws as RemoteClient::attach does.
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
