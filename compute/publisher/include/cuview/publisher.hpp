// The publisher: makes a program's data visible to cuview clients (cuview-gui, cuview-ctl, the
// client library) while the program runs. cuview-compute is one program built on it; a user's
// own simulation embeds it the same way (docs/sdk.md, examples/embed-wave/):
//
//   cuview::Publisher pub({.name = "wave"});
//   pub.add_field({.name = "u", .data = d_u, .bytes = n * 4, .dims = {h, w},
//                  .memory = cuview::Memory::device});
//   pub.add_param({.name = "c", .value = 0.5, .min = 0, .max = 1});
//   for (step = 0;; ++step) {
//     for (auto& [name, value] : pub.poll().params) ...;  // steering, applied where you choose
//     advance(stream);
//     pub.publish(step, t, stream);                        // never waits for a viewer
//   }
//
// Threads: the constructor claims the name; the first publish() (or start()) creates the frame
// ring and starts a background thread that answers clients (hello, describe, handles, stats, set,
// pause…). publish(), poll() and the other calls are for the program's own thread (one at a
// time); the background thread never touches the program's buffers and never calls back into it.
// Errors: every misuse throws cuview::Error naming the publisher, the field or parameter and what
// to do; nothing is published half-declared.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuview/cuda/stream_ref.hpp"
#include "cuview/error.hpp"
#include "cuview/protocol.hpp"
#include "cuview/schema.hpp"

namespace cuview {

class Executor;

/// A publisher that is one part of a grid decomposed over processes (MPI ranks): every part
/// publishes under the same name, its own block of the global grid, and clients see the parts as
/// one picture (docs/protocol.md "Parts", docs/sdk.md "Publishing from an MPI program"). The
/// block is the declared fields' grid; it must lie inside the global grid.
struct PartOptions {
  std::uint32_t index = 0, count = 1;  ///< part K of N (cuview-compute: the MPI rank and size)
  /// The block's first cell in the global grid and the global grid, slowest axis first, as many
  /// axes as the fields' grid ({y, x} and {height, width}; {z, y, x} and {depth, height, width}).
  Axes offset{}, global_dims{};
  /// The same in every part of one run, different between runs (cuview/mpi_parts.hpp makes one):
  /// clients check it to never combine parts of two runs.
  std::string group;
  int rank = -1;     ///< shown by status; -1: none
  std::string host;  ///< shown by status; empty: this host's name ($CUVIEW_HOST overrides it)
};

/// How the publisher's errors say what to do: in the words of the language the program calls it
/// from, since the fix is a call or an argument of that language. A C++ program keeps these; the C
/// API, its Fortran module and Python pass their own (cuview_publisher_create's api= option),
/// cuview-compute its command line's. Each is a phrase the message ends with, or a name in it.
struct ApiWords {
  std::string create = "cuview::Publisher";  ///< what claimed the name and took the options
  std::string rename = "give PublisherOptions::name another name";  ///< when the name is taken
  std::string declare_a_field = "declare at least one with add_field() before start() or publish()";
  std::string declare_before_start =
      "declare every field, parameter, preset and input before start() or the first publish()";
  std::string declare_preset = "declare it with add_preset() first";  ///< use_preset of an unknown one
  std::string give_data = "declare it with its data, or pass publish() a FieldWriter that writes it";
  std::string host_memory = "Memory::host", device_memory = "Memory::device";  ///< "declare it as …"
  std::string choose_device = "set PublisherOptions::device to the GPU the buffers are on";
  std::string check_part = "check PartOptions' offset and global size against the declared fields";
};

struct PublisherOptions {
  /// Instance name: clients attach with `--name NAME`. Two live publishers cannot share one.
  std::string name = "default";
  /// "auto" (CUDA where a device is usable, else the host), "cuda" or "host".
  std::string backend = "auto";
  /// How frames cross to clients: "auto" (legacy on CUDA, shared memory on the host), "legacy"
  /// (cudaIpcGetMemHandle), "vmm" (cuMemCreate, a POSIX file descriptor) or "pool" (an IPC memory
  /// pool). A mechanism this backend, GPU or driver lacks is refused by the constructor
  /// (docs/sharing.md). With "auto" on CUDA, the environment variable CUVIEW_SHARING, when set,
  /// names the mechanism instead.
  std::string sharing = "auto";
  /// CUDA device the buffers are on; -1 = the constructing thread's current device (or, when it
  /// is not usable, the first usable one). A device that does not exist is refused naming those
  /// that do; a device with the host backend is refused.
  int device = -1;
  /// What runs, shown by `cuview-ctl status` and the viewer (e.g. "wave").
  std::string title = "embedded";
  /// Ring slots: frames clients can hold at once, plus one being written (1-16).
  std::uint32_t slots = 3;
  /// Frames published per second at most; 0 = as often as publish() is called (and the budget
  /// allows).
  double max_fps = 60;
  /// The cost budget: the largest share of the run's time publishing may take, 0 < max_cost <= 1
  /// (0.01: 1 %; 1: no budget). Each frame's publishing work is timed where it runs (GPU events
  /// on the publisher's stream, or the host's clock), and the next frame waits until that work is
  /// at most this share of the time since the frame began: the frame rate adapts, never above
  /// max_fps. Frames asked for while paused, after a reset or by publish_next_now() are exempt.
  /// Why 1 %: below the run-to-run spread of a GPU simulation's speed (clocks, placement), so
  /// watching costs what cannot be told apart from not watching; a 60 Hz view of one field of a
  /// 4096² grid or of a 256³ volume still fits on a current GPU (docs/benchmarks.md).
  double max_cost = 0.01;
  /// Whether the FieldWriter given to publish() can write frames of every k-th cell
  /// (FieldTarget::every): then, when every reader of a 3-D grid takes the same k
  /// (Client::read_every — a volume view), the frame holds only those cells, a k³-th of the work.
  /// Off: frames are always whole. Parts always publish whole frames.
  bool writes_every = false;
  /// Start paused, as after `cuview-ctl pause` (for programs that honour steps_allowed()).
  bool start_paused = false;
  /// Set: this publisher is one part of a decomposed grid. Parts other than 0 refuse steering
  /// (clients steer part 0, whose program hands the requests to every part: follow()).
  std::optional<PartOptions> part{};
  /// The level of the publisher's own log lines: "trace", "debug", "info", "warn", "error" or
  /// "off"; empty: as it is (info, or what the program gave spdlog). They go to stderr through
  /// spdlog's logger "cuview", never to stdout or the program's default logger, whose level is left
  /// alone; a program that registered a logger "cuview" gets them there. The environment variable
  /// CUVIEW_LOG, when set, wins over this (to debug a program without rebuilding it). The logger
  /// is the process's: the last publisher constructed sets its level.
  std::string log{};
  /// How errors name the calls that fix them (ApiWords).
  ApiWords words{};
};

/// A grid fields lie on (add_grid): its cells along each axis and where they are in the
/// program's space. Lists are slowest axis first, one entry per axis: cell i along axis k has its
/// centre at origin[k] + i × spacing[k] (in `units`). A part's grid is its own block, origin at its
/// first cell. Each side is 1 to 32768 cells.
struct GridDecl {
  std::string name;
  std::vector<std::uint32_t> dims;
  std::vector<double> origin{};   ///< empty: 0 on every axis
  std::vector<double> spacing{};  ///< empty: 1 on every axis; each > 0
  std::string units{};            ///< of origin and spacing, e.g. "m" ("": unnamed)
  std::vector<std::string> axes{};  ///< the axes' names; empty: "z", "y", "x" (as many as the grid has)
};

/// A field: `components` values of `dtype` per cell of its grid (1: a scalar; 2 to 4: a vector,
/// or an RGBA colour; viewers show a vector as its magnitude), read from the program's buffer at
/// every published frame. Its grid is the declared grid `grid` names (add_grid), or else `dims`:
/// slowest axis first, {width}, {height, width} or {depth, height, width} (a volume, x fastest,
/// then y, then z). Fields may lie on several grids (a volume, a
/// surface, a probe line): a field without `grid` lies on the first grid declared, or on the
/// first field's `dims` when no grid is.
struct FieldDecl {
  std::string name;
  /// The program's buffer: the field's first cell. Null: the field is written by the
  /// FieldWriter given to publish() instead.
  const void* data = nullptr;
  /// The buffer's size in bytes from `data`: a contiguous field's must equal the grid's cells ×
  /// components × size; a strided field's may be 0 (unchecked) or must cover every cell.
  std::size_t bytes = 0;
  /// The field's grid, slowest first: {width}, {height, width} or {depth, height, width}. Empty:
  /// the grid `grid` names.
  Axes dims{};
  DType dtype = DType::float32;
  std::uint32_t components = 1;
  Memory memory = Memory::device;  ///< where `data` lives; checked against the pointer on CUDA
  std::string help;
  /// The name of a grid declared with add_grid; empty: the grid `dims` gives.
  std::string grid{};
  /// The buffer's layout: bytes from one cell to the next along each axis of the grid, slowest
  /// first — a section of a larger array read in place, such as the interior of an array with
  /// ghost cells (start `data` at the first interior cell). The fastest axis's is one cell's
  /// bytes (components × size: its values contiguous); each other axis's is at least the extent
  /// of the axis inside it. Empty: contiguous, C order. The publisher copies the section into the
  /// ring itself (on the GPU for device memory).
  std::vector<std::int64_t> strides{};
};

/// A set of `count` particles; each attribute is a FieldDecl whose dims are ignored and whose
/// bytes are count × components × size.
struct ParticlesDecl {
  std::string name;
  std::uint64_t count = 0;
  std::vector<FieldDecl> attributes;
  std::string help;
  std::vector<double> bounds;  ///< {x0, x1, y0, y1}: the position region the grid shows (optional)
};

/// What clients asked for since the last poll().
struct Requests {
  /// Every parameter's value when any changed since the last poll() (validated, in range);
  /// empty when none did.
  std::map<std::string, double> params;
  bool reset = false;           ///< restart from the initial state (`cuview-ctl reset`)
  std::vector<Stroke> strokes;  ///< validated edits of declared inputs, oldest first
  /// `checkpoint` requests (only after report_checkpoint() said enabled): the ticket to report, and the file
  /// (absolute; empty: the program's own choice).
  std::vector<std::pair<std::uint64_t, std::string>> checkpoints;
  bool shutdown = false;  ///< stop the program (`cuview-ctl shutdown`)
  /// A reader attached while none was reading (nothing was published meanwhile, so the ring offers
  /// it no frame until the next publish()), or a reader asked for fields the newest frame lacks.
  bool reader_arrived = false;

  /// Whether a paused program should publish now: these requests change what a frame shows
  /// (parameters, a reset, strokes), or a reader arrived and waits for its first frame. A paused
  /// program publishes after applying them, so that viewers see the change (or the run) at once:
  /// poll() has made that publish() due.
  [[nodiscard]] bool changes_frame() const noexcept {
    return !params.empty() || reset || !strokes.empty() || reader_arrived;
  }
};

/// Writes every declared field into a slot: one target per field in declaration order, then one
/// per particle attribute; queued on the stream given to publish().
using FieldWriter = std::function<void(const std::vector<FieldTarget>&)>;

class Publisher {
 public:
  /// Claims `options.name` (its runtime directory and lock) and chooses the backend. Throws
  /// Error(already_running) when a publisher or daemon of that name is running, Error(access)
  /// for a runtime directory of the wrong owner or mode, Error(cuda | bad_value) for the backend.
  explicit Publisher(PublisherOptions options);
  /// Tells attached clients the publisher is going, stops the background thread, waits for the
  /// frames queued on the GPU and frees the ring. Never throws.
  ~Publisher();
  Publisher(Publisher&&) noexcept;
  Publisher& operator=(Publisher&&) noexcept;
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  /// Declarations, before the first publish(). Each throws Error(bad_value | out_of_range)
  /// naming the field or parameter: a duplicate name, a size that does not match the shape, a
  /// grid not declared, a shape other than the first grid's for a field naming no grid, a host pointer declared as device memory (or the
  /// reverse), device memory on another GPU or on the host backend, a range that excludes the
  /// default, or a declaration after publishing began.
  void add_field(FieldDecl field);
  /// A grid fields are declared on (FieldDecl::grid). Throws Error(bad_value | out_of_range)
  /// naming the grid: a duplicate name, 0 or more than 3 axes, a side out of range, origin,
  /// spacing or axes not one per axis, a spacing that is not positive. The first grid is the
  /// run's own: fields naming no grid lie on it, and the parts of a decomposed run (Options::part)
  /// decompose it (a part refuses, at its first publish, a field on any other grid).
  void add_grid(GridDecl grid);
  /// The grid declared (add_grid) as `name`, or null.
  [[nodiscard]] const GridDecl* grid(const std::string& name) const;
  void add_particles(ParticlesDecl particles);
  void add_param(ParamSpec param);
  void add_preset(Preset preset);
  /// Something clients may draw into (`cuview-ctl draw`, the viewer's drawing tool); the program
  /// applies the strokes poll() returns.
  void add_input(InputSpec input);
  /// Starts from preset `name` instead of the defaults (before start()).
  void use_preset(const std::string& name);
  /// Starts from these parameter values (a restored checkpoint's; before start()). Throws
  /// Error(bad_value | out_of_range) naming a parameter this publisher lacks or a value out of range.
  void use_params(const std::map<std::string, double>& values);
  /// What the program's checkpoints are and did (where, how often, the last written or failed),
  /// shown by stats. With `status.enabled`, `checkpoint` requests reach poll() instead of being
  /// refused as unsupported.
  void report_checkpoint(const proto::CheckpointStatus& status);

  /// Creates the ring and starts answering clients. publish() calls it the first time.
  void start();

  /// Publishes the declared buffers as frame `step` (simulated time `sim_time`) when a client
  /// reads frames, a frame is due (max_fps and max_cost) and a slot is free: the copies into the slot, its
  /// checksum and its interprocess event are queued on `stream` (a cudaStream_t converts; after the
  /// work that wrote the buffers; `{}` is the default stream; ignored on the host, where the copy is
  /// done before it returns). While no client reads frames (holds a lease) it records the step for
  /// `stats` and copies nothing; a reader that arrives gets a frame from the next call, due or not.
  /// Never waits for a client. Returns whether a frame was published. Throws
  /// Error(bad_value) when nothing is declared or a field has no buffer, Error(cuda) when the GPU
  /// fails.
  bool publish(std::uint64_t step, double sim_time = 0, cuda::StreamRef stream = {});
  /// The same, with `write` filling the slot instead of copying the declared buffers.
  bool publish(std::uint64_t step, double sim_time, const FieldWriter& write, cuda::StreamRef stream = {});
  /// Records the program's step for stats without publishing: for parts, which publish only the
  /// steps they agreed on (cuview/mpi_parts.hpp) and call this after the other batches; and for a
  /// program that restores a checkpoint, before start(), so that no client sees an earlier step.
  /// Starts the publisher if it has not started (after storing the step).
  void record_step(std::uint64_t step, double sim_time = 0);
  /// The next publish() ignores max_fps and the cost budget (after a reset, where a `step`
  /// request ended, or a frame parts agreed on).
  void publish_next_now();

  /// Clients' requests since the last call; parameter values become the ones in effect. While
  /// paused, requests that change_frame() make the next publish() due.
  [[nodiscard]] Requests poll();
  /// The parameters in effect: the defaults (or preset) until poll() returned changes.
  [[nodiscard]] std::map<std::string, double> params() const;
  /// How many of `wanted` steps the program may take now: all of them when running; while paused
  /// (`cuview-ctl pause`), only what `step` requests allowed before the last poll(), often 0 (so a
  /// step a client asked for after a stroke never runs before poll() hands over the stroke).
  /// Programs that honour pause call poll(), then this, before each batch, and
  /// wait_for_requests() when it returns 0.
  [[nodiscard]] std::uint64_t steps_allowed(std::uint64_t wanted);
  [[nodiscard]] bool paused() const;
  /// Blocks until a client sends a request or `timeout` passes.
  void wait_for_requests(std::chrono::milliseconds timeout);

  /// Parts: whether this part wants a frame now (a client reads, and a frame period has passed or
  /// a frame was asked for), and whether its cost budget lets one start. Parts agree on both —
  /// any part wanting one, every part within its budget — so that every part publishes the same
  /// steps and none exceeds its budget; then each calls publish_next_now() and publish().
  [[nodiscard]] bool frame_wanted() const;
  [[nodiscard]] bool within_budget();
  /// Parts other than 0: adopt what part 0's poll() returned (the parameters in effect) and its
  /// paused state, so that this part's stats and describe say what the run does.
  void follow(const Requests& leader, bool paused);
  /// Sets PublisherOptions::writes_every, for a program that learns what its writer can only
  /// after constructing the publisher (cuview-compute: once the simulation is made).
  void set_writes_every(bool can);
  /// Any thread, async-signal-unsafe but lock-free for the ring: tells attached clients this
  /// publisher is gone for `reason` (its ring says shut down, a `bye` is queued) without waiting
  /// for the program's thread, which may be stuck (a dead peer rank in a collective). Then the
  /// process should end; nothing else is safe to call.
  void abandon(const std::string& reason) noexcept;

  /// Stops answering and tells attached clients why (shown by viewers and `cuview-ctl`):
  /// "shutdown", or the failure that ended the program. The destructor says "shutdown".
  void close(const std::string& reason = "shutdown") noexcept;

  /// Where the data lives: "cuda" or "host", and the device in words.
  [[nodiscard]] std::string backend() const;
  [[nodiscard]] std::string device() const;
  [[nodiscard]] const std::string& name() const;
  /// The executor the publisher writes with; cuview-compute makes its Simulation on it.
  [[nodiscard]] Executor& executor() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace cuview
