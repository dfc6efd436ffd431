// cuview's remote protocol, version 1: what a remote client and cuview-gateway say to each other
// (docs/remote.md is its prose form). It wraps the local protocol (protocol.hpp) rather than
// replacing it: a request for a publisher is the local request, byte for byte, and its reply is
// the publisher's. The gateway adds a few ops of its own (hello, list, view, credit, stop, fetch)
// and pushes views, heartbeats and "publisher gone" notices.
//
// Every ZeroMQ message is multipart (DEALER at the client, ROUTER at the gateway):
//   client → gateway: [to, body]            to: "" (the gateway) or a publisher's name
//   gateway → client: [kind, from, body]    kind: "reply" | "beat" | "gone"
//                     [kind, from, body, payload]   kind: "view"
// A body is one MessagePack map, decoded as strictly as the local protocol's.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuview/protocol.hpp"

namespace cuview::remote {

/// The version of the gateway's own messages this code speaks. Like the local protocol's
/// (proto::kFirstStable), it only grows from kFirstStable: a gateway serves a client of any
/// version from kFirstStable to kVersion, and a newer client's `hello` is answered with the
/// version of its session. Requests to a publisher carry the local protocol's version
/// (proto::kVersion or the client's older one, from 7) as they always do.
inline constexpr std::uint32_t kVersion = 3;  // 2: `list` names every axis of a grid (dims); 3: `picture`
inline constexpr std::uint32_t kFirstStable = 1;

/// The keys each version after kFirstStable added to the gateway's own results (as
/// proto::kAddedKeys for the publishers'): a client of an earlier version is answered without them.
inline constexpr std::array<proto::KeyAddition, 1> kAddedKeys{{{"list", "publishers[].dims", 2}}};

/// Bounds, checked before allocating: a request to the gateway, one view's samples, one fetched
/// region's values, a compressed payload.
inline constexpr std::size_t kMaxRequestBytes = 64 * 1024;
inline constexpr std::uint64_t kMaxViewSamples = 4096ull * 4096ull;
inline constexpr std::uint64_t kMaxFetchValues = 8192ull * 8192ull * 3ull;
/// A fetch's values in bytes (of the field's dtype): as many as kMaxFetchValues float32 values.
inline constexpr std::uint64_t kMaxFetchBytes = kMaxFetchValues * 4;
inline constexpr std::uint64_t kMaxPayloadBytes = 1ull << 30;

inline constexpr std::string_view kReply = "reply";
inline constexpr std::string_view kView = "view";
inline constexpr std::string_view kBeat = "beat";
inline constexpr std::string_view kGone = "gone";

/// The gateway sends a beat to every client it knows this often; a client that hears nothing for
/// kSilenceLimitMs treats the gateway as gone and re-attaches. (A connection that drops — the
/// gateway or the ssh forwarding exited — is noticed at once; silence catches a frozen gateway or
/// a lost network, with room for a few large views queued ahead of a beat on a slow link.)
inline constexpr int kBeatIntervalMs = 250;
inline constexpr int kSilenceLimitMs = 3000;

/// How a view's values travel. u8 and u16 are the frame's range [lo, hi] in 255 and 65 535
/// levels (the top code means "no value": outside the grid); f32 is lossless (NaN: no value).
enum class Encoding : std::uint8_t { u8, u16, f32 };
std::string_view name_of(Encoding e) noexcept;
/// Throws Error(bad_value) naming the encodings there are.
Encoding encoding_named(std::string_view name);
/// Bytes per value, before compression.
constexpr std::size_t value_bytes(Encoding e) { return e == Encoding::u8 ? 1 : e == Encoding::u16 ? 2 : 4; }

/// The gateway's own operations (requests with `to` = "").
enum class Op : std::uint8_t { hello, list, view, credit, stop, fetch, picture };
struct OpSpec {
  Op op;
  std::string_view name;
  std::string_view summary;
};
inline constexpr OpSpec kOps[] = {
    {Op::hello, "hello", "start talking to the gateway: its version, host, user and session"},
    {Op::list, "list", "the publishers running on the gateway's host"},
    {Op::view, "view", "receive views of one field of a publisher: region, output size, encoding"},
    {Op::credit, "credit", "allow the gateway to send n more views (never answered)"},
    {Op::stop, "stop", "stop receiving views of a publisher"},
    {Op::fetch, "fetch", "one rectangle of a field at full resolution, float32, lossless"},
    {Op::picture, "picture", "a picture of a volume cast by the run from every cell ('render'), compressed losslessly"},
};
/// The version that added each op after kFirstStable: an older gateway answers it unknown_op.
constexpr std::uint32_t version_of(Op op) noexcept { return op == Op::picture ? 3 : 1; }
std::string_view name_of(Op op) noexcept;
/// Throws Error(unknown_op) listing the gateway's ops.
Op check_op(std::string_view name);

// ---- requests to the gateway: {v, op, id, args} ----

struct GatewayRequest {
  std::uint32_t v = kVersion;
  std::string op;
  std::uint64_t id = 0;  ///< echoed in the reply; 0 for `credit`, which is never answered
  msgpack::object args;
  msgpack::object_handle handle;
};
/// Strict decoding of a request's envelope. Throws Error(bad_message | version_mismatch |
/// unknown_field | missing_field); `id_out` is set as early as it can be read.
GatewayRequest decode_gateway_request(std::string_view bytes, std::uint64_t& id_out);

/// A request in remote protocol `version`: cuview's clients say `hello` in kVersion and the rest in
/// the version its reply names (kFirstStable before one), so a newer client works with an older
/// gateway.
template <class Args>
std::string encode_gateway_request(Op op, std::uint64_t id, const Args& args, std::uint32_t version = kVersion) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_map(4);
  pk.pack("v"), pk.pack(version);
  pk.pack("op"), pk.pack(name_of(op));
  pk.pack("id"), pk.pack(id);
  pk.pack("args"), pk.pack(args);
  return {buf.data(), buf.size()};
}

/// The gateway's replies to its own ops: {v, id, ok, result} or {v, id, ok: false, error}, as a
/// publisher's replies are: in the request's remote version (the session's, for a newer client's
/// hello), without the keys added after it (kAddedKeys).
template <class Result>
std::string encode_gateway_result(const GatewayRequest& request, const Result& result) {
  msgpack::sbuffer packed;
  msgpack::pack(packed, result);
  return proto::encode_result_for_version(request.id, request.op, {packed.data(), packed.size()},
                                          std::min(request.v, kVersion), kAddedKeys);
}
inline std::string encode_gateway_error(std::uint64_t id, Errc code, const std::string& message) {
  return proto::encode_error(id, code, message, kVersion);
}
/// Decodes a reply of the gateway (any `v`: a client of another version still reads its error).
/// `result` points into `handle`'s zone; binary values up to `max_bin` bytes (a fetch's data).
/// Throws Error(bad_message) naming what is malformed.
proto::Reply decode_gateway_reply(std::string_view bytes, std::size_t max_bin = proto::kMaxRequestBytes);

struct HelloArgs {
  std::string client;  ///< free text for the gateway's log
  MSGPACK_DEFINE_MAP(client);
};
struct HelloResult {
  std::uint32_t protocol = kVersion;  ///< the session's remote version: the lower of the client's and the gateway's
  std::uint32_t local_protocol = proto::kVersion;  ///< the newest local protocol the gateway serves (it serves 7 on)
  std::string gateway_version;
  std::string session;  ///< changes on every gateway start
  std::string host, user;
  std::vector<std::string> encodings;  ///< what `view` may pin
  MSGPACK_DEFINE_MAP(protocol, local_protocol, gateway_version, session, host, user, encodings);
};

/// A publisher a gateway serves. On the wire `width` and `height` repeat the grid's two fastest
/// axes (remote protocol 1, which sends no `dims`): packed from `dims`, and read into it from a
/// gateway of protocol 1.
struct PublisherEntry {
  std::string name;
  std::string sim, backend, device;  ///< empty when the gateway could not describe it
  std::uint32_t viewers = 0;  ///< remote clients of this gateway watching it
  Axes dims;  ///< every axis of the grid, slowest first (empty when not described)

 private:
  template <class Self, class U>
  static auto wire(Self& s, U& w, U& h) {
    return msgpack::type::make_define_map("name", s.name, "sim", s.sim, "backend", s.backend, "device", s.device,
                                          "width", w, "height", h, "viewers", s.viewers, "dims", s.dims);
  }

 public:
  CUVIEW_MSGPACK_WITH_SIZES  // a gateway of remote protocol 1 sends width and height alone
};
struct ListResult {
  std::vector<PublisherEntry> publishers;
  MSGPACK_DEFINE_MAP(publishers);
};

/// `view`: from now on, send views of `field` of publisher `name`, each `view_w` × `view_h`
/// samples of the region centred on cell (center_x, center_y) at `pixels_per_cell` (ViewRegion),
/// while credits last. Replaces this client's earlier view of `name`; grants `credits` (1..8).
struct ViewArgs {
  std::string name;
  std::string field;
  std::uint32_t view_w = 0, view_h = 0;
  double center_x = 0, center_y = 0, pixels_per_cell = 1;
  std::string encoding = "auto";  ///< "auto": the gateway fits it to the link; or u8 | u16 | f32
  std::uint32_t credits = 2;
  /// A field of a volume: the plane the views show, across `axis` ("x", "y" or "z") at `index`;
  /// the region (centre, scale) is then in that plane's cells. Required for a volume, refused for
  /// a plane.
  std::optional<std::string> axis{};
  std::optional<std::uint32_t> index{};
  /// A field of a volume, instead of axis and index: three orthogonal planes through cell {x, y,
  /// z}, side by side (docs/remote.md "Volumes"); the region is in that picture's cells.
  std::optional<std::vector<std::uint32_t>> through{};
  /// A field of a volume, instead of a picture: the volume itself, every k-th cell, as a brick of at
  /// most `brick` cells along its longest axis, fewer when the link is too slow for that at the
  /// gateway's target rate (docs/remote.md "A volume seen whole"). view_w, view_h and the region
  /// are then ignored (send 1, 1, 0, 0, 1).
  std::optional<std::uint32_t> brick{};
  MSGPACK_DEFINE_MAP(name, field, view_w, view_h, center_x, center_y, pixels_per_cell, encoding, credits, axis, index,
                     through, brick);
};
struct CreditArgs {
  std::string name;
  std::uint32_t n = 1;
  std::uint64_t seq = 0;  ///< the last view received, for the gateway's link measurement
  /// Set: the next view shows the oldest frame the publisher still offers whose step is at least
  /// this (waiting for it to be published), not the newest. How a client of a run of parts has
  /// every part's gateway send a view of one step (docs/remote.md "Runs of parts").
  std::optional<std::uint64_t> from_step;
  MSGPACK_DEFINE_MAP(name, n, seq, from_step);
};
struct StopArgs {
  std::string name;
  MSGPACK_DEFINE_MAP(name);
};
/// `fetch`: the rectangle [x, x+w) × [y, y+h) of `field` of the newest frame, every component.
struct FetchArgs {
  std::string name, field;
  std::uint32_t x = 0, y = 0, w = 0, h = 0;
  /// The frame to read, as an earlier fetch's result named it (so that several fields or
  /// rectangles come from one frame); absent: the newest. A frame the gateway no longer holds is
  /// refused with out_of_range.
  std::optional<std::uint64_t> seq;
  /// Without `seq`: the first frame the publisher still offers at or after this step (the parts of
  /// a run read one step); refused with timeout while there is none yet.
  std::optional<std::uint64_t> from_step;
  /// A volume's box: layers [z, z + d) as well (absent: z 0, d 1). Refused for a plane.
  std::optional<std::uint32_t> z{}, d{};
  MSGPACK_DEFINE_MAP(name, field, x, y, w, h, seq, from_step, z, d);
};
/// FetchArgs of the newest frame, as a client sends them (no `seq` key: what every gateway reads).
struct FetchNewestArgs {
  std::string name, field;
  std::uint32_t x = 0, y = 0, w = 0, h = 0;
  MSGPACK_DEFINE_MAP(name, field, x, y, w, h);
};
struct FetchResult {
  std::string session;
  std::uint64_t seq = 0, step = 0;
  double sim_time = 0;
  std::uint32_t x = 0, y = 0, w = 0, h = 0, components = 1;
  std::string compression = "zstd";
  std::uint64_t raw_bytes = 0;  ///< d × w × h × components × the dtype's size: the field's values, little-endian, row-major
  std::vector<char> data;       ///< zstd frame of raw_bytes bytes
  std::optional<std::uint32_t> z{}, d{};  ///< a volume's box: its first layer and layers
  MSGPACK_DEFINE_MAP(session, seq, step, sim_time, x, y, w, h, components, compression, raw_bytes, data, z, d);
};

/// `picture` (remote protocol 3): the publisher's `render` (protocol 10) through the gateway. The
/// gateway asks the publisher for `view` (proto::RenderArgs, decoded as strictly as the publisher
/// does) and sends its newest picture of that view, colours compressed losslessly in `codec` and
/// values (what each pixel shows) as a view's payload in `values` (value_codec.hpp). "auto": the
/// gateway's choice, WebP today (remote/picture_codec.hpp).
struct PictureArgs {
  std::string name;
  proto::RenderArgs view;
  std::string codec = "auto";  ///< auto | webp | zstd
  /// How the values travel: u8 | u16 | f32 (a view's encodings: the picture's own range in 255 or
  /// 65 535 levels, or lossless), or none (a client that shows colours only).
  std::string values = "u16";
  /// The seq of the picture of this view the client holds (0: none): when the newest is still that
  /// one, the reply says `same` and carries no picture, so that asking again costs the link nothing.
  std::uint64_t have_seq = 0;
  MSGPACK_DEFINE_MAP(name, view, codec, values, have_seq);
};
/// A picture as RenderResult says, with its colours in `codec` (`argb`: the compressed bytes of
/// width × height 0xAARRGGBB pixels) and its values in `values` (empty when not asked for or
/// pending: width × height values in `values_encoding`, a view's payload of values_raw_bytes with
/// range [values_lo, values_hi] and |decoded − cast| ≤ values_error_bound; NaN where nothing is).
struct PictureResult {
  std::string session;  ///< the publisher's
  bool pending = true;
  std::uint64_t seq = 0, step = 0;
  double sim_time = 0;
  std::int64_t stamp_ns = 0;
  std::uint32_t width = 0, height = 0, every = 1;
  double cast_ms = 0;
  std::string codec;
  std::vector<char> argb;
  std::string values_encoding;  ///< u8 | u16 | f32, or none
  float values_lo = 0, values_hi = 0;
  double values_error_bound = 0;
  std::uint64_t values_raw_bytes = 0;
  std::vector<char> values;
  double encode_ms = 0;  ///< the gateway's time to compress it
  bool same = false;     ///< the newest picture is the one the client has (PictureArgs::have_seq): no colours, no values
  MSGPACK_DEFINE_MAP(session, pending, seq, step, sim_time, stamp_ns, width, height, every, cast_ms, codec, argb,
                     values_encoding, values_lo, values_hi, values_error_bound, values_raw_bytes, values, encode_ms,
                     same);
};

// ---- pushed by the gateway ----

/// The samples of a view a part's block covers: output columns [x, x+w), rows [y, y+h).
struct ViewRect {
  std::uint32_t x = 0, y = 0, w = 0, h = 0;
  bool operator==(const ViewRect&) const = default;
  MSGPACK_DEFINE_MAP(x, y, w, h);
};

/// The body of a "view" message; its payload is a zstd frame of view_w × view_h values (rect.w ×
/// rect.h for a part's view) in `encoding`, row-major, u16 and f32 in byte planes
/// (value_codec.hpp). A value q of u8/u16 stands for lo + q × ((hi − lo) / (levels − 1)) computed in
/// double (float32 arithmetic can miss the bound), with levels 255 or 65 535; the top code (255,
/// 65 535) is "no value". |decoded − true| ≤ error_bound.
struct ViewHeader {
  std::string session;  ///< the publisher's
  std::uint64_t seq = 0, step = 0;
  double sim_time = 0;
  std::int64_t stamp_ns = 0;  ///< CLOCK_REALTIME when the publisher published the frame
  std::int64_t sent_ns = 0;   ///< CLOCK_REALTIME when the gateway sent this view
  std::string field;
  std::uint32_t view_w = 0, view_h = 0;
  double center_x = 0, center_y = 0, pixels_per_cell = 1;
  std::string encoding;  ///< u8 | u16 | f32
  std::string compression = "zstd";
  float lo = 0, hi = 0;     ///< the range of the view's values (u8, u16)
  double error_bound = 0;   ///< the largest |decoded − true| of any value: 0 for f32
  std::uint64_t raw_bytes = 0;  ///< view_w × view_h × bytes per value
  double link_bytes_per_s = 0;  ///< the gateway's estimate of this client's link (0: not yet measured)
  /// A view of part K of a decomposed publisher ("NAME/part-K") covers only the samples of its
  /// block: the payload holds rect.w × rect.h values, the rest of the view is the other parts'
  /// (the region is the global grid's). Empty rect: the block is not in view (no payload values).
  /// Absent for a whole publisher: the payload holds the whole view.
  std::optional<ViewRect> rect;
  std::uint64_t latest_step = 0;  ///< the newest step the publisher offered when this view was sent
  /// A volume's: the picture shown, as the `view` that asked for it named it (its plane, or the
  /// cell its three planes pass through), so that a view of an earlier watch is told apart.
  std::optional<std::string> axis{};
  std::optional<std::uint32_t> index{};
  std::optional<std::vector<std::uint32_t>> through{};
  /// A brick (ViewArgs::brick): {depth, height, width, stride} — the payload is its cells, x fastest,
  /// as a view of width × (height · depth) values; brick cell (i, j, k) is grid cell (i, j, k)·stride.
  std::optional<std::vector<std::uint32_t>> brick{};
  MSGPACK_DEFINE_MAP(session, seq, step, sim_time, stamp_ns, sent_ns, field, view_w, view_h, center_x, center_y,
                     pixels_per_cell, encoding, compression, lo, hi, error_bound, raw_bytes, link_bytes_per_s, rect,
                     latest_step, axis, index, through, brick);
};

/// The samples a view's payload holds: its rect's (a part's block), else the whole view. Throws
/// Error(bad_message) for a rect that leaves the view_w × view_h samples; `of` names the view ("a
/// view of daemon 'x' through ssh://h").
std::uint64_t payload_samples(const ViewHeader& h, const std::string& of);

struct Beat {
  std::string session;  ///< the gateway's
  std::int64_t unix_ns = 0;
  MSGPACK_DEFINE_MAP(session, unix_ns);
};

/// "gone": the publisher `from` exited, shut down or restarted; the session it had is over.
struct Gone {
  std::string session;
  std::string reason;
  MSGPACK_DEFINE_MAP(session, reason);
};

}  // namespace cuview::remote
