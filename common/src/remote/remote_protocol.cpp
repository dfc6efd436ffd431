#include "cuview/remote_protocol.hpp"

namespace cuview::remote {

std::string_view name_of(Encoding e) noexcept {
  switch (e) {
    case Encoding::u8: return "u8";
    case Encoding::u16: return "u16";
    case Encoding::f32: return "f32";
  }
  return "u8";
}

Encoding encoding_named(std::string_view name) {
  for (auto e : {Encoding::u8, Encoding::u16, Encoding::f32})
    if (name_of(e) == name) return e;
  throw Error(Errc::bad_value, "unknown view encoding '" + std::string(name) +
                                   "'; encodings: auto (fitted to the link), u8, u16, f32");
}

std::string_view name_of(Op op) noexcept {
  for (const auto& s : kOps)
    if (s.op == op) return s.name;
  return "?";
}

Op check_op(std::string_view name) {
  for (const auto& s : kOps)
    if (s.name == name) return s.op;
  std::string known;
  for (const auto& s : kOps) known += (known.empty() ? "" : ", ") + std::string(s.name);
  throw Error(Errc::unknown_op, "the gateway has no op '" + std::string(name) + "'; its ops: " + known +
                                    " (a publisher's ops go to the publisher's name, not to \"\")");
}

namespace {
struct Envelope {
  std::uint32_t v = 0;
  std::string op;
  std::uint64_t id = 0;
  msgpack::object args;
  MSGPACK_DEFINE_MAP(v, op, id, args);
};
}  // namespace

proto::Reply decode_gateway_reply(std::string_view bytes, std::size_t max_bin) {
  proto::Reply r;
  r.handle = proto::detail::unpack_map(bytes, "gateway reply", max_bin);
  const auto& root = r.handle.get();
  const auto* id = proto::detail::find_key(root, "id");
  const auto* ok = proto::detail::find_key(root, "ok");
  if (id == nullptr || id->type != msgpack::type::POSITIVE_INTEGER || ok == nullptr ||
      ok->type != msgpack::type::BOOLEAN)
    throw Error(Errc::bad_message, "gateway reply lacks an unsigned 'id' or a boolean 'ok'");
  r.id = id->via.u64;
  r.ok = ok->via.boolean;
  if (!r.ok) {
    const auto* err = proto::detail::find_key(root, "error");
    if (err == nullptr) throw Error(Errc::bad_message, "gateway reply with ok false lacks 'error'");
    r.error = proto::decode_as<proto::ErrorBody>(*err, "gateway error");
  } else if (const auto* result = proto::detail::find_key(root, "result")) {
    r.result = *result;
  }
  return r;
}

GatewayRequest decode_gateway_request(std::string_view bytes, std::uint64_t& id_out) {
  id_out = 0;
  if (bytes.size() > kMaxRequestBytes) proto::detail::refuse_oversized(bytes, "gateway request", id_out);
  auto h = proto::detail::unpack_request(bytes, "gateway request", id_out);
  const auto& root = h.get();
  if (const auto* id = proto::detail::find_key(root, "id"); id && id->type == msgpack::type::POSITIVE_INTEGER)
    id_out = id->via.u64;
  proto::detail::check_utf8(root, "gateway request");
  const auto* v = proto::detail::find_key(root, "v");
  if (v == nullptr) throw Error(Errc::missing_field, "gateway request lacks the protocol version field 'v'");
  if (v->type != msgpack::type::POSITIVE_INTEGER)
    throw Error(Errc::bad_message, "field 'v' of gateway request must be an unsigned integer");
  // As the local protocol's: stable from kFirstStable, a newer client says hello and hears the
  // version of its session (HelloResult::protocol).
  const auto* op = proto::detail::find_key(root, "op");
  const bool hello = op != nullptr && op->type == msgpack::type::STR &&
                     std::string_view(op->via.str.ptr, op->via.str.size) == name_of(Op::hello);
  if (v->via.u64 < kFirstStable || (v->via.u64 > kVersion && !hello))
    throw Error(Errc::version_mismatch,
                "client speaks cuview remote protocol " + std::to_string(v->via.u64) + ", this gateway serves remote protocols " +
                    std::to_string(kFirstStable) + " to " + std::to_string(kVersion) +
                    (v->via.u64 < kFirstStable ? std::string("; update the client")
                                               : "; say 'hello' and speak the version its reply names ('protocol')"));
  auto env = proto::decode_as<Envelope>(root, "gateway request");
  GatewayRequest r;
  r.v = env.v;
  r.op = std::move(env.op);
  r.id = env.id;
  r.args = env.args;
  r.handle = std::move(h);
  return r;
}

std::uint64_t payload_samples(const ViewHeader& h, const std::string& of) {
  if (!h.rect) return std::uint64_t{h.view_w} * h.view_h;
  const auto& r = *h.rect;
  if (std::uint64_t{r.x} + r.w > h.view_w || std::uint64_t{r.y} + r.h > h.view_h)
    throw Error(Errc::bad_message, of + " has samples " + std::to_string(r.w) + "x" + std::to_string(r.h) + " at (" +
                                       std::to_string(r.x) + ", " + std::to_string(r.y) + ") outside its " +
                                       std::to_string(h.view_w) + "x" + std::to_string(h.view_h) + " samples");
  return std::uint64_t{r.w} * r.h;
}

}  // namespace cuview::remote
