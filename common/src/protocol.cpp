#include "cuview/protocol.hpp"

#include <algorithm>
#include <cstdio>

namespace cuview::proto {
std::string percent_text(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g %%", share * 100);
  return buf;
}
namespace detail {

static std::string type_name(msgpack::type::object_type t) {
  switch (t) {
    case msgpack::type::NIL: return "nil";
    case msgpack::type::BOOLEAN: return "a boolean";
    case msgpack::type::POSITIVE_INTEGER: return "an unsigned integer";
    case msgpack::type::NEGATIVE_INTEGER: return "an integer";
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: return "a number";
    case msgpack::type::STR: return "a string";
    case msgpack::type::BIN: return "binary data";
    case msgpack::type::ARRAY: return "an array";
    case msgpack::type::MAP: return "a map";
    case msgpack::type::EXT: return "an extension value";
  }
  return "an unknown type";
}

std::vector<FieldSpec> spec_from_default(const std::string& packed_default) {
  auto h = msgpack::unpack(packed_default.data(), packed_default.size());
  std::vector<FieldSpec> spec;
  const auto& m = h.get().via.map;
  for (std::uint32_t i = 0; i < m.size; ++i) {
    const auto& kv = m.ptr[i];
    spec.push_back({kv.key.as<std::string>(), kv.val.type != msgpack::type::NIL, kv.val.type});
  }
  return spec;
}

static std::string known_list(const std::vector<FieldSpec>& spec) {
  if (spec.empty()) return "it takes none";
  std::string s = "known fields: ";
  for (std::size_t i = 0; i < spec.size(); ++i) s += (i ? ", " : "") + spec[i].name;
  return s;
}

void check_map(const msgpack::object& o, const std::vector<FieldSpec>& spec, std::string_view what) {
  if (o.type != msgpack::type::MAP)
    throw Error(Errc::bad_message, std::string(what) + " must be a map, got " + type_name(o.type));
  const auto& m = o.via.map;
  for (std::uint32_t i = 0; i < m.size; ++i) {
    const auto& key = m.ptr[i].key;
    if (key.type != msgpack::type::STR)
      throw Error(Errc::bad_message, std::string(what) + " has a key that is " + type_name(key.type) +
                                         "; every key must be a string");
    const std::string_view k(key.via.str.ptr, key.via.str.size);
    for (std::uint32_t j = 0; j < i; ++j) {
      const auto& other = m.ptr[j].key;
      if (std::string_view(other.via.str.ptr, other.via.str.size) == k)
        throw Error(Errc::bad_message, std::string(what) + " holds the field '" + std::string(k) + "' twice");
    }
    if (std::none_of(spec.begin(), spec.end(), [&](const FieldSpec& f) { return f.name == k; }))
      throw Error(Errc::unknown_field,
                  "unknown field '" + std::string(k) + "' in " + std::string(what) + "; " + known_list(spec));
  }
  for (const auto& f : spec) {
    if (!f.required) continue;
    bool present = false;
    for (std::uint32_t i = 0; i < m.size && !present; ++i)
      present = std::string_view(m.ptr[i].key.via.str.ptr, m.ptr[i].key.via.str.size) == f.name;
    if (!present) throw Error(Errc::missing_field, std::string(what) + " lacks the required field '" + f.name + "'");
  }
}

void throw_field_type(const msgpack::object& o, const std::vector<FieldSpec>& spec, std::string_view what,
                      const std::function<void(const msgpack::object&)>& try_one) {
  const auto& m = o.via.map;
  for (std::uint32_t i = 0; i < m.size; ++i) {
    msgpack::object_kv kv = m.ptr[i];
    msgpack::object single;
    single.type = msgpack::type::MAP;
    single.via.map.size = 1;
    single.via.map.ptr = &kv;
    try {
      try_one(single);
    } catch (const std::exception&) {
      const std::string k = kv.key.as<std::string>();
      auto it = std::find_if(spec.begin(), spec.end(), [&](const FieldSpec& f) { return f.name == k; });
      std::string expected = it == spec.end() ? "another type" : type_name(it->type);
      if (it != spec.end() && it->type == msgpack::type::NIL) expected = "another type";
      if (it != spec.end() && it->type == msgpack::type::POSITIVE_INTEGER)
        expected = "a non-negative integer in range";
      throw Error(Errc::bad_message, "field '" + k + "' of " + std::string(what) + " must be " + expected + ", got " +
                                         type_name(kv.val.type));
    }
  }
  throw Error(Errc::bad_message, std::string(what) + " could not be decoded");
}

}  // namespace detail

msgpack::object_handle detail::unpack_bounded(std::string_view bytes, std::string_view what, std::size_t& offset,
                                              std::size_t max_bin) {
  const msgpack::unpack_limit limit(kMaxContainerEntries, kMaxContainerEntries, kMaxRequestBytes, max_bin,
                                    kMaxRequestBytes, kMaxNesting);
  try {
    offset = 0;
    return msgpack::unpack(bytes.data(), bytes.size(), offset, nullptr, nullptr, limit);
  } catch (const msgpack::insufficient_bytes&) {
    throw Error(Errc::bad_message, std::string(what) + " is truncated (" + std::to_string(bytes.size()) +
                                       " bytes): send the whole MessagePack map");
  } catch (const msgpack::size_overflow& e) {
    throw Error(Errc::bad_message, std::string(what) + " exceeds the decoder's bounds (" + e.what() +
                                       "): maps and arrays hold at most " + std::to_string(kMaxContainerEntries) +
                                       " entries, nested at most " + std::to_string(kMaxNesting) + " deep");
  } catch (const std::exception& e) {
    throw Error(Errc::bad_message, std::string(what) + " is not valid MessagePack (" + e.what() + ")");
  }
}

namespace detail {
msgpack::object_handle unpack_map(std::string_view bytes, std::string_view what, std::size_t max_bin) {
  std::size_t offset = 0;
  msgpack::object_handle h = detail::unpack_bounded(bytes, what, offset, max_bin);
  if (offset != bytes.size())
    throw Error(Errc::bad_message, std::string(what) + " has " + std::to_string(bytes.size() - offset) +
                                       " trailing bytes after the message");
  if (h.get().type != msgpack::type::MAP)
    throw Error(Errc::bad_message, std::string(what) + " must be a MessagePack map, got " +
                                       detail::type_name(h.get().type));
  return h;
}

std::uint64_t readable_id(std::string_view bytes) noexcept {
  if (bytes.size() > static_cast<std::size_t>(kMaxWireBytes)) return 0;
  try {
    // A message of n bytes holds fewer than n entries: these bounds cost what its size allows.
    const msgpack::unpack_limit limit(bytes.size(), bytes.size(), bytes.size(), bytes.size(), bytes.size(),
                                      kMaxNesting);
    std::size_t offset = 0;
    const auto h = msgpack::unpack(bytes.data(), bytes.size(), offset, nullptr, nullptr, limit);
    if (h.get().type == msgpack::type::MAP)
      if (const auto* id = find_key(h.get(), "id"); id && id->type == msgpack::type::POSITIVE_INTEGER)
        return id->via.u64;
  } catch (...) {
    // no id to name: the reply carries id 0
  }
  return 0;
}

msgpack::object_handle unpack_request(std::string_view bytes, std::string_view what, std::uint64_t& id_out) {
  try {
    return unpack_map(bytes, what);
  } catch (const Error&) {
    id_out = readable_id(bytes);
    throw;
  }
}

void refuse_oversized(std::string_view bytes, std::string_view what, std::uint64_t& id_out) {
  id_out = readable_id(bytes);
  throw Error(Errc::bad_message, std::string(what) + " of " + std::to_string(bytes.size()) +
                                     " bytes is larger than the " + std::to_string(kMaxRequestBytes) +
                                     "-byte limit; send fewer or smaller values per request");
}

void check_utf8(const msgpack::object& o, std::string_view what) {
  switch (o.type) {
    case msgpack::type::STR:
      if (!is_utf8(std::string_view(o.via.str.ptr, o.via.str.size)))
        throw Error(Errc::bad_message,
                    std::string(what) + " holds a string that is not valid UTF-8 (\"" +
                        utf8_escaped(std::string_view(o.via.str.ptr, o.via.str.size)) +
                        "\"); MessagePack strings are UTF-8 text");
      return;
    case msgpack::type::ARRAY:
      for (std::uint32_t i = 0; i < o.via.array.size; ++i) check_utf8(o.via.array.ptr[i], what);
      return;
    case msgpack::type::MAP:
      for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
        check_utf8(o.via.map.ptr[i].key, what);
        check_utf8(o.via.map.ptr[i].val, what);
      }
      return;
    default: return;
  }
}

const msgpack::object* find_key(const msgpack::object& map, std::string_view key) {
  for (std::uint32_t i = 0; i < map.via.map.size; ++i) {
    const auto& kv = map.via.map.ptr[i];
    if (kv.key.type == msgpack::type::STR && std::string_view(kv.key.via.str.ptr, kv.key.via.str.size) == key)
      return &kv.val;
  }
  return nullptr;
}
}  // namespace detail

namespace {
using detail::find_key;
using detail::unpack_map;

struct RequestEnvelope {
  std::uint32_t v = 0;
  std::string op;
  std::uint64_t id = 0;
  std::optional<std::string> session;
  msgpack::object args;
  MSGPACK_DEFINE_MAP(v, op, id, session, args);
};

struct ReplyEnvelope {
  std::uint32_t v = 0;
  std::uint64_t id = 0;
  bool ok = false;
  msgpack::object result;
  std::optional<ErrorBody> error;
  MSGPACK_DEFINE_MAP(v, id, ok, result, error);
};
}  // namespace

Op check_op(std::string_view op) {
  for (const auto& s : kOps)
    if (s.name == op) return s.op;
  std::string known;
  for (const auto& s : kOps) known += (known.empty() ? "" : ", ") + std::string(s.name);
  throw Error(Errc::unknown_op, "unknown op '" + std::string(op) + "'; known ops: " + known);
}

/// The refusal of a request in a version this publisher cannot serve (see kFirstStable).
static void check_client_version(std::uint64_t v, const msgpack::object* op) {
  const std::string served = "this publisher serves protocols " + std::to_string(kFirstStable) + " to " +
                             std::to_string(kVersion) + " (from " + std::to_string(kFirstStable) +
                             " on, later versions only add: docs/protocol.md, \"Versions\")";
  if (v < kFirstStable) {
    std::string lacks;
    for (const auto& change : kVersionChanges)
      if (change.version > v) lacks += (lacks.empty() ? "" : "; ") + std::string(change.added) + " (" +
                                       std::to_string(change.version) + ")";
    throw Error(Errc::version_mismatch, "client speaks cuview protocol " + std::to_string(v) + ", from before " +
                                            std::to_string(kFirstStable) + ", the first stable version; " + served +
                                            ". A client of protocol " + std::to_string(v) + " lacks: " + lacks +
                                            ". Update the client to protocol " + std::to_string(kFirstStable) +
                                            " or later");
  }
  const bool hello = op != nullptr && op->type == msgpack::type::STR &&
                     std::string_view(op->via.str.ptr, op->via.str.size) == name_of(Op::hello);
  if (v > kVersion && !hello)
    throw Error(Errc::version_mismatch, "client speaks cuview protocol " + std::to_string(v) + ", newer than " +
                                            served + ": say 'hello' in protocol " + std::to_string(v) +
                                            " and speak the version its reply names ('protocol', here " +
                                            std::to_string(kVersion) + ") for the rest of the session");
}

namespace {
/// Packs `o`, leaving out the keys of `drop` (paths from the root, "[]" for each array element).
void pack_without(msgpack::packer<msgpack::sbuffer>& pk, const msgpack::object& o, const std::string& path,
                  const std::vector<std::string_view>& drop) {
  const auto dropped = [&](const std::string& p) { return std::find(drop.begin(), drop.end(), p) != drop.end(); };
  const auto key_path = [&](const msgpack::object& key) {
    const std::string k = key.type == msgpack::type::STR ? std::string(key.via.str.ptr, key.via.str.size) : "";
    return path.empty() ? k : path + "." + k;
  };
  if (o.type == msgpack::type::MAP) {
    std::uint32_t kept = 0;
    for (std::uint32_t i = 0; i < o.via.map.size; ++i) kept += dropped(key_path(o.via.map.ptr[i].key)) ? 0 : 1;
    pk.pack_map(kept);
    for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
      const auto& kv = o.via.map.ptr[i];
      const std::string p = key_path(kv.key);
      if (dropped(p)) continue;
      pk.pack(kv.key);
      pack_without(pk, kv.val, p, drop);
    }
  } else if (o.type == msgpack::type::ARRAY) {
    pk.pack_array(o.via.array.size);
    for (std::uint32_t i = 0; i < o.via.array.size; ++i) pack_without(pk, o.via.array.ptr[i], path + "[]", drop);
  } else {
    pk.pack(o);
  }
}
}  // namespace

std::string result_for_version(std::string_view op, std::string_view bytes, std::uint32_t version,
                               std::span<const KeyAddition> additions) {
  std::vector<std::string_view> drop;
  for (const auto& a : additions)
    if (a.op == op && a.version > version) drop.push_back(a.path);
  if (drop.empty()) return std::string(bytes);
  const auto h = msgpack::unpack(bytes.data(), bytes.size());
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pack_without(pk, h.get(), "", drop);
  return {buf.data(), buf.size()};
}

GridDesc DescribeResult::grid_of(const FieldDesc& f) const {
  for (const auto& g : grids)
    if (g.name == f.grid) return g;
  GridDesc g{"grid", dims, {}, {}, {}, ""};
  for (std::size_t k = 0; k < g.dims.size(); ++k) {
    g.origin.push_back(0), g.spacing.push_back(1);
    g.axes.push_back(default_axis_name(g.dims.size(), k));
  }
  return g;
}

DescribeResult DescribeResult::for_field(std::size_t index) const {
  DescribeResult d = *this;
  if (index >= fields.size() || grids.empty() || fields[index].grid.empty() || fields[index].grid == grids[0].name)
    return d;
  d.dims = grid_of(fields[index]).dims;
  return d;
}

DescribeResult DescribeResult::for_field(const std::string& name) const {
  const auto it = std::find_if(fields.begin(), fields.end(), [&](const FieldDesc& f) { return f.name == name; });
  return for_field(static_cast<std::size_t>(it - fields.begin()));
}

std::string unreadable_for_version(const DescribeResult& d, std::uint32_t version) {
  auto check = [&](const FieldDesc& f, const std::string& what) -> std::string {
    const auto t = parse_dtype(f.dtype);
    if (!t || dtype_traits(*t).since <= version) return {};
    return what + " is " + f.dtype + ", which protocol " + std::to_string(dtype_traits(*t).since) +
           " added; this client speaks protocol " + std::to_string(version) + ": update it (this publisher speaks " +
           std::to_string(kVersion) + ")";
  };
  for (const auto& f : d.fields)
    if (auto m = check(f, "field '" + f.name + "'"); !m.empty()) return m;
  // Version 8 added grids: a field of another grid than `dims`'s is one an older client misreads.
  if (version < 8 && !d.grids.empty())
    for (const auto& f : d.fields)
      if (!f.grid.empty() && f.grid != d.grids[0].name)
        return "field '" + f.name + "' lies on grid '" + f.grid + "' (" + axes_text(d.grid_of(f).dims) +
               " cells), not on the run's first grid '" + d.grids[0].name + "' (" + axes_text(d.dims) +
               "), and fields on several grids came with protocol 8; this client speaks protocol " +
               std::to_string(version) + ": update it (this publisher speaks " + std::to_string(kVersion) + ")";
  for (const auto& p : d.particles)
    for (const auto& a : p.attributes)
      if (auto m = check(a, "attribute '" + a.name + "' of particle set '" + p.name + "'"); !m.empty()) return m;
  return {};
}

std::string encode_result_for_version(std::uint64_t id, std::string_view op, std::string_view packed_result,
                                      std::uint32_t version, std::span<const KeyAddition> additions) {
  const std::string result = result_for_version(op, packed_result, version, additions);
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_map(4);
  pk.pack("v"), pk.pack(version);
  pk.pack("id"), pk.pack(id);
  pk.pack("ok"), pk.pack(true);
  pk.pack("result");
  buf.write(result.data(), result.size());
  return {buf.data(), buf.size()};
}

std::string encode_request_for_version(std::string_view op, std::uint64_t id, const std::string& session,
                                       std::string_view packed_args, std::uint32_t version) {
  const std::string args = result_for_version(op, packed_args, version, kAddedArgs);
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_map(session.empty() ? 4 : 5);
  pk.pack("v"), pk.pack(version);
  pk.pack("op"), pk.pack(op);
  pk.pack("id"), pk.pack(id);
  if (!session.empty()) pk.pack("session"), pk.pack(session);
  pk.pack("args");
  buf.write(args.data(), args.size());
  return {buf.data(), buf.size()};
}

Request decode_request(std::string_view bytes, std::uint64_t& id_out) {
  id_out = 0;
  if (bytes.size() > kMaxRequestBytes) detail::refuse_oversized(bytes, "request", id_out);
  auto h = detail::unpack_request(bytes, "request", id_out);
  const auto& root = h.get();
  if (const auto* id = find_key(root, "id"); id && id->type == msgpack::type::POSITIVE_INTEGER) id_out = id->via.u64;
  detail::check_utf8(root, "request");
  // The version is checked before anything else, so that a client of another version hears
  // about versions rather than about fields it may legitimately have added.
  const auto* v = find_key(root, "v");
  if (v == nullptr) throw Error(Errc::missing_field, "request lacks the protocol version field 'v'");
  if (v->type != msgpack::type::POSITIVE_INTEGER)
    throw Error(Errc::bad_message, "field 'v' of request must be an unsigned integer");
  check_client_version(v->via.u64, find_key(root, "op"));
  auto env = decode_as<RequestEnvelope>(root, "request");
  Request r;
  r.v = env.v;
  r.op = std::move(env.op);
  r.id = env.id;
  r.session = std::move(env.session);
  r.args = env.args;
  r.handle = std::move(h);
  // Only `hello` may come without a session: every reader of requests (the publisher's socket,
  // the gateway) refuses the rest in the same words.
  if (!r.session && r.op != name_of(Op::hello))
    throw Error(Errc::missing_field, "'" + r.op + "' lacks the 'session' field; say 'hello' first to get one");
  return r;
}

Reply decode_reply(std::string_view bytes, std::size_t max_bin) {
  auto h = unpack_map(bytes, "reply", max_bin);
  const auto* v = find_key(h.get(), "v");
  if (v != nullptr && v->type == msgpack::type::POSITIVE_INTEGER &&
      (v->via.u64 < kFirstStable || v->via.u64 > kVersion)) {
    // Only the envelope is shared across versions: report the error if there is one.
    if (const auto* err = find_key(h.get(), "error"); err && err->type == msgpack::type::MAP) {
      auto body = decode_as<ErrorBody>(*err, "error");
      throw Error(errc_from_string(body.code), body.message);
    }
    throw Error(Errc::version_mismatch, "daemon answered in cuview protocol " + std::to_string(v->via.u64) +
                                            ", this client speaks protocols " + std::to_string(kFirstStable) +
                                            " to " + std::to_string(kVersion) +
                                            "; a daemon of protocol 7 or later answers in the client's version, so "
                                            "this one predates protocol 7: update the daemon");
  }
  auto env = decode_as<ReplyEnvelope>(h.get(), "reply");
  Reply r;
  r.id = env.id;
  r.ok = env.ok;
  if (env.error) r.error = *env.error;
  r.result = env.result;
  r.handle = std::move(h);
  return r;
}

std::string encode_error(std::uint64_t id, Errc code, const std::string& message, std::uint32_t version) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_map(4);
  pk.pack("v"), pk.pack(version);
  pk.pack("id"), pk.pack(id);
  pk.pack("ok"), pk.pack(false);
  pk.pack("error"), pk.pack(ErrorBody{std::string(to_string(code)), utf8_escaped(message)});
  return {buf.data(), buf.size()};
}

std::string cost_text(const Stats& s) {
  char buf[256];
  std::string limits = s.max_cost < 1 ? "budget " + percent_text(s.max_cost) : "no budget";
  if (s.max_fps > 0) {
    std::snprintf(buf, sizeof buf, ", %g frames/s at most", s.max_fps);
    limits += buf;
  }
  if (s.readers == 0 && s.pictures == 0) return "cost none while nobody reads (" + limits + ")";
  std::string why;
  if (s.limited_by == "budget") why = ": the budget sets the frame rate";
  else if (s.limited_by == "fps") why = ": the frame-rate cap sets the frame rate";
  else if (s.limited_by == "readers") why = ": readers hold every slot, frames are skipped";
  else why = ": the program publishes less often than both allow";
  return "cost " + percent_text(s.cost) + " of the run (" + limits + ")" + why;
}

FieldDesc packed_field(const FieldDesc& f, std::uint32_t every) {
  const std::size_t axes = f.shape.size() - (f.components > 1 ? 1 : 0);
  if (every <= 1 || axes < 1 || f.strides.size() != f.shape.size()) return f;
  FieldDesc p = f;
  // C order from the fastest axis: a cell (its components together), then each axis's packed size.
  std::uint64_t stride = f.components > 1 ? f.strides.back() * f.components : f.strides.back();
  for (std::size_t a = axes; a-- > 0;) {
    p.shape[a] = (f.shape[a] + every - 1) / every;
    p.strides[a] = stride;
    stride *= p.shape[a];
  }
  p.bytes = (stride + 3) / 4 * 4;
  return p;
}

std::uint64_t blocks_named(const DescribeResult& d, const std::vector<std::string>& names, const std::string& who) {
  std::uint64_t blocks = 0;
  for (const auto& name : names) {
    std::size_t block = 0;
    bool found = false;
    for (const auto& f : d.fields) {
      if (f.name == name) blocks |= block < 64 ? std::uint64_t{1} << block : 0, found = true;
      ++block;
    }
    for (const auto& set : d.particles)
      for (std::size_t a = 0; a < set.attributes.size(); ++a, ++block)
        if (set.name == name) blocks |= block < 64 ? std::uint64_t{1} << block : 0, found = true;
    if (!found) {
      std::string have;
      for (const auto& f : d.fields) have += (have.empty() ? "" : ", ") + f.name;
      for (const auto& set : d.particles) have += (have.empty() ? "" : ", ") + set.name + " (particles)";
      throw Error(Errc::bad_value, who + " has no field or particle set '" + name + "'; it has: " + have);
    }
  }
  return blocks;
}

}  // namespace cuview::proto
