// The protocol decoder accepts what clients send and rejects every kind of bad input with an
// error that names what was wrong.
#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "cuview/assembly.hpp"
#include "cuview/runtime_dir.hpp"
#include "cuview/protocol.hpp"
#include "cuview/remote_protocol.hpp"

using namespace cuview;
using namespace cuview::proto;

namespace {
// Messages a well-behaved client never sends.
struct Extra {
  std::string client = "x";
  std::int32_t pid = 1;
  int shoe_size = 44;
  MSGPACK_DEFINE_MAP(client, pid, shoe_size);
};
struct OnlyClient {
  std::string client = "x";
  MSGPACK_DEFINE_MAP(client);
};
struct PidAsText {
  std::string client = "x";
  std::string pid = "twelve";
  MSGPACK_DEFINE_MAP(client, pid);
};
struct NegativeSteps {
  std::int64_t n = -5;
  MSGPACK_DEFINE_MAP(n);
};
struct ParamsAsList {
  std::vector<int> params{1, 2};
  MSGPACK_DEFINE_MAP(params);
};

struct Raw {  // build arbitrary maps the real encoder would never produce
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk{buf};
  std::string str() const { return {buf.data(), buf.size()}; }
};

Errc code_of(const std::string& bytes, std::string* message = nullptr) {
  std::uint64_t id = 0;
  try {
    auto r = decode_request(bytes, id);
    if (r.op == "hello") (void)decode_as<HelloArgs>(r.args, "'hello' arguments");
    if (r.op == "step") (void)decode_as<StepArgs>(r.args, "'step' arguments");
    if (r.op == "set") (void)decode_as<SetArgs>(r.args, "'set' arguments");
    if (r.op == "stats") (void)decode_as<NoArgs>(r.args, "'stats' arguments");
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  FAIL("decoding succeeded but an error was expected");
  return Errc::internal;
}
}  // namespace

TEST_CASE("a request round-trips through encode and decode", "[protocol]") {
  const auto bytes = encode_request("hello", 42, "", HelloArgs{"tester", 1234});
  std::uint64_t id = 0;
  auto r = decode_request(bytes, id);
  CHECK(id == 42);
  CHECK(r.v == kVersion);
  CHECK(r.op == "hello");
  CHECK_FALSE(r.session.has_value());
  auto a = decode_as<HelloArgs>(r.args, "'hello' arguments");
  CHECK(a.client == "tester");
  CHECK(a.pid == 1234);
}

TEST_CASE("results and errors round-trip through the reply envelope", "[protocol]") {
  DescribeResult d;
  d.session = "abc";
  d.dims = {9, 7};
  d.fields.push_back({"u", "float32", 1, {7, 9}, {36, 4}, 256, 252, "help"});
  d.params.push_back({"F", 0.05, 0, 0.1, false, "feed"});
  d.presets.push_back({"coral", {{"F", 0.0545}}});
  auto reply = decode_reply(encode_result(9, d));
  REQUIRE(reply.ok);
  CHECK(reply.id == 9);
  auto back = decode_as<DescribeResult>(reply.result, "describe result");
  CHECK(back.session == "abc");
  CHECK(back.fields.at(0).strides == std::vector<std::uint64_t>{36, 4});
  CHECK(back.presets.at(0).values.at("F") == Approx(0.0545));

  HandlesResult h;
  h.slots.push_back({std::vector<char>(64, '\x7f'), std::vector<char>(64, '\x01'), 0});
  auto hr = decode_as<HandlesResult>(decode_reply(encode_result(1, h)).result, "handles");
  CHECK(hr.slots.at(0).memory == std::vector<char>(64, '\x7f'));

  auto err = decode_reply(encode_error(5, Errc::stale_session, "old session"));
  CHECK_FALSE(err.ok);
  CHECK(err.id == 5);
  CHECK(err.error.code == "stale_session");
  CHECK(err.error.message == "old session");
}

TEST_CASE("notices round-trip", "[protocol]") {
  FrameNotice n{"s", 3, 1, 48, 48.0, 123};
  auto back = decode_bytes<FrameNotice>(encode(n), "frame notice");
  CHECK(back.seq == 3);
  CHECK(back.stamp_ns == 123);
}

TEST_CASE("bytes that are not MessagePack are rejected as bad_message", "[protocol][bad-input]") {
  std::string msg;
  CHECK(code_of(std::string("\xc1\xc1\xc1", 3), &msg) == Errc::bad_message);
  CHECK(code_of("hello daemon", &msg) == Errc::bad_message);
  CHECK(code_of("", &msg) == Errc::bad_message);
  CHECK_THAT(msg, Catch::Contains("truncated"));
}

TEST_CASE("a truncated request is rejected and says so", "[protocol][bad-input]") {
  const auto full = encode_request("stats", 1, "s", NoArgs{});
  for (std::size_t cut = 1; cut < full.size(); ++cut) {
    std::string msg;
    CHECK(code_of(full.substr(0, cut), &msg) == Errc::bad_message);
    CHECK_THAT(msg, Catch::Contains("truncated"));
  }
}

TEST_CASE("a request that is not a map, or has trailing bytes, is rejected", "[protocol][bad-input]") {
  Raw r;
  r.pk.pack_array(2), r.pk.pack(1), r.pk.pack(2);
  std::string msg;
  CHECK(code_of(r.str(), &msg) == Errc::bad_message);
  CHECK_THAT(msg, Catch::Contains("must be a MessagePack map"));
  CHECK(code_of(encode_request("stats", 1, "s", NoArgs{}) + "x", &msg) == Errc::bad_message);
  CHECK_THAT(msg, Catch::Contains("trailing"));
}

TEST_CASE("a wrong protocol version names both versions", "[protocol][bad-input]") {
  std::string msg;
  CHECK(code_of(encode_request("stats", 1, "s", NoArgs{}, kVersion + 1), &msg) == Errc::version_mismatch);
  CHECK_THAT(msg, Catch::Contains("protocol " + std::to_string(kVersion + 1)) &&
                      Catch::Contains("protocols " + std::to_string(kFirstStable) + " to " + std::to_string(kVersion)) &&
                      Catch::Contains("say 'hello'"));
  Raw r;
  r.pk.pack_map(1), r.pk.pack("op"), r.pk.pack("stats");
  CHECK(code_of(r.str(), &msg) == Errc::missing_field);
  CHECK_THAT(msg, Catch::Contains("'v'"));
}

TEST_CASE("a client of a version before the stable one hears what it lacks", "[protocol][bad-input]") {
  std::string msg;
  CHECK(code_of(encode_request("hello", 1, "", HelloArgs{"old", 1}, 4), &msg) == Errc::version_mismatch);
  CHECK_THAT(msg, Catch::Contains("protocol 4") && Catch::Contains("first stable version") &&
                      Catch::Contains("grids of 1-3 axes") && Catch::Contains("layout 3") &&
                      !Catch::Contains("particle sets"));
}

TEST_CASE("every version from the stable one on is served in its own meaning", "[protocol]") {
  for (std::uint32_t v = kFirstStable; v <= kVersion; ++v) {
    std::uint64_t id = 0;
    const auto req = decode_request(encode_request("stats", 3, "s", NoArgs{}, v), id);
    CHECK(req.v == v);
    const auto reply = decode_reply(encode_result(req, NoArgs{}));
    CHECK(reply.ok);
    CHECK(reply.id == 3);
  }
  // A newer client's hello is answered in this version, the session's.
  std::uint64_t id = 0;
  const auto hello = decode_request(encode_request("hello", 4, "", HelloArgs{"new", 1}, kVersion + 5), id);
  CHECK(session_version(hello.v) == kVersion);
  const auto bytes = encode_result(hello, HelloResult{"s", session_version(hello.v), "x", "n", 1, "host"});
  const auto h = msgpack::unpack(bytes.data(), bytes.size());
  CHECK(detail::find_key(h.get(), "v")->as<std::uint32_t>() == kVersion);
}

TEST_CASE("keys added after a client's version are left out of its answers", "[protocol]") {
  // A made-up later version 9 that added describe's `fields[].origin` and `units`.
  const KeyAddition added[] = {{"describe", "fields[].origin", 9}, {"describe", "units", 9}, {"stats", "fields", 8}};
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_map(3);
  pk.pack("sim"), pk.pack("lbm");
  pk.pack("units"), pk.pack("m");
  pk.pack("fields"), pk.pack_array(2);
  for (int i = 0; i < 2; ++i) pk.pack_map(2), pk.pack("name"), pk.pack("u"), pk.pack("origin"), pk.pack(0.5);
  const std::string later(buf.data(), buf.size());

  const std::string for8 = result_for_version("describe", later, 8, added);
  const auto h = msgpack::unpack(for8.data(), for8.size());
  CHECK(detail::find_key(h.get(), "units") == nullptr);
  CHECK(detail::find_key(h.get(), "sim")->as<std::string>() == "lbm");
  const auto& fields = detail::find_key(h.get(), "fields")->via.array;
  REQUIRE(fields.size == 2);
  for (std::uint32_t i = 0; i < fields.size; ++i) {
    CHECK(detail::find_key(fields.ptr[i], "name") != nullptr);
    CHECK(detail::find_key(fields.ptr[i], "origin") == nullptr);
  }
  // A client of that version, and another op's answer, get every key.
  CHECK(result_for_version("describe", later, 9, added) == later);
  CHECK(result_for_version("stats", later, 9, added) == later);
  // The keys version 8 added are not in this answer: a client of 7 gets it whole.
  CHECK(result_for_version("describe", later, kFirstStable) == later);
}

TEST_CASE("a describe of version 8 reaches a client of 7 without its grids, and a float64 field is refused to it by "
          "name",
          "[protocol]") {
  DescribeResult d;
  d.dims = {4, 5, 6};
  d.fields.push_back({"T", "float64", 1, {4, 5, 6}, {240, 48, 8}, 0, 960, "", "tank"});
  d.grids.push_back({"tank", {4, 5, 6}, {0, 0, 0}, {2, 1, 1}, {"z", "y", "x"}, "m"});
  d.particles.push_back({"dust", 2, {{"position", "float32", 2, {2, 2}, {8, 4}, 1024, 16, "", ""}}, "", {}});
  const std::string now = encode(d);
  const std::string for7 = result_for_version("describe", now, 7);
  const auto h = msgpack::unpack(for7.data(), for7.size());
  CHECK(detail::find_key(h.get(), "grids") == nullptr);
  CHECK(detail::find_key(h.get(), "dims") != nullptr);
  const auto& fields = detail::find_key(h.get(), "fields")->via.array;
  REQUIRE(fields.size == 1);
  CHECK(detail::find_key(fields.ptr[0], "grid") == nullptr);
  CHECK(detail::find_key(fields.ptr[0], "shape") != nullptr);
  const auto& sets = detail::find_key(h.get(), "particles")->via.array;
  REQUIRE(sets.size == 1);
  const auto& attributes = detail::find_key(sets.ptr[0], "attributes")->via.array;
  REQUIRE(attributes.size == 1);
  CHECK(detail::find_key(attributes.ptr[0], "grid") == nullptr);
  CHECK(detail::find_key(attributes.ptr[0], "dtype") != nullptr);
  CHECK(result_for_version("describe", now, 8) == now);

  CHECK(unreadable_for_version(d, 8).empty());
  const auto why = unreadable_for_version(d, 7);
  CHECK_THAT(why, Catch::Matchers::Contains("field 'T' is float64, which protocol 8 added") &&
                      Catch::Matchers::Contains("this client speaks protocol 7"));
  d.fields[0].dtype = "float32";
  CHECK(unreadable_for_version(d, 7).empty());
}

TEST_CASE("a field of a second grid is seen on its own grid, and refused to a client of protocol 7", "[protocol]") {
  DescribeResult d;
  d.dims = {4, 8, 8};
  d.grids = {{"volume", {4, 8, 8}, {0, 0, 0}, {1, 1, 1}, {"z", "y", "x"}, ""},
             {"probe", {100}, {5}, {0.5}, {"x"}, "m"}};
  d.fields.push_back({"T", "float32", 1, {4, 8, 8}, {256, 32, 4}, 0, 1024, "", "volume"});
  d.fields.push_back({"p", "float32", 1, {100}, {4}, 1024, 400, "", "probe"});
  CHECK(d.for_field(0).dims == d.dims);
  const auto probe = d.for_field("p");
  CHECK(probe.dims == std::vector<std::uint32_t>{100});
  CHECK(d.for_field(std::size_t{7}).dims == d.dims);  // a particle view: the run's own grid
  CHECK(whole_grid(d, 1).spacing == std::vector<double>{0.5});
  CHECK(unreadable_for_version(d, 8).empty());
  CHECK_THAT(unreadable_for_version(d, 7), Catch::Matchers::Contains("field 'p' lies on grid 'probe' (100 cells)") &&
                                               Catch::Matchers::Contains("came with protocol 8"));
  d.fields.pop_back();
  CHECK(unreadable_for_version(d, 7).empty());  // one grid: as a client of 7 reads it
}

TEST_CASE("a part's grid is placed in the whole run's coordinates", "[protocol]") {
  DescribeResult part;
  part.dims = {4, 8, 8};
  part.fields.push_back({"T", "float64", 1, {4, 8, 8}, {512, 64, 8}, 0, 2048, "", "g"});
  part.grids.push_back({"g", {4, 8, 8}, {10.5, 0, -1}, {0.5, 1, 2}, {"z", "y", "x"}, "m"});
  part.part = PartDesc{1, 2, "run", 1, "h", {4, 0, 0}, {8, 8, 8}};
  const auto g = whole_grid(part);
  CHECK(g.dims == std::vector<std::uint32_t>{8, 8, 8});
  CHECK(g.origin == std::vector<double>{8.5, 0, -1});  // 4 cells of 0.5 before the part's first
  CHECK(g.spacing == std::vector<double>{0.5, 1, 2});
  CHECK(g.units == "m");
  // A publisher that named no grid: cell indices.
  DescribeResult plain;
  plain.dims = {3, 7};
  const auto p = whole_grid(plain);
  CHECK(p.dims == std::vector<std::uint32_t>{3, 7});
  CHECK(p.origin == std::vector<double>{0, 0});
  CHECK(p.spacing == std::vector<double>{1, 1});
  CHECK(p.axes == std::vector<std::string>{"y", "x"});
}

TEST_CASE("every dtype's value is read as a double", "[protocol]") {
  const double f64 = 1e8 + 0.0625;
  const std::int64_t i64 = (std::int64_t{1} << 40) + 3;
  const float f32 = -2.5f;
  const std::uint16_t half = 0x3c00 | 0x8000;  // -1.0 in IEEE binary16
  const std::int32_t i32 = -7;
  const std::uint8_t u8 = 200;
  CHECK(load_value(&f64, DType::float64) == f64);
  CHECK(load_value(&i64, DType::int64) == double(i64));
  CHECK(load_value(&f32, DType::float32) == -2.5);
  CHECK(load_value(&half, DType::float16) == -1.0);
  CHECK(load_value(&i32, DType::int32) == -7.0);
  CHECK(load_value(&u8, DType::uint8) == 200.0);
  const std::uint16_t bf16 = 0xc0a0;  // -5.0: the upper half of float32's 0xc0a00000
  CHECK(load_value(&bf16, DType::bfloat16) == -5.0);
  const std::uint16_t tiny = 0x0001;  // a bfloat16 subnormal: float32's 0x00010000, exact
  CHECK(load_value(&tiny, DType::bfloat16) == std::ldexp(1.0, -133));
  CHECK(dtype_names() == "float32, float16, int32, uint8, float64, int64 or bfloat16");
  CHECK((is_integer(DType::int64) && is_integer(DType::uint8) && !is_integer(DType::bfloat16) &&
         !is_integer(DType::float16)));
}

TEST_CASE("a bfloat16 field is refused by name to clients of protocol 8 and 7", "[protocol]") {
  DescribeResult d;
  d.dims = {4, 4};
  d.fields.push_back({"w", "bfloat16", 1, {4, 4}, {8, 2}, 0, 32, "", "grid"});
  CHECK(unreadable_for_version(d, 9).empty());
  CHECK_THAT(unreadable_for_version(d, 8), Catch::Matchers::Contains("field 'w' is bfloat16, which protocol 9 added") &&
                                               Catch::Matchers::Contains("this client speaks protocol 8"));
  CHECK_THAT(unreadable_for_version(d, 7), Catch::Matchers::Contains("which protocol 9 added"));
}

TEST_CASE("a gateway lists every axis to a client of remote protocol 2, and the keys of 1 to one of 1",
          "[protocol][remote]") {
  remote::ListResult list;
  list.publishers.push_back({"vol", "lbm3d", "host", "cpu", 0, {16, 30, 40}});
  for (std::uint32_t v : {remote::kFirstStable, remote::kVersion}) {
    std::uint64_t id = 0;
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    pk.pack_map(4), pk.pack("v"), pk.pack(v), pk.pack("op"), pk.pack("list"), pk.pack("id"), pk.pack(7);
    pk.pack("args"), pk.pack_map(0);
    const auto request = remote::decode_gateway_request({buf.data(), buf.size()}, id);
    const auto reply = remote::decode_gateway_reply(remote::encode_gateway_result(request, list));
    const auto h = msgpack::unpack(remote::encode_gateway_result(request, list).data(),
                                   remote::encode_gateway_result(request, list).size());
    CHECK(detail::find_key(h.get(), "v")->as<std::uint32_t>() == v);
    const auto& entry = detail::find_key(reply.result, "publishers")->via.array.ptr[0];
    CHECK(detail::find_key(entry, "width")->as<std::uint32_t>() == 40);
    if (v < 2) {
      CHECK(detail::find_key(entry, "dims") == nullptr);
    } else {
      CHECK(detail::find_key(entry, "dims")->as<std::vector<std::uint32_t>>() == std::vector<std::uint32_t>{16, 30, 40});
    }
  }
}

TEST_CASE("protocol 7's width and height are sent as dims' two fastest axes, and read back into dims alone",
          "[protocol]") {
  // What a client of protocol 7 reads beside dims: derived as the message is packed, never stored.
  const auto keys = [](const std::string& bytes) {
    const auto h = msgpack::unpack(bytes.data(), bytes.size());
    std::map<std::string, std::uint32_t> out;
    for (const auto& o = h.get(); const auto& kv : std::span(o.via.map.ptr, o.via.map.size))
      if (kv.val.type == msgpack::type::POSITIVE_INTEGER) out[kv.key.as<std::string>()] = kv.val.as<std::uint32_t>();
    return out;
  };
  DescribeResult volume;
  volume.dims = {4, 5, 6};
  CHECK((keys(encode(volume))["width"] == 6 && keys(encode(volume))["height"] == 5));
  DescribeResult line;
  line.dims = {100};
  CHECK((keys(encode(line))["width"] == 100 && keys(encode(line))["height"] == 1));
  CHECK(decode_bytes<DescribeResult>(encode(volume), "describe").dims == Axes{4, 5, 6});
  Stats s;
  s.dims = {30, 40};
  CHECK((keys(encode(s))["width"] == 40 && keys(encode(s))["height"] == 30));
  const PartDesc p{.index = 1, .count = 2, .offset = {8, 16, 0}, .global_dims = {16, 32, 64}};
  auto pk = keys(encode(p));
  CHECK((pk["offset_x"] == 0 && pk["offset_y"] == 16 && pk["global_width"] == 64 && pk["global_height"] == 32));
  CHECK(decode_bytes<PartDesc>(encode(p), "part") == p);
  // A gateway of remote protocol 1 sent width and height alone: read as a 2-D grid's dims.
  msgpack::sbuffer old;
  msgpack::packer<msgpack::sbuffer> w(old);
  w.pack_map(3), w.pack("name"), w.pack("heat"), w.pack("width"), w.pack(40), w.pack("height"), w.pack(30);
  CHECK(msgpack::unpack(old.data(), old.size()).get().as<remote::PublisherEntry>().dims == Axes{30, 40});
}

TEST_CASE("a field packed to every k-th cell keeps its components together along any number of axes",
          "[protocol]") {
  // A volume of 3-vectors, 5 x 4 x 3 cells of float32, every 2nd cell: 3 x 2 x 2.
  const FieldDesc volume{"v", "float32", 3, {3, 4, 5, 3}, {240, 60, 12, 4}, 256, 720, "", "grid"};
  const auto v = packed_field(volume, 2);
  CHECK(v.shape == std::vector<std::uint32_t>{2, 2, 3, 3});
  CHECK(v.strides == std::vector<std::uint64_t>{72, 36, 12, 4});
  CHECK(v.bytes == 144);
  CHECK(v.offset == 256);
  // A plane and a line, the same way; every 1 leaves a field as it is.
  const FieldDesc plane{"u", "float64", 1, {5, 7}, {56, 8}, 0, 280, "", "grid"};
  const auto p = packed_field(plane, 3);
  CHECK((p.shape == std::vector<std::uint32_t>{2, 3} && p.strides == std::vector<std::uint64_t>{24, 8} && p.bytes == 48));
  const FieldDesc line{"l", "int32", 1, {10}, {4}, 0, 40, "", "probe"};
  CHECK(packed_field(line, 4).shape == std::vector<std::uint32_t>{3});
  CHECK(packed_field(line, 4).bytes == 12);
  CHECK((packed_field(plane, 1).shape == plane.shape && packed_field(plane, 1).strides == plane.strides));
}

TEST_CASE("an unknown op is rejected with the list of ops", "[protocol][bad-input]") {
  std::string msg;
  std::uint64_t id = 0;
  const auto r = decode_request(encode_request("explode", 1, "s", NoArgs{}), id);  // the envelope is fine
  CHECK(r.op == "explode");
  try {
    check_op(r.op);
    FAIL("check_op accepted 'explode'");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::unknown_op);
    CHECK_THAT(e.what(), Catch::Contains("'explode'") && Catch::Contains("describe"));
  }
  CHECK(check_op("checkpoint") == Op::checkpoint);
}

TEST_CASE("the op table names every op once, and every name finds its op", "[protocol]") {
  std::set<std::string_view> names;
  for (auto i = 0; i <= static_cast<int>(Op::render); ++i) {  // to the last op
    const auto op = static_cast<Op>(i);
    INFO("op number " << i);
    CHECK(spec_of(op).op == op);  // spec_of falls back to the first row for an op without one
    CHECK(names.insert(name_of(op)).second);
    CHECK(check_op(name_of(op)) == op);
  }
  CHECK(names.size() == std::size(kOps));
}

TEST_CASE("unknown fields are rejected by name, in the envelope and in arguments", "[protocol][bad-input]") {
  Raw r;
  r.pk.pack_map(4), r.pk.pack("v"), r.pk.pack(kVersion), r.pk.pack("op"), r.pk.pack("stats");
  r.pk.pack("id"), r.pk.pack(1), r.pk.pack("colour"), r.pk.pack("blue");
  std::string msg;
  CHECK(code_of(r.str(), &msg) == Errc::unknown_field);
  CHECK_THAT(msg, Catch::Contains("'colour'"));

  CHECK(code_of(encode_request("hello", 1, "", Extra{}), &msg) == Errc::unknown_field);
  CHECK_THAT(msg, Catch::Contains("'shoe_size'") && Catch::Contains("client, pid"));
  CHECK(code_of(encode_request("stats", 1, "s", Extra{}), &msg) == Errc::unknown_field);
}

TEST_CASE("missing and mistyped fields are rejected by name", "[protocol][bad-input]") {
  std::string msg;
  CHECK(code_of(encode_request("hello", 1, "", OnlyClient{}), &msg) == Errc::missing_field);
  CHECK_THAT(msg, Catch::Contains("'pid'"));

  CHECK(code_of(encode_request("hello", 1, "", PidAsText{}), &msg) == Errc::bad_message);
  CHECK_THAT(msg, Catch::Contains("field 'pid'") && Catch::Contains("string"));

  CHECK(code_of(encode_request("step", 1, "s", NegativeSteps{}), &msg) == Errc::bad_message);
  CHECK_THAT(msg, Catch::Contains("field 'n'"));

  CHECK(code_of(encode_request("set", 1, "s", ParamsAsList{}), &msg) == Errc::bad_message);
  CHECK_THAT(msg, Catch::Contains("field 'params'"));
}

TEST_CASE("a key given twice or a non-string key is rejected", "[protocol][bad-input]") {
  Raw r;
  r.pk.pack_map(4), r.pk.pack("v"), r.pk.pack(kVersion), r.pk.pack("op"), r.pk.pack("stats");
  r.pk.pack("op"), r.pk.pack("stats"), r.pk.pack("id"), r.pk.pack(1);
  std::string msg;
  CHECK(code_of(r.str(), &msg) == Errc::bad_message);
  CHECK_THAT(msg, Catch::Contains("twice"));
  Raw k;
  k.pk.pack_map(2), k.pk.pack("v"), k.pk.pack(kVersion), k.pk.pack(7), k.pk.pack("stats");
  CHECK(code_of(k.str(), &msg) == Errc::bad_message);
  CHECK_THAT(msg, Catch::Contains("key"));
}

TEST_CASE("an oversized request is rejected before decoding", "[protocol][bad-input]") {
  std::string msg;
  CHECK(code_of(std::string(kMaxRequestBytes + 1, '\x90'), &msg) == Errc::bad_message);
  CHECK_THAT(msg, Catch::Contains("limit"));
}

TEST_CASE("a header claiming billions of entries is refused without allocating them", "[protocol][bad-input]") {
  // Found by the fuzzer: msgpack reserves a map's entries from its header before reading them.
  std::string msg;
  CHECK(code_of(std::string("\xdf\xff\xff\xff\xff", 5), &msg) == Errc::bad_message);
  CHECK_THAT(msg, Catch::Contains("at most 4096 entries"));
  CHECK(code_of(std::string("\xdd\x7f\xff\xff\xff", 5), &msg) == Errc::bad_message);  // array32
  std::string deep(40, '\x91');                                                       // 40 nested one-element arrays
  deep += '\x01';
  CHECK(code_of(deep, &msg) == Errc::bad_message);
  CHECK_THAT(msg, Catch::Contains("deep"));
}

TEST_CASE("a reply from a daemon of another version is reported as a version mismatch", "[protocol][bad-input]") {
  Raw r;
  r.pk.pack_map(3), r.pk.pack("v"), r.pk.pack(kVersion + 1), r.pk.pack("id"), r.pk.pack(1);
  r.pk.pack("ok"), r.pk.pack(true);
  try {
    (void)decode_reply(r.str());
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::version_mismatch);
  }
}

TEST_CASE("error codes keep their wire names", "[protocol]") {
  for (auto c : {Errc::bad_message, Errc::stale_session, Errc::version_mismatch, Errc::too_many_clients,
                 Errc::already_running, Errc::internal}) {
    CHECK(errc_from_string(to_string(c)) == c);
  }
  CHECK(to_string(Errc::stale_session) == "stale_session");
}

TEST_CASE("a publisher address is NAME or NAME/part-K, and nothing else", "[protocol][remote]") {
  using cuview::parse_publisher_address;
  CHECK(parse_publisher_address("flow").text() == "flow");
  CHECK(!parse_publisher_address("flow").part);
  CHECK(parse_publisher_address("flow/part-0").part == 0u);
  CHECK(parse_publisher_address("flow/part-12").part == 12u);
  CHECK(parse_publisher_address("flow/part-4294967295").part == 4294967295u);
  CHECK(parse_publisher_address("flow/part-7").text() == "flow/part-7");
  for (const char* bad : {"", ".flow", "flow/", "/part-1", "flow/part-", "flow/part-01", "flow/part-x", "flow/part--1",
                          "flow/part-1/x", "flow/../x", "flow/part-4294967296", "flow/Part-1", "fl ow/part-1"}) {
    INFO("'" << bad << "'");
    try {
      (void)parse_publisher_address(bad);
      FAIL("accepted");
    } catch (const cuview::Error& e) {
      CHECK(e.code() == cuview::Errc::bad_value);
      CHECK_THAT(e.what(), Catch::Contains("NAME/part-K"));
    }
  }
}

TEST_CASE("a render of version 11 reaches a publisher of 10 without its plane's keys, and 10's render is read by 11",
          "[protocol]") {
  RenderArgs a;
  a.field = "u", a.width = 8, a.height = 4, a.mode = "plane", a.axis = "y", a.index = 3;
  a.lut.assign(256, 0xff000000u);
  std::uint64_t id = 0;
  // To a publisher of 10: its strict decoder would refuse `axis` and `index` as unknown.
  const std::string for10 = encode_request(Op::render, 7, "s", a, 10);
  const auto r10 = decode_request(for10, id);
  CHECK(r10.v == 10);
  CHECK(detail::find_key(r10.args, "axis") == nullptr);
  CHECK(detail::find_key(r10.args, "index") == nullptr);
  CHECK(detail::find_key(r10.args, "mode")->as<std::string>() == "plane");
  // A client of 10 sends neither: 11 reads its view as the default plane (z, the middle).
  const auto seen = decode_as<RenderArgs>(r10.args, "'render' arguments");
  CHECK_FALSE(seen.axis.has_value());
  CHECK_FALSE(seen.index.has_value());
  CHECK(seen.field == "u");
  // To a publisher of 11, they travel.
  const auto r11 = decode_request(encode_request(Op::render, 8, "s", a), id);
  const auto whole = decode_as<RenderArgs>(r11.args, "'render' arguments");
  CHECK(whole.axis == std::optional<std::string>("y"));
  CHECK(whole.index == std::optional<std::uint32_t>(3));
}
