// cuview's wire protocol, version 7 (stable: later versions only add): every message, its fields and their types, in one place.
// docs/protocol.md is the prose form of this header. Encoding is MessagePack (msgpack-cxx):
// each message is one map; decoding is strict (unknown keys, missing keys and wrong types are
// errors naming the field).
#pragma once

#include <cstdint>
#include <array>
#include <functional>
#include <map>
#include <msgpack.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cuview/error.hpp"
#include "cuview/extent.hpp"
#include "cuview/schema.hpp"

namespace cuview::proto {

/// The version this code speaks. From kFirstStable on the protocol only grows, as X11's and
/// HTTP/2's do: a later version adds ops, keys, error codes and control-block words, and changes
/// nothing an earlier one defined. A publisher serves a client of any version from kFirstStable to
/// kVersion with that version's meaning — it answers in the request's `v` and leaves out every key
/// added after it (kAddedKeys) — and a client newer than the publisher says `hello` in its own
/// version and hears the version of the session (`HelloResult::protocol`). The envelopes (`v`,
/// `id`, `ok`, `error`) never change, so a refusal always reaches a client of any version.
inline constexpr std::uint32_t kVersion = 11;
inline constexpr std::uint32_t kFirstStable = 7;

/// What each version before kFirstStable lacked, for the refusal of a client that speaks it.
struct VersionChange {
  std::uint32_t version;
  std::string_view added;
};
inline constexpr VersionChange kVersionChanges[] = {
    {2, "dtypes, vector fields and particle sets"},
    {3, "sharing mechanisms and the descriptor socket"},
    {4, "runs of parts and the withdrawn frame (slot 0xff)"},
    {5, "grids of 1-3 axes (describe.dims)"},
    {6, "the control block's layout 2 (only what is read is copied)"},
    {7, "the control block's layout 3 (frames of every k-th cell)"},
};

/// A key that a version after kFirstStable added to an op's result: `path` names it from the
/// result's root ("fields[].origin": `[]` steps into each element of an array), and a client of an
/// earlier version is answered without it. Every such key is listed here when it is added.
struct KeyAddition {
  std::string_view op;
  std::string_view path;
  std::uint32_t version;
};
inline constexpr std::array<KeyAddition, 5> kAddedKeys{{
    {"describe", "grids", 8},                         // the grids and their coordinates
    {"describe", "fields[].grid", 8},                 // the grid a field lies on
    {"describe", "particles[].attributes[].grid", 8}, // (empty: an attribute lies on no grid)
    {"stats", "pictures", 10},                        // pictures cast for `render`
    {"stats", "picture_ms", 10},                      // the newest one's GPU (or CPU) time
}};
/// A key a version after kFirstStable added to an op's arguments: a client leaves it out of a
/// request to a publisher of an earlier version (which would refuse it as unknown_field), and
/// never asks there for what it means.
inline constexpr std::array<KeyAddition, 2> kAddedArgs{{
    {"render", "axis", 11},   // mode "plane": the plane of a volume
    {"render", "index", 11},
}};
/// The version a session with a client that speaks `client_version` speaks: the lower of the two.
constexpr std::uint32_t session_version(std::uint64_t client_version) {
  return client_version < kVersion ? static_cast<std::uint32_t>(client_version) : kVersion;
}
/// Requests larger than this are answered with bad_message; larger than kMaxWireBytes the
/// connection is dropped by ZeroMQ before the daemon allocates it.
inline constexpr std::size_t kMaxRequestBytes = 64 * 1024;
inline constexpr std::int64_t kMaxWireBytes = 1024 * 1024;

// ---- request arguments (client → daemon) ----

/// For ops that take no arguments: an empty map (or no `args` at all).
struct NoArgs {
  template <class Packer>
  void msgpack_pack(Packer& pk) const {
    pk.pack_map(0);
  }
  void msgpack_unpack(const msgpack::object&) {}
};

struct HelloArgs {
  std::string client;    ///< free text shown in logs, e.g. "cuview-ctl attach"
  std::int32_t pid = 0;  ///< the client's pid: its exit releases everything it held
  MSGPACK_DEFINE_MAP(client, pid);
};

struct StepArgs {
  std::uint64_t n = 0;  ///< steps to advance while paused, 1..1000000
  MSGPACK_DEFINE_MAP(n);
};

struct SetArgs {
  std::optional<std::map<std::string, double>> params;  ///< name → value, each checked against its range
  std::optional<std::string> preset;                    ///< applied before `params`
  MSGPACK_DEFINE_MAP(params, preset);
};

/// One stroke into a declared input (`describe.inputs`): a disc of `radius` cells at (x, y) set to
/// `value` (1 draws, 0 erases).
struct DrawArgs {
  std::string input;
  double x = 0, y = 0, radius = 1;
  std::int32_t value = 1;
  std::optional<double> z;  ///< a volume's (3 axes): the centre's z, and the disc is a ball (protocol 5)
  MSGPACK_DEFINE_MAP(input, x, y, radius, value, z);
};

/// `checkpoint`: write the simulation's state now. `path` (absolute) names the file; without it
/// the daemon writes into its checkpoint directory.
struct CheckpointArgs {
  std::optional<std::string> path;
  MSGPACK_DEFINE_MAP(path);
};

// ---- results (daemon → client) ----

/// `checkpoint`'s answer: the request is queued; `stats.checkpoint.answered` reaches `ticket`
/// when it is written (or failed: then `error_ticket` is `ticket`).
struct CheckpointResult {
  std::uint64_t ticket = 0;
  MSGPACK_DEFINE_MAP(ticket);
};

/// The daemon's checkpoints, in `stats`.
struct CheckpointStatus {
  bool enabled = false;        ///< whether this publisher writes checkpoints at all
  std::string dir;             ///< where periodic and unnamed ones go
  double every_s = 0;          ///< the period; 0: on request and at exit only
  std::uint64_t written = 0;   ///< checkpoints written since start
  std::uint64_t answered = 0;  ///< the last `checkpoint` ticket answered (written or failed)
  std::string path;            ///< the last one written ("" : none yet)
  std::uint64_t step = 0;      ///< … its step and simulated time
  double sim_time = 0;
  double unix_time = 0;            ///< … when it was complete (seconds since 1970, UTC)
  std::uint64_t bytes = 0;         ///< … the state's size
  double stall_ms = 0;             ///< … how long the simulation waited (the copy to host memory)
  double write_ms = 0;             ///< … how long the writer thread took for the file
  std::string error;               ///< the last failure ("" : none)
  std::uint64_t error_ticket = 0;  ///< … the ticket it answered (0: a periodic one)
  MSGPACK_DEFINE_MAP(enabled, dir, every_s, written, answered, path, step, sim_time, unix_time, bytes, stall_ms,
                     write_ms, error, error_ticket);
};

struct HelloResult {
  std::string session;         ///< changes on every daemon start
  std::uint32_t protocol = 0;  ///< the session's version: the lower of the client's (its `v`) and the daemon's
  std::string daemon_version;
  std::string name;
  std::int32_t daemon_pid = 0;
  std::string backend;  ///< "cuda" | "host"
  MSGPACK_DEFINE_MAP(session, protocol, daemon_version, name, daemon_pid, backend);
};

/// One field in every slot, laid out like a C-contiguous NumPy array of `shape` and `dtype`.
struct FieldDesc {
  std::string name;
  std::string dtype;                   ///< a DType's name (schema.hpp): "float32" … "int64"
  std::uint32_t components = 1;        ///< values per cell: 1 (scalar), 2 or 3 (vector)
  std::vector<std::uint32_t> shape;    ///< the grid's dims (slowest first), then components when > 1
  std::vector<std::uint64_t> strides;  ///< bytes, one per dimension of `shape`
  std::uint64_t offset = 0;            ///< bytes from the start of a slot (a multiple of 256)
  std::uint64_t bytes = 0;             ///< bytes of data, rounded up to whole 32-bit words
  std::string help;
  std::string grid;  ///< the grid it lies on (DescribeResult::grids; version 8); a particle attribute's: empty
  MSGPACK_DEFINE_MAP(name, dtype, components, shape, strides, offset, bytes, help, grid);
};

/// A grid fields lie on (version 8): its cells along each axis and where they are in the
/// program's space. Every list is slowest axis first, one entry per axis: cell i along axis k
/// has its centre at origin[k] + i × spacing[k], in `units`. A part's grid is its block, origin at
/// its own first cell.
struct GridDesc {
  std::string name;
  std::vector<std::uint32_t> dims;
  std::vector<double> origin, spacing;
  std::vector<std::string> axes;  ///< the axes' names: {"z", "y", "x"} unless the program named them
  std::string units;              ///< of origin and spacing ("" : the program's own, unnamed)
  bool operator==(const GridDesc&) const = default;
  MSGPACK_DEFINE_MAP(name, dims, origin, spacing, axes, units);
};

struct ParamDesc {
  std::string name;
  double value = 0, min = 0, max = 0;
  bool integer = false;
  std::string help;
  MSGPACK_DEFINE_MAP(name, value, min, max, integer, help);
};

struct InputDesc {
  std::string name;
  std::string kind;  ///< "mask": one 0/1 value per grid cell; "points": strokes place (1) or remove (0) particles
  std::string help;
  MSGPACK_DEFINE_MAP(name, kind, help);
};

struct PresetDesc {
  std::string name;
  std::map<std::string, double> values;
  MSGPACK_DEFINE_MAP(name, values);
};

/// A set of `count` particles: each attribute an array of `count` values (`shape` {count}) or
/// vectors ({count, components}) in every slot, after the fields.
struct ParticleSetDesc {
  std::string name;
  std::uint64_t count = 0;
  std::vector<FieldDesc> attributes;
  std::string help;
  /// {x0, x1, y0, y1}: the region of position space the grid shows (x0 at the grid's left edge, y0
  /// at its top), so particles and fields overlay and strokes land where they are drawn; empty
  /// when the set has no such region.
  std::vector<double> bounds;
  MSGPACK_DEFINE_MAP(name, count, attributes, help, bounds);
};

/// The size of axis `k` counted from the fastest as protocol 7 repeats it beside `dims` (the keys
/// `width`, `height`, `global_width`, `global_height`): 1 past the grid's rank, 0 for no grid.
/// Messages hold `dims` alone and derive these as they are packed; a decoder reads and drops them.
[[nodiscard]] inline std::uint32_t wire_size(const Axes& dims, std::size_t k) noexcept {
  return dims.empty() ? 0 : axis_from_fastest(dims, k);
}

/// The msgpack functions (as MSGPACK_DEFINE_MAP's) of a message that holds `dims` alone and whose
/// wire form also has protocol 7's `width` and `height`, packed as wire_size(dims, 0) and (dims, 1).
/// The message's static `wire(self, width, height)` lists every key in order (make_define_map). A
/// peer that sent `width` and `height` without `dims` (a gateway of remote protocol 1) is read as
/// the 2-D grid {height, width}.
#define CUVIEW_MSGPACK_WITH_SIZES                                                                          \
  template <class Packer>                                                                                  \
  void msgpack_pack(Packer& pk) const {                                                                    \
    std::uint32_t w = ::cuview::proto::wire_size(dims, 0), h = ::cuview::proto::wire_size(dims, 1);        \
    wire(*this, w, h).msgpack_pack(pk);                                                                    \
  }                                                                                                        \
  void msgpack_unpack(const msgpack::object& o) {                                                          \
    std::uint32_t w = 0, h = 0;                                                                            \
    wire(*this, w, h).msgpack_unpack(o);                                                                   \
    if (dims.empty() && w > 0 && h > 0) dims = {h, w};                                                     \
  }                                                                                                        \
  template <class Object>                                                                                  \
  void msgpack_object(Object* o, msgpack::zone& z) const {                                                 \
    std::uint32_t w = ::cuview::proto::wire_size(dims, 0), h = ::cuview::proto::wire_size(dims, 1);        \
    wire(*this, w, h).msgpack_object(o, z);                                                                \
  }

/// Where a part of a decomposed publisher sits (docs/protocol.md "Parts"): part `index` of
/// `count`, whose grid (DescribeResult::dims) is the block of the global grid (global_dims) that
/// starts at cell `offset`, both slowest axis first. Absent (nil) for a whole publisher. On the
/// wire `offset_x`, `offset_y`, `global_width` and `global_height` repeat the two fastest axes
/// (protocol 7), packed from `offset` and `global_dims`.
struct PartDesc {
  std::uint32_t index = 0, count = 1;
  std::string group;   ///< the same in every part of one run (chosen by part 0); differs between runs
  std::int32_t rank = -1;  ///< the MPI rank (or the program's own numbering), -1 when none
  std::string host;    ///< where the part runs (its hostname)
  Axes offset, global_dims;  ///< slowest axis first, as many as DescribeResult::dims
  bool operator==(const PartDesc&) const = default;
  /// The block of the global grid this part holds, given its own grid's `dims`.
  [[nodiscard]] Block block(const Axes& dims) const { return Block{offset, dims}; }

 private:
  template <class Self, class U>
  static auto wire(Self& s, U& x, U& y, U& w, U& h) {
    return msgpack::type::make_define_map("index", s.index, "count", s.count, "offset_x", x, "offset_y", y,
                                          "global_width", w, "global_height", h, "group", s.group, "rank", s.rank,
                                          "host", s.host, "offset", s.offset, "global_dims", s.global_dims);
  }

 public:
  template <class Packer>
  void msgpack_pack(Packer& pk) const {
    std::uint32_t x = axis_from_fastest(offset, 0, 0), y = axis_from_fastest(offset, 1, 0),
                  w = wire_size(global_dims, 0), h = wire_size(global_dims, 1);
    wire(*this, x, y, w, h).msgpack_pack(pk);
  }
  void msgpack_unpack(const msgpack::object& o) {
    std::uint32_t x = 0, y = 0, w = 0, h = 0;  // protocol 7's repetition: read and dropped
    wire(*this, x, y, w, h).msgpack_unpack(o);
  }
  template <class Object>
  void msgpack_object(Object* o, msgpack::zone& z) const {
    std::uint32_t x = axis_from_fastest(offset, 0, 0), y = axis_from_fastest(offset, 1, 0),
                  w = wire_size(global_dims, 0), h = wire_size(global_dims, 1);
    wire(*this, x, y, w, h).msgpack_object(o, z);
  }
};

struct DescribeResult {
  std::string session, backend, device, sim;
  std::uint32_t slots = 0;
  /// The grid's axes, slowest first: {width}, {height, width} or {depth, height, width}. On the
  /// wire `width` and `height` repeat its two fastest axes (protocol 7), packed from it.
  Axes dims;
  std::uint64_t slot_bytes = 0, trailer_offset = 0;
  std::vector<FieldDesc> fields;
  std::vector<ParticleSetDesc> particles;
  std::vector<ParamDesc> params;
  std::vector<PresetDesc> presets;
  std::vector<InputDesc> inputs;
  std::optional<PartDesc> part;  ///< set by a part of a decomposed publisher
  /// The grids the fields lie on (version 8; a client of version 7 reads `dims` alone). The
  /// first is `dims`'s, the one a run of parts decomposes; a field names its own (FieldDesc::grid).
  std::vector<GridDesc> grids;
  /// The extent of the run's first grid (`dims`): this publisher's own block when it is a part.
  [[nodiscard]] Extent extent() const { return Extent{dims}; }
  /// The dims of the whole run this publisher belongs to: a part's global grid, else `dims`.
  [[nodiscard]] Axes run_dims() const { return part ? part->global_dims : dims; }
  /// The grid field `f` lies on: grids' entry of its name, or one of `dims` with unit spacing
  /// from the origin when the publisher named none (version 7).
  [[nodiscard]] GridDesc grid_of(const FieldDesc& f) const;
  /// This description as a view of field `index` works in it: `dims` is that of the grid the
  /// field lies on (a run's fields may lie on several grids; `dims` is the first's). A particle
  /// set's index, or a field on the first grid: the description as it is.
  [[nodiscard]] DescribeResult for_field(std::size_t index) const;
  /// for_field of the field named `name` (a name of none: the description as it is).
  [[nodiscard]] DescribeResult for_field(const std::string& name) const;

 private:
  template <class Self, class U>
  static auto wire(Self& s, U& w, U& h) {
    return msgpack::type::make_define_map(
        "session", s.session, "backend", s.backend, "device", s.device, "sim", s.sim, "width", w, "height", h, "dims",
        s.dims, "slots", s.slots, "slot_bytes", s.slot_bytes, "trailer_offset", s.trailer_offset, "fields", s.fields,
        "particles", s.particles, "params", s.params, "presets", s.presets, "inputs", s.inputs, "part", s.part,
        "grids", s.grids);
  }

 public:
  CUVIEW_MSGPACK_WITH_SIZES
};

/// What a client of `version` could not read in `d` — a field of a dtype added after that version
/// (DTypeTraits::since), named with what to do — or "" when it reads all of it. A publisher
/// refuses such a client's describe with version_mismatch and this message.
std::string unreadable_for_version(const DescribeResult& d, std::uint32_t version);

/// The blocks of a slot (fields in order, then every particle attribute: has_block() numbering)
/// that `names` denote — a field's name, or a particle set's for all its attributes; empty: every
/// block (0). Throws Error(bad_value) naming a name `d` lacks (`who`: the publisher, for the
/// message) and listing the names it has.
std::uint64_t blocks_named(const DescribeResult& d, const std::vector<std::string>& names, const std::string& who);

/// Field `f` as a frame of every `every`-th cell holds it (Frame::every, docs/protocol.md "Frames
/// of every k-th cell"): a grid of ceil(n/k) cells along each of its axes, packed from the same
/// offset (shape, strides and bytes changed). every <= 1: `f` itself.
FieldDesc packed_field(const FieldDesc& f, std::uint32_t every);

/// One ring slot; what `memory` and `offset` mean depends on HandlesResult::sharing:
///  shm:    `memory` empty; the slot is at `offset` in `data_shm`.
///  legacy: `memory` is the cudaIpcMemHandle_t (64 bytes) of the slot's own allocation; offset 0.
///  vmm:    `memory` empty; the slot is at `offset` in the one exported allocation (descriptor 0).
///  pool:   `memory` is the cudaMemPoolPtrExportData (64 bytes) of the slot's allocation in the
///          exported pool (descriptor 0); offset 0.
/// On CUDA `event` is the cudaIpcEventHandle_t (64 bytes) of the slot's interprocess event.
struct SlotHandle {
  std::vector<char> memory;
  std::vector<char> event;
  std::uint64_t offset = 0;
  MSGPACK_DEFINE_MAP(memory, event, offset);
};

struct HandlesResult {
  std::string backend;
  std::string sharing;                   ///< "shm" (host), "legacy", "vmm" or "pool" (CUDA)
  std::string control_shm;               ///< POSIX shm name of the ring's control block (both backends)
  std::uint32_t lease = 0;               ///< this client's row in the control block's lease table
  std::string data_shm;                  ///< shm: the slots' segment; empty otherwise
  std::string device_pci;                ///< CUDA: PCI bus id of the daemon's GPU; empty on host
  std::uint64_t allocation_bytes = 0;    ///< vmm: size of the exported allocation (a multiple of its granularity)
  std::uint32_t fds = 0;                 ///< descriptors to fetch from `fd_socket` (vmm and pool: 1)
  std::string fd_socket;                 ///< path of the descriptor socket (SOCK_SEQPACKET)
  std::string fd_token;                  ///< proves to `fd_socket` that this client said hello
  std::vector<std::int32_t> fd_numbers;  ///< the daemon's own numbers of those descriptors (pidfd_getfd)
  std::vector<SlotHandle> slots;
  MSGPACK_DEFINE_MAP(backend, sharing, control_shm, lease, data_shm, device_pci, allocation_bytes, fds, fd_socket,
                     fd_token, fd_numbers, slots);
};

// ---- the descriptor socket (fd_socket): one request, one reply with SCM_RIGHTS, then closed ----

struct FdRequest {
  std::uint32_t v = kVersion;
  std::string session;
  std::string token;  ///< HandlesResult::fd_token
  MSGPACK_DEFINE_MAP(v, session, token);
};

/// `code` empty: the reply carries `fds` descriptors, in the order of HandlesResult::fd_numbers.
/// Otherwise an Errc name and a message, and no descriptors.
struct FdReply {
  std::string code;
  std::string message;
  std::uint32_t fds = 0;
  MSGPACK_DEFINE_MAP(code, message, fds);
};

/// `render` (version 10): from now on, cast pictures of volume field `field` seen this way with
/// each frame, where the frame is (the publisher's GPU, or its CPU on the host backend), from every
/// cell the frame holds; the answer is the newest picture of exactly this view, or `pending` until
/// the next frame brings one. One view at a time per publisher: a client's request replaces the
/// one before; a publisher asked for none for 5 s stops casting. The camera and style are
/// cuview/volume_ray.hpp's; `lut` is 256 colours (0xAARRGGBB) over [lo, hi], `opacity` 256 values
/// (emission only) per cell of path.
/// `render`'s mode that shows one plane of a field as it is (version 11), beside the volume modes.
inline constexpr std::string_view kPlaneMode = "plane";
struct RenderArgs {
  std::string field;
  std::uint32_t width = 0, height = 0;
  std::string mode = "mip";  ///< mip, emission, isosurface or plane (version 11)
  double azimuth = 0, elevation = 0, zoom = 1, pan_x = 0, pan_y = 0;
  float lo = 0, hi = 1, level = 0.5f;
  double step = 0.5;
  std::vector<std::uint32_t> lut;
  std::vector<float> opacity;
  /// 0: the newest picture; else the picture of this step if the publisher still holds it (it
  /// keeps its last few a view), so that the parts of a run answer with pictures of one step.
  /// Not part of the view.
  std::uint64_t of_step = 0;
  /// Mode "plane" (version 11; optional): the plane of a volume, across "x", "y" or "z" (the
  /// default), at cell `index` along that axis (the default: the middle one). A 2-D field has one.
  std::optional<std::string> axis;
  std::optional<std::uint32_t> index;
  /// The same view (of_step aside).
  [[nodiscard]] bool same_view(const RenderArgs& o) const {
    return field == o.field && width == o.width && height == o.height && mode == o.mode && azimuth == o.azimuth &&
           elevation == o.elevation && zoom == o.zoom && pan_x == o.pan_x && pan_y == o.pan_y && lo == o.lo &&
           hi == o.hi && level == o.level && step == o.step && lut == o.lut && opacity == o.opacity &&
           axis == o.axis && index == o.index;
  }
  bool operator==(const RenderArgs&) const = default;
  MSGPACK_DEFINE_MAP(field, width, height, mode, azimuth, elevation, zoom, pan_x, pan_y, lo, hi, level, step, lut,
                     opacity, of_step, axis, index);
};
/// A picture: `argb` width × height 32-bit pixels (little-endian 0xAARRGGBB, row-major), `values`
/// as many float32 (what each pixel shows: cast_ray's meaning), of frame `seq` at `step`, cast
/// from every `every`-th cell (1: every cell) in `cast_ms` where it ran.
struct RenderResult {
  bool pending = true;  ///< no picture of this view yet: ask again after the next frame
  std::uint64_t seq = 0, step = 0;
  double sim_time = 0;
  std::int64_t stamp_ns = 0;  ///< when its frame was published (the frame notice's stamp_ns)
  std::uint32_t width = 0, height = 0, every = 1;
  double cast_ms = 0;
  std::vector<char> argb, values;
  MSGPACK_DEFINE_MAP(pending, seq, step, sim_time, stamp_ns, width, height, every, cast_ms, argb, values);
};
/// The largest reply a client decodes: a render's picture of up to 4096 × 4096.
inline constexpr std::size_t kMaxReplyBytes = std::size_t{4096} * 4096 * 8 + 4096;

struct Stats {
  std::string session, name, backend, sharing, device, sim;
  std::uint32_t slots = 0;
  Axes dims;  ///< describe's (on the wire `width` and `height` repeat its two fastest axes)
  bool paused = false;
  std::uint64_t step = 0;
  double sim_time = 0;
  std::uint64_t frames_published = 0, frames_skipped = 0;
  std::uint32_t clients = 0, readers = 0, held_slots = 0;
  double steps_per_second = 0, frames_per_second = 0;
  /// The cost budget: the share of the run's time publishing took over the last window of at
  /// least 5 s (measured), the largest share allowed (1: no budget), the frame-rate cap (0: none), and
  /// what holds the frame rate down: "budget", "fps", "readers" (every slot held) or "" (the
  /// program publishes less often than both allow).
  double cost = 0, max_cost = 1, max_fps = 0;
  std::string limited_by;
  /// Pictures cast for `render` since the start (version 10), and the newest one's time where it
  /// was cast, in ms: both inside `cost`.
  std::uint64_t pictures = 0;
  double picture_ms = 0;
  std::uint64_t rss_kib = 0;
  double uptime_s = 0;
  std::map<std::string, double> params;
  CheckpointStatus checkpoint;
  std::optional<PartDesc> part;  ///< set by a part of a decomposed publisher
  /// The dims of the whole run: a part's global grid, else `dims`.
  [[nodiscard]] Axes run_dims() const { return part ? part->global_dims : dims; }

 private:
  template <class Self, class U>
  static auto wire(Self& s, U& w, U& h) {
    return msgpack::type::make_define_map(
        "session", s.session, "name", s.name, "backend", s.backend, "sharing", s.sharing, "device", s.device, "sim",
        s.sim, "width", w, "height", h, "dims", s.dims, "slots", s.slots, "paused", s.paused, "step", s.step,
        "sim_time", s.sim_time, "frames_published", s.frames_published, "frames_skipped", s.frames_skipped,
        "clients", s.clients, "readers", s.readers, "held_slots", s.held_slots, "steps_per_second",
        s.steps_per_second, "frames_per_second", s.frames_per_second, "cost", s.cost, "max_cost", s.max_cost,
        "max_fps", s.max_fps, "limited_by", s.limited_by, "pictures", s.pictures, "picture_ms", s.picture_ms, "rss_kib", s.rss_kib, "uptime_s", s.uptime_s, "params",
        s.params, "checkpoint", s.checkpoint, "part", s.part);
  }

 public:
  CUVIEW_MSGPACK_WITH_SIZES
};

/// What watching costs the run, in one line for status and the viewer: "cost 0.98 % of the run
/// (budget 1 %, 60 frames/s at most): the budget sets the frame rate".
std::string cost_text(const Stats& s);
/// A share as a percentage: 0.0098 → "0.98 %", 0.01 → "1 %", 0.003 → "0.3 %".
std::string percent_text(double share);

struct ErrorBody {
  std::string code;  ///< to_string(Errc)
  std::string message;
  MSGPACK_DEFINE_MAP(code, message);
};

// ---- notices on the PUB socket: two parts, [topic, map] ----

struct FrameNotice {
  std::string session;
  std::uint64_t seq = 0;
  std::uint32_t slot = 0;
  std::uint64_t step = 0;
  double sim_time = 0;
  std::int64_t stamp_ns = 0;  ///< CLOCK_REALTIME at publish
  MSGPACK_DEFINE_MAP(session, seq, slot, step, sim_time, stamp_ns);
};

struct ByeNotice {
  std::string session;
  std::string reason;
  MSGPACK_DEFINE_MAP(session, reason);
};

inline constexpr std::string_view kFrameTopic = "frame";
inline constexpr std::string_view kByeTopic = "bye";

// ---- envelopes ----

/// Every operation of the protocol. The one table below gives each its wire name; the
/// publisher answers each with one handler (a switch over this enum), the client library calls it
/// by this enum, and cuview-ctl makes its subcommands from the table.
enum class Op : std::uint8_t {
  hello,
  describe,
  handles,
  stats,
  pause,
  resume,
  step,
  set,
  reset,
  draw,
  checkpoint,
  detach,
  shutdown,
  render,  ///< version 10
};

struct OpSpec {
  Op op;
  std::string_view name;     ///< on the wire: a request's `op`
  std::string_view command;  ///< cuview-ctl's subcommand for it ("" : none)
  std::string_view summary;  ///< what it does, in cuview-ctl's help
};

/// `hello` is the only op allowed before attaching.
inline constexpr OpSpec kOps[] = {
    {Op::hello, "hello", "", "start a session: names the client and its pid"},
    {Op::describe, "describe", "describe", "show fields, parameters and presets"},
    {Op::handles, "handles", "", "become a reader: a lease and the slots' handles"},
    {Op::stats, "stats", "status", "show the daemon's state"},
    {Op::pause, "pause", "pause", "pause the simulation"},
    {Op::resume, "resume", "resume", "resume the simulation"},
    {Op::step, "step", "step", "advance N steps and stay paused"},
    {Op::set, "set", "set", "set parameters: set F=0.03 k=0.06, or set --preset maze"},
    {Op::reset, "reset", "reset", "restart the simulation from its initial state"},
    {Op::draw, "draw", "draw", "draw a disc into an input (describe lists them): draw obstacles 120 40"},
    {Op::checkpoint, "checkpoint", "checkpoint", "write the simulation's state to disk now (docs/checkpoints.md)"},
    {Op::detach, "detach", "", "end the session: the lease and held slots are released"},
    {Op::shutdown, "shutdown", "shutdown", "stop the daemon gracefully (it writes a final checkpoint first)"},
    {Op::render, "render", "", "a picture of a volume field cast from every cell where the data is (version 10)"},
};

/// The table's row of `op`.
constexpr const OpSpec& spec_of(Op op) {
  for (const auto& s : kOps)
    if (s.op == op) return s;
  return kOps[0];  // unreachable while every Op has a row (a unit test checks it)
}
constexpr std::string_view name_of(Op op) { return spec_of(op).name; }

/// A decoded request. `args` points into `handle`'s zone.
struct Request {
  std::uint32_t v = 0;  ///< the client's version: kFirstStable..kVersion (above that only for `hello`)
  std::string op;
  std::uint64_t id = 0;
  std::optional<std::string> session;
  msgpack::object args;  ///< nil when absent
  msgpack::object_handle handle;
};

/// Decodes a request's envelope. Throws Error: bad_message (not msgpack, truncated, not a map,
/// wrong types), version_mismatch (a version before kFirstStable, naming what it lacks; one after
/// kVersion on any op but `hello`), unknown_field, missing_field. The op is
/// not looked at: a publisher checks the session first, then check_op(). `id` is filled in as
/// early as it can be read, for the error reply.
Request decode_request(std::string_view bytes, std::uint64_t& id_out);
/// The op named `op`. Throws Error(unknown_op), listing the ops there are, when there is none.
Op check_op(std::string_view op);

/// A decoded reply: `result` (nil on error) points into `handle`'s zone.
struct Reply {
  std::uint64_t id = 0;
  bool ok = false;
  ErrorBody error;
  msgpack::object result;
  msgpack::object_handle handle;
};
Reply decode_reply(std::string_view bytes, std::size_t max_bin = kMaxRequestBytes);

/// A reply envelope; `version` is another protocol's (the gateway's own replies) when given.
std::string encode_error(std::uint64_t id, Errc code, const std::string& message, std::uint32_t version = kVersion);

template <class Result>
std::string encode_result(std::uint64_t id, const Result& result, std::uint32_t version = kVersion) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_map(4);
  pk.pack("v"), pk.pack(version);
  pk.pack("id"), pk.pack(id);
  pk.pack("ok"), pk.pack(true);
  pk.pack("result"), pk.pack(result);
  return {buf.data(), buf.size()};
}

/// The result packed in `bytes` as a client of `version` reads it: each key of kAddedKeys for
/// `op` newer than `version` left out. `additions` is kAddedKeys but in tests.
std::string result_for_version(std::string_view op, std::string_view bytes, std::uint32_t version,
                               std::span<const KeyAddition> additions = kAddedKeys);

/// A successful reply envelope in `version` around `result` as a client of that version reads it
/// (result_for_version of `op`'s packed result with `additions`).
std::string encode_result_for_version(std::uint64_t id, std::string_view op, std::string_view packed_result,
                                      std::uint32_t version, std::span<const KeyAddition> additions);

/// `req`'s reply: in the version of the session (session_version(req.v)), without the keys added
/// after it. Every publisher and gateway answers requests through this.
template <class Result>
std::string encode_result(const Request& req, const Result& result) {
  const std::uint32_t version = session_version(req.v);
  if (version >= kVersion) return encode_result(req.id, result, version);
  msgpack::sbuffer packed;
  msgpack::pack(packed, result);
  return encode_result_for_version(req.id, req.op, {packed.data(), packed.size()}, version, kAddedKeys);
}

template <class Args>
std::string encode_request(Op op, std::uint64_t id, const std::string& session, const Args& args,
                           std::uint32_t version = kVersion);

/// A request whose arguments are packed already (`packed_args`, a msgpack map), in `version`,
/// each key of kAddedArgs for `op` newer than `version` left out of them.
std::string encode_request_for_version(std::string_view op, std::uint64_t id, const std::string& session,
                                       std::string_view packed_args, std::uint32_t version);

/// The same with the op as a string: tests and tools that send what no client would. As a
/// publisher of `version` reads it: the arguments added after it left out (kAddedArgs).
template <class Args>
std::string encode_request(std::string_view op, std::uint64_t id, const std::string& session, const Args& args,
                           std::uint32_t version = kVersion) {
  msgpack::sbuffer packed;
  msgpack::pack(packed, args);
  return encode_request_for_version(op, id, session, {packed.data(), packed.size()}, version);
}

template <class Args>
std::string encode_request(Op op, std::uint64_t id, const std::string& session, const Args& args,
                           std::uint32_t version) {
  return encode_request(name_of(op), id, session, args, version);
}

template <class T>
std::string encode(const T& value) {
  msgpack::sbuffer buf;
  msgpack::pack(buf, value);
  return {buf.data(), buf.size()};
}

/// Bounds on what the decoder will build, checked before it allocates: a hostile header claiming
/// four billion map entries is refused, not reserved.
inline constexpr std::size_t kMaxContainerEntries = 4096;
inline constexpr std::size_t kMaxNesting = 16;

namespace detail {
/// msgpack::unpack within the bounds above (binary values up to `max_bin` bytes). Throws
/// Error(bad_message) naming `what`.
msgpack::object_handle unpack_bounded(std::string_view bytes, std::string_view what, std::size_t& offset,
                                      std::size_t max_bin = kMaxRequestBytes);
/// The same for bytes that must be exactly one map.
msgpack::object_handle unpack_map(std::string_view bytes, std::string_view what,
                                  std::size_t max_bin = kMaxRequestBytes);
/// The value of `key` in `map`; nullptr when absent.
const msgpack::object* find_key(const msgpack::object& map, std::string_view key);
/// The `id` of a request the strict decoder refused (too large, more entries than it builds), read
/// with bounds that only the message's own size limits, so that the refusal can name it; 0 when
/// the bytes do not decode to a map holding one.
[[nodiscard]] std::uint64_t readable_id(std::string_view bytes) noexcept;
/// Refuses a request body over kMaxRequestBytes: throws Error(bad_message) naming `what` and both
/// sizes, after setting `id_out` to readable_id(bytes).
[[noreturn]] void refuse_oversized(std::string_view bytes, std::string_view what, std::uint64_t& id_out);
/// unpack_map for a request: on failure `id_out` is readable_id(bytes) before the Error goes on.
msgpack::object_handle unpack_request(std::string_view bytes, std::string_view what, std::uint64_t& id_out);
/// Throws Error(bad_message) naming `what` if any string (key or value, at any depth) of `o` is not
/// well-formed UTF-8: the protocol's strings are text, and what the daemon echoes must stay text.
void check_utf8(const msgpack::object& o, std::string_view what);

struct FieldSpec {
  std::string name;
  bool required;
  msgpack::type::object_type type;  ///< of the default value, for error messages
};
std::vector<FieldSpec> spec_from_default(const std::string& packed_default);
/// Checks `o` is a map whose keys are all in `spec` and holds every required key.
void check_map(const msgpack::object& o, const std::vector<FieldSpec>& spec, std::string_view what);
/// After a failed convert: finds the first field that does not convert and throws naming it.
[[noreturn]] void throw_field_type(const msgpack::object& o, const std::vector<FieldSpec>& spec, std::string_view what,
                                   const std::function<void(const msgpack::object&)>& try_one);
}  // namespace detail

/// Strictly decodes one message map into T. `what` names it in errors ("'set' arguments").
/// Throws Error(bad_message | unknown_field | missing_field).
template <class T>
T decode_as(const msgpack::object& o, std::string_view what) {
  static const std::vector<detail::FieldSpec> spec = detail::spec_from_default(encode(T{}));
  msgpack::object map = o;
  if (map.type == msgpack::type::NIL) {  // an absent `args` is an empty map
    map.type = msgpack::type::MAP;
    map.via.map.size = 0;
    map.via.map.ptr = nullptr;
  }
  detail::check_map(map, spec, what);
  T value{};
  try {
    map.convert(value);
  } catch (const std::exception&) {
    detail::throw_field_type(map, spec, what, [](const msgpack::object& single) {
      T scratch{};
      single.convert(scratch);
    });
  }
  return value;
}

/// Unpacks bytes that must hold exactly one msgpack value of type T (notices, tests).
template <class T>
T decode_bytes(std::string_view bytes, std::string_view what, std::size_t max_bin = kMaxRequestBytes) {
  std::size_t offset = 0;
  const auto h = detail::unpack_bounded(bytes, what, offset, max_bin);
  return decode_as<T>(h.get(), what);
}

}  // namespace cuview::proto
