// Remote clients through cuview-gateway (docs/remote.md): what a person at another machine
// notices — steering works as it does locally, with the daemon's own errors; views carry values
// within their stated error bound and exact regions on request; a restarted daemon or gateway
// is noticed (the connection's drop, not a silence) and attached to again; one client that stops
// reading delays no other.
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <span>
#include <thread>

#include <zmq.hpp>

#include "backend_test.hpp"
#include "protocol_client.hpp"
#include "cuview/client.hpp"
#include "cuview/remote_protocol.hpp"
#include "shows_step.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;

namespace {
RemoteClient attach_remote(const std::string& name, const std::string& url = gateway_url()) {
  AttachOptions o;
  o.name = name;
  o.client = "remote test";
  o.remote = url;
  return RemoteClient::attach(o);
}

/// Watches the whole of `field` in a 64 × 64 view and waits for the first view to arrive.
bool watch_whole_field(RemoteClient& remote, const std::string& field, RemoteView& view) {
  const auto& d = remote.description();
  const Extent grid = d.extent();
  remote.watch({field, ViewRegion::fit(int(grid.width()), int(grid.height()), 64, 64, 1, grid.width() / 2.0,
                                       grid.height() / 2.0),
                "auto"});
  return remote.next_view(view, 10s);
}

/// The field `name` of a paused daemon's newest frame, read locally: the truth.
std::vector<float> local_field(const std::string& daemon, const std::string& name, std::uint64_t* seq = nullptr) {
  auto c = attach(daemon);
  auto frame = c.next_frame(10s);
  REQUIRE(frame);
  const auto& d = c.description();
  const auto f = std::find_if(d.fields.begin(), d.fields.end(), [&](const auto& x) { return x.name == name; });
  REQUIRE(f != d.fields.end());
  std::vector<float> v(f->bytes / sizeof(float));  // every cell of the grid, a plane's or a volume's
  frame->copy_to_host(f->offset, std::as_writable_bytes(std::span(v)));
  if (seq) *seq = frame->info().seq;
  return v;
}

/// A client written from docs/remote.md alone: a DEALER on the gateway's Unix socket, sending
/// whatever parts a test wants and reading the replies as they come.
struct RawGatewayPeer {
  struct Answer {
    std::string from, body;
    proto::Reply reply;
  };
  zmq::context_t ctx;
  zmq::socket_t s{ctx, zmq::socket_type::dealer};
  RawGatewayPeer() {
    s.set(zmq::sockopt::linger, 0);
    s.connect("ipc://" + gateway_url().substr(5));
  }
  void send(const std::vector<std::string>& parts) {
    for (std::size_t i = 0; i < parts.size(); ++i)
      s.send(zmq::buffer(parts[i]), i + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
  /// The next reply (beats and views skipped), or nothing within `timeout`.
  std::optional<Answer> reply(std::chrono::milliseconds timeout = 5s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, 50ms);
      if (!(item.revents & ZMQ_POLLIN)) continue;
      std::vector<zmq::message_t> parts;
      for (;;) {
        zmq::message_t m;
        (void)s.recv(m);
        const bool more = m.more();
        parts.push_back(std::move(m));
        if (!more) break;
      }
      if (parts.size() < 3 || parts[0].to_string() != "reply") continue;
      Answer a{parts[1].to_string(), parts[2].to_string(), {}};
      a.reply = a.from.empty() ? remote::decode_gateway_reply(a.body) : proto::decode_reply(a.body);
      return a;
    }
    return std::nullopt;
  }
  /// Sends [to, body] and returns the reply; fails the test when none comes.
  Answer exchange(const std::string& to, const std::string& body) {
    send({to, body});
    auto a = reply();
    if (!a) FAIL("no reply from the gateway within 5 s to a request for '" << to << "'");
    return std::move(*a);
  }
};

/// Every string of a MessagePack value, at any depth, is valid UTF-8: what a strict decoder checks.
bool all_strings_utf8(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::STR: return is_utf8(std::string_view(o.via.str.ptr, o.via.str.size));
    case msgpack::type::ARRAY:
      for (std::uint32_t i = 0; i < o.via.array.size; ++i)
        if (!all_strings_utf8(o.via.array.ptr[i])) return false;
      return true;
    case msgpack::type::MAP:
      for (std::uint32_t i = 0; i < o.via.map.size; ++i)
        if (!all_strings_utf8(o.via.map.ptr[i].key) || !all_strings_utf8(o.via.map.ptr[i].val)) return false;
      return true;
    default: return true;
  }
}
bool all_strings_utf8(const std::string& body) {
  const auto h = msgpack::unpack(body.data(), body.size());
  return all_strings_utf8(h.get());
}

/// Reads views until the client says its publisher is gone (the error it throws: what the user
/// reads); "(no error)" when a minute passes without one (a failure guard only).
std::string error_when_gone(RemoteClient& remote, RemoteView& view, Errc& code) {
  const auto until = std::chrono::steady_clock::now() + 60s;
  try {
    while (std::chrono::steady_clock::now() < until) (void)remote.next_view(view, 100ms);
  } catch (const Error& e) {
    code = e.code();
    return e.what();
  }
  return "(no error)";
}

std::string error_of(const std::function<void()>& f, Errc* code = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (code) *code = e.code();
    return e.what();
  }
  return "(no error)";
}
}  // namespace

BACKEND_TEST("a remote client steers a daemon through the gateway and hears the daemon's own errors",
             "[integration][remote]") {
  RuntimeDir rt;
  auto daemon = start_daemon("run1", backend);
  auto gateway = start_gateway();
  auto remote = attach_remote("run1");
  auto local = attach("run1");
  CHECK(remote.via() == gateway_url());
  CHECK(local.via().empty());
  CHECK(remote.hello().session == local.hello().session);
  CHECK(remote.description().fields.size() == local.description().fields.size());
  remote.pause();
  CHECK(stats("run1").paused);
  // Reset while paused, the run shows step 0 (the batch under way when the pause came finishes
  // first) and holds there; a step request moves it on by exactly that many steps.
  remote.reset();
  REQUIRE(shows_step(remote, 0));
  remote.step(7);
  REQUIRE(shows_step(remote, 7));
  CHECK(stats("run1").step == 7);
  remote.set({{"F", 0.031}});
  CHECK(stats("run1").F == Approx(0.031));
  Errc remote_code{}, local_code{};
  const auto remote_msg = error_of([&] { remote.set({{"F", 3.0}}); }, &remote_code);
  const auto local_msg = error_of([&] { local.set({{"F", 3.0}}); }, &local_code);
  CHECK(remote_code == Errc::out_of_range);
  CHECK(remote_code == local_code);
  CHECK(remote_msg == local_msg);
  CHECK(error_of([&] { remote.set({{"nope", 1}}); }) == error_of([&] { local.set({{"nope", 1}}); }));
  CHECK(remote.stats().paused);
  remote.resume();
  CHECK_FALSE(stats("run1").paused);
}

BACKEND_TEST("remote views hold the field's values within their stated error bound, and fetch is exact",
             "[integration][remote]") {
  RuntimeDir rt;
  auto daemon = start_daemon("run1", backend, {}, "200x150");
  auto gateway = start_gateway();
  auto remote = attach_remote("run1");
  remote.pause();
  std::this_thread::sleep_for(300ms);
  std::uint64_t seq = 0;
  const auto truth = local_field("run1", "v", &seq);
  const auto region = remote.fetch("v", Block::grid(0, 0, 200, 150));
  CHECK(region.seq >= seq);
  REQUIRE(region.values.size() == truth.size());
  CHECK(region.values == truth);  // float32, lossless
  const auto part = remote.fetch("v", Block::grid(30, 40, 50, 20));
  for (std::uint32_t y = 0; y < 20; ++y)
    for (std::uint32_t x = 0; x < 50; ++x) REQUIRE(part.values[y * 50 + x] == truth[(40 + y) * 200 + 30 + x]);

  for (const std::string encoding : {"u8", "u16", "f32"}) {
    ViewWatch w;
    w.field = "v";
    w.encoding = encoding;
    // Zoomed in twice on a corner, so that part of the view lies outside the grid.
    w.region = ViewRegion::fit(200, 150, 320, 240, 2.0, 20, 20);
    remote.watch(w);
    RemoteView view;
    REQUIRE(remote.next_view(view, 10s));
    INFO("encoding " << encoding);
    CHECK(view.header.encoding == encoding);
    CHECK(view.header.view_w == 320);
    const auto& r = view.view.region;
    const double bound = view.header.error_bound;
    if (encoding == "f32") CHECK(bound == 0);
    if (encoding != "f32") CHECK(bound > 0);
    CHECK(bound <= (view.header.hi - view.header.lo) / (encoding == "u8" ? 255.0 : 65535.0) + 1e-12);
    std::size_t outside = 0, checked = 0;
    for (int py = 0; py < r.view_h; ++py)
      for (int px = 0; px < r.view_w; ++px) {
        int cx = 0, cy = 0;
        const float got = view.view.values[std::size_t(py) * r.view_w + px];
        if (!r.cell_at(px, py, cx, cy)) {
          REQUIRE(std::isnan(got));
          ++outside;
          continue;
        }
        const float want = truth[std::size_t(cy) * 200 + cx];
        REQUIRE(std::abs(got - want) <= bound * 1.0001 + 1e-7);
        ++checked;
      }
    CHECK(outside > 0);
    CHECK(checked > 0);
  }
  Errc code{};
  CHECK_THAT(error_of([&] { remote.watch({"nope", ViewRegion::fit(200, 150, 64, 64, 1, 100, 75), "auto"}); }, &code),
             Catch::Contains("no field 'nope'") && Catch::Contains("u, v"));
  CHECK(code == Errc::bad_value);
  CHECK_THAT(error_of([&] { (void)remote.fetch("v", Block::grid(190, 0, 20, 10)); }, &code), Catch::Contains("leaves the"));
  CHECK(code == Errc::out_of_range);
}

BACKEND_TEST("through the gateway, a volume is viewed a plane at a time and fetched as a box, as it is locally",
             "[integration][remote]") {
  RuntimeDir rt;
  auto daemon = start_daemon("vol", backend, {"--sim", "grayscott3d", "--paused"}, "24x16x12");
  REQUIRE(ctl("vol", {"step", "30"}).code == 0);
  (void)wait_stats("vol", [](const StatsView& s) { return s.step == 30; });
  const auto truth = local_field("vol", "u");  // {12, 16, 24}: z, y, x
  REQUIRE(truth.size() == 12 * 16 * 24);
  auto at = [&](int x, int y, int z) { return truth[(static_cast<std::size_t>(z) * 16 + y) * 24 + x]; };
  auto gateway = start_gateway();
  auto remote = attach_remote("vol");
  CHECK(remote.description().dims == std::vector<std::uint32_t>{12, 16, 24});
  // A box of the volume, exact.
  const auto box = remote.fetch("u", Block{{4, 3, 2}, {5, 6, 10}});
  REQUIRE(box.values.size() == 10 * 6 * 5);
  CHECK(box.z == 4);
  CHECK(box.d == 5);
  std::size_t wrong = 0;
  for (int k = 0; k < 5; ++k)
    for (int r = 0; r < 6; ++r)
      for (int c = 0; c < 10; ++c) wrong += box.values[(std::size_t(k) * 6 + r) * 10 + c] != at(2 + c, 3 + r, 4 + k);
  CHECK(wrong == 0);
  // The plane y = 5, one sample per cell: its columns are x, its rows z.
  ViewWatch w{"u", ViewRegion::fit(24, 12, 24, 12, 1, 12, 6), "f32"};
  w.slice = Slice{SliceAxis::y, 5};
  remote.watch(w);
  RemoteView view;
  REQUIRE(remote.next_view(view, 10s));
  REQUIRE(view.view.values.size() == 24 * 12);
  wrong = 0;
  for (int z = 0; z < 12; ++z)
    for (int x = 0; x < 24; ++x) wrong += view.view.values[std::size_t(z) * 24 + x] != at(x, 5, z);
  CHECK(wrong == 0);
  // Every frame's field whole, as locally.
  const auto frame = remote.next_frame(10s);
  REQUIRE(frame);
  std::vector<float> whole(truth.size());
  const auto& u = remote.description().fields.at(0);
  frame->copy_to_host(u.offset, std::as_writable_bytes(std::span(whole)));
  CHECK(whole == truth);
  // A volume's view names a plane; an index past the axis is named.
  Errc code{};
  CHECK_THAT(error_of([&] { remote.watch({"u", ViewRegion::fit(24, 16, 64, 64, 1, 12, 8), "auto"}); }, &code),
             Catch::Contains("a volume of 24x16x12 cells") && Catch::Contains("names a plane"));
  CHECK(code == Errc::bad_value);
  w.slice = Slice{SliceAxis::y, 16};
  CHECK_THAT(error_of([&] { remote.watch(w); }, &code), Catch::Contains("16"));
  CHECK(code == Errc::out_of_range);
  CHECK_THAT(error_of([&] { (void)remote.fetch("u", Block{{10, 0, 0}, {3, 4, 4}}); }, &code), Catch::Contains("24x16x12"));
  CHECK(code == Errc::out_of_range);
  remote.pause();  // and it is steered as any run
  CHECK(stats("vol").paused);
  // cuview-ctl's views of a volume: the middle z-plane unless --plane says which.
  const auto middle = ctl("vol", {"--remote", gateway_url(), "attach", "--frames", "1", "--encoding", "f32"});
  INFO(middle.out << middle.err);
  CHECK(middle.code == 0);
  CHECK_THAT(middle.out, Catch::Contains("views of u (plane z=6)") && Catch::Contains("received 1 views"));
  const auto y5 = ctl("vol", {"--remote", gateway_url(), "attach", "--frames", "1", "--plane", "y=5"});
  INFO(y5.out << y5.err);
  CHECK(y5.code == 0);
  CHECK_THAT(y5.out, Catch::Contains("views of u (plane y=5)"));
  const auto past = ctl("vol", {"--remote", gateway_url(), "attach", "--frames", "1", "--plane", "x=24"});
  CHECK(past.code != 0);
  CHECK_THAT(past.err, Catch::Contains("--plane x=24") && Catch::Contains("below 24"));
}

BACKEND_TEST("a daemon restarting under the gateway is noticed by a remote client, and attached to again",
             "[integration][remote]") {
  RuntimeDir rt;
  auto daemon = std::make_optional(start_daemon("run1", backend));
  auto gateway = start_gateway();
  auto remote = attach_remote("run1");
  RemoteView view;
  REQUIRE(watch_whole_field(remote, "u", view));
  const auto session = remote.hello().session;
  daemon->signal(SIGKILL);
  (void)daemon->wait_for(10s);
  // The gateway saw the publisher go and says so: the client is told which run and session
  // ended and what to do (not left to notice a silence).
  Errc code{};
  const auto msg = error_when_gone(remote, view, code);
  CHECK(code == Errc::daemon_gone);
  CHECK_THAT(msg, Catch::Contains("publisher 'run1' (session " + session + ")") &&
                      Catch::Contains("Attach again once a daemon named 'run1' runs"));
  daemon.reset();
  daemon.emplace(start_daemon("run1", backend));
  auto again = attach_remote("run1");
  CHECK(again.hello().session != session);
  REQUIRE(watch_whole_field(again, "u", view));
  CHECK(view.header.session == again.hello().session);
}

BACKEND_TEST("a gateway killed under a remote client leaves the simulation running; the client notices and re-attaches",
             "[integration][remote]") {
  RuntimeDir rt;
  auto daemon = start_daemon("run1", backend);
  auto gateway = std::make_optional(start_gateway());
  auto remote = attach_remote("run1");
  remote.watch({"u", ViewRegion::fit(128, 128, 64, 64, 1, 64, 64), "u8"});
  RemoteView view;
  REQUIRE(remote.next_view(view, 10s));
  const auto session = remote.hello().session;
  const auto step = view.header.step;
  gateway->signal(SIGKILL);
  (void)gateway->wait_for(10s);
  // The connection's drop says it, at once: not a heartbeat's silence (which would mean a frozen
  // gateway or a lost network).
  Errc code{};
  const auto msg = error_when_gone(remote, view, code);
  CHECK(code == Errc::daemon_gone);
  CHECK_THAT(msg, Catch::Contains("the connection to the gateway at " + gateway_url() + " dropped") &&
                      Catch::Contains("Attach again"));
  gateway.reset();
  gateway.emplace(start_gateway());
  // Attached again: the same run, which went on meanwhile, is in view.
  auto again = attach_remote("run1");
  CHECK(again.hello().session == session);
  again.watch({"u", ViewRegion::fit(128, 128, 64, 64, 1, 64, 64), "u8"});
  REQUIRE(again.next_view(view, 30s));
  CHECK(view.header.session == session);
  CHECK(view.header.step > step);
  CHECK(view.header.view_w == 64);
}

TEST_CASE("a remote client that stops reading delays no other client", "[integration][remote][host]") {
  RuntimeDir rt;
  auto daemon = start_daemon("run1", Backend::host, {"--fps", "60"});
  auto gateway = start_gateway();
  auto frozen = attach_remote("run1");
  frozen.watch({"u", ViewRegion::fit(128, 128, 256, 256, 1, 64, 64), "f32"});
  auto reader = attach_remote("run1");
  reader.watch({"u", ViewRegion::fit(128, 128, 256, 256, 1, 64, 64), "f32"});
  RemoteView view;
  std::uint64_t first = 0, last = 0;
  for (int i = 0; i < 40; ++i) {
    REQUIRE(reader.next_view(view, 5s));
    if (i == 0) first = view.header.seq;
    last = view.header.seq;
  }
  CHECK(last > first);
  // The frozen client's views were never read; the gateway sent it its credits' worth and no more,
  // and the publisher counts the gateway as one reader of two sessions at most.
  CHECK(stats("run1").readers <= 1);
}

TEST_CASE("the gateway answers malformed and foreign requests with errors and goes on serving",
          "[integration][remote][host]") {
  RuntimeDir rt;
  auto daemon = start_daemon("run1", Backend::host);
  auto gateway = start_gateway();
  RawGatewayPeer peer;
  auto a = peer.exchange("", remote::encode_gateway_request(remote::Op::list, 5, proto::NoArgs{}));
  CHECK(a.reply.ok);
  // Another version of the remote protocol: told which versions there are.
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_map(4), pk.pack("v"), pk.pack(99), pk.pack("op"), pk.pack("list"), pk.pack("id"), pk.pack(6), pk.pack("args"),
      pk.pack_map(0);
  a = peer.exchange("", std::string(buf.data(), buf.size()));
  CHECK(a.reply.error.code == "version_mismatch");
  CHECK_THAT(a.reply.error.message,
             Catch::Contains("99") && Catch::Contains("remote protocols 1 to " + std::to_string(remote::kVersion)));
  a = peer.exchange("", remote::encode_gateway_request(remote::Op::view, 7, remote::ViewArgs{"run1", "u", 0, 10}));
  CHECK(a.reply.error.code == "out_of_range");
  a = peer.exchange("../etc", proto::encode_request(proto::Op::stats, 9, "", proto::NoArgs{}));
  CHECK(a.reply.error.code == "bad_value");
  a = peer.exchange("run1", std::string("\xc1\x00garbage", 9));
  CHECK(a.reply.error.code == "bad_message");
  // Still serving.
  auto remote = attach_remote("run1");
  CHECK(remote.stats().name == "run1");
}

TEST_CASE("through the gateway, a request without a session or before hello is refused as the local socket refuses it",
          "[integration][remote][host]") {
  RuntimeDir rt;
  auto daemon = start_daemon("run1", Backend::host);
  auto gateway = start_gateway();
  RawGatewayPeer peer;
  // No session: missing_field, in the local socket's words; a shutdown without one stops nothing.
  for (const auto op : {proto::Op::stats, proto::Op::shutdown, proto::Op::handles}) {
    const auto a = peer.exchange("run1", proto::encode_request(op, 11, "", proto::NoArgs{}));
    INFO(proto::name_of(op));
    CHECK_FALSE(a.reply.ok);
    CHECK(a.reply.id == 11);
    CHECK(a.reply.error.code == "missing_field");
    CHECK_THAT(a.reply.error.message, Catch::Contains("lacks the 'session' field") && Catch::Contains("hello"));
  }
  CHECK(daemon.running());
  // The publisher's session, but no hello on this connection: not_attached, as locally.
  const auto session = stats("run1").session;
  auto a = peer.exchange("run1", proto::encode_request(proto::Op::shutdown, 12, session, proto::NoArgs{}));
  CHECK(a.reply.error.code == "not_attached");
  CHECK_THAT(a.reply.error.message, Catch::Contains("needs a 'hello'"));
  CHECK(daemon.running());
  // After hello, the session works; handles stay a local client's.
  a = peer.exchange("run1", proto::encode_request(proto::Op::hello, 13, "", proto::HelloArgs{"raw client", ::getpid()}));
  REQUIRE(a.reply.ok);
  CHECK(proto::decode_as<proto::HelloResult>(a.reply.result, "hello").session == session);
  a = peer.exchange("run1", proto::encode_request(proto::Op::stats, 14, session, proto::NoArgs{}));
  CHECK(a.reply.ok);
  a = peer.exchange("run1", proto::encode_request(proto::Op::handles, 15, session, proto::NoArgs{}));
  CHECK(a.reply.error.code == "unsupported");
}

TEST_CASE("every reply of the gateway is valid UTF-8, even one quoting bytes that are not",
          "[integration][remote][host]") {
  RuntimeDir rt;
  auto daemon = start_daemon("run1", Backend::host);
  auto gateway = start_gateway();
  RawGatewayPeer peer;
  const std::string bad = "run\xff\xfe\xc0\xaf";
  // An address with bad bytes, quoted back in the error.
  auto a = peer.exchange(bad, proto::encode_request(proto::Op::stats, 21, "", proto::NoArgs{}));
  CHECK(a.reply.error.code == "bad_value");
  CHECK(all_strings_utf8(a.body));
  CHECK_THAT(a.reply.error.message, Catch::Contains("\\xFF\\xFE"));
  // Bad bytes inside a request's strings: refused, and quoted escaped; to a publisher and to the gateway.
  a = peer.exchange("run1", proto::encode_request(std::string_view("st\xff" "ats"), 22, "", proto::NoArgs{}));
  CHECK(a.reply.error.code == "bad_message");
  CHECK(a.reply.id == 22);
  CHECK(all_strings_utf8(a.body));
  CHECK_THAT(a.reply.error.message, Catch::Contains("UTF-8") && Catch::Contains("st\\xFFats"));
  a = peer.exchange("", remote::encode_gateway_request(remote::Op::hello, 23, remote::HelloArgs{"me\xe2\x82"}));
  CHECK(a.reply.error.code == "bad_message");
  CHECK(a.reply.id == 23);
  CHECK(all_strings_utf8(a.body));
  // Through the daemon's own socket too.
  RawPeer local("run1");
  const auto r = local.send(proto::encode_request(std::string_view("he\xc3llo"), 24, "", proto::NoArgs{}));
  CHECK(r.error.code == "bad_message");
  CHECK(is_utf8(r.error.message));
}

TEST_CASE("oversized and undecodable requests to the gateway get bad_message, as docs/remote.md says",
          "[integration][remote][host]") {
  RuntimeDir rt;
  auto daemon = start_daemon("run1", Backend::host);
  auto gateway = start_gateway();
  RawGatewayPeer peer;
  // Over 64 KiB (and under the 1 MiB a connection may carry): bad_message with the request's id,
  // on a connection that still works.
  proto::SetArgs big;
  big.params.emplace();
  for (int i = 0; i < 3000; ++i) (*big.params)["parameter-with-a-long-name-" + std::to_string(i)] = 1.0;
  const auto session = stats("run1").session;
  const auto oversized = proto::encode_request(proto::Op::set, 31, session, big);
  REQUIRE(oversized.size() > remote::kMaxRequestBytes);
  auto a = peer.exchange("run1", oversized);
  CHECK(a.reply.error.code == "bad_message");
  CHECK(a.reply.id == 31);
  CHECK_THAT(a.reply.error.message, Catch::Contains("65536"));
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_map(4), pk.pack("v"), pk.pack(remote::kVersion), pk.pack("op"), pk.pack("list"), pk.pack("id"), pk.pack(32),
      pk.pack("args"), pk.pack_map(1), pk.pack("pad"), pk.pack(std::string(100'000, 'x'));
  a = peer.exchange("", std::string(buf.data(), buf.size()));
  CHECK(a.reply.error.code == "bad_message");
  CHECK(a.reply.id == 32);
  // Under 64 KiB but more entries than the decoder builds: a reply too (5 000 parameters).
  msgpack::sbuffer many;
  msgpack::packer<msgpack::sbuffer> mp(many);
  mp.pack_map(5), mp.pack("v"), mp.pack(proto::kVersion), mp.pack("op"), mp.pack("set"), mp.pack("id"), mp.pack(33),
      mp.pack("session"), mp.pack(session), mp.pack("args"), mp.pack_map(1), mp.pack("params"), mp.pack_map(5000);
  for (int i = 0; i < 5000; ++i) mp.pack("p" + std::to_string(i)), mp.pack(1);
  const std::string wide(many.data(), many.size());
  REQUIRE(wide.size() < remote::kMaxRequestBytes);
  a = peer.exchange("run1", wide);
  CHECK(a.reply.error.code == "bad_message");
  CHECK(a.reply.id == 33);
  // Bodies the gateway cannot decode at all: answered with id 0.
  for (const std::string& body : {std::string(), std::string("\xc1"), std::string("\x93\x01\x02\x03"),
                                  std::string("\x81\xa1v\x01"), std::string(70'000, '\x00')}) {
    a = peer.exchange("", body);
    CHECK(a.reply.error.code != "");
    CHECK_FALSE(a.reply.ok);
    CHECK(a.reply.id == 0);
  }
  // A message of the wrong number of parts.
  peer.send({"", remote::encode_gateway_request(remote::Op::list, 34, proto::NoArgs{}), "extra"});
  auto extra = peer.reply();
  REQUIRE(extra);
  CHECK(extra->reply.error.code == "bad_message");
  // The same connection is still served.
  a = peer.exchange("", remote::encode_gateway_request(remote::Op::list, 35, proto::NoArgs{}));
  CHECK(a.reply.ok);
  CHECK(a.reply.id == 35);
}

TEST_CASE("the gateway gives its lease back when the last remote viewer of a publisher leaves",
          "[integration][remote][host]") {
  RuntimeDir rt;
  auto daemon = start_daemon("run1", Backend::host);
  auto gateway = start_gateway();
  {
    auto remote = attach_remote("run1");
    RemoteView view;
    REQUIRE(watch_whole_field(remote, "u", view));
    CHECK(stats("run1").readers == 1);
  }  // the viewer leaves
  // No reader, no copy: the lease goes (docs/remote.md: within a second) and publishing stops.
  const auto s = wait_stats("run1", [](const StatsView& x) { return x.readers == 0; }, 10s);
  CHECK(s.readers == 0);
  const auto published = s.frames_published;
  const auto step = s.step;
  (void)wait_stats("run1", [&](const StatsView& x) { return x.step > step + 100; });
  CHECK(stats("run1").frames_published == published);
}

BACKEND_TEST("a frame taken through the gateway holds every float32 field of one frame, as locally",
             "[integration][remote]") {
  RuntimeDir rt;
  auto daemon = start_daemon("run1", backend, {}, "120x90");
  auto gateway = start_gateway();
  auto remote = attach_remote("run1");
  remote.pause();
  std::this_thread::sleep_for(300ms);
  auto local = attach("run1");
  auto truth = local.next_frame(10s);
  REQUIRE(truth);
  auto frame = remote.next_frame(10s);
  REQUIRE(frame);
  CHECK(frame->info().step == truth->info().step);
  CHECK(frame->device() == -1);  // host memory, whatever the publisher's backend
  REQUIRE_FALSE(frame->verify());
  const auto& d = remote.description();
  for (std::size_t i = 0; i < d.fields.size(); ++i) {
    const auto& f = d.fields[i];
    INFO("field " << f.name);
    REQUIRE(f.dtype == "float32");
    std::vector<float> want(f.bytes / 4), got(f.bytes / 4);
    truth->copy_to_host(f.offset, std::as_writable_bytes(std::span(want)));
    frame->copy_to_host(f.offset, std::as_writable_bytes(std::span(got)));
    CHECK(got == want);
    REQUIRE(frame->host_field(i) != nullptr);
    CHECK(std::equal(got.begin(), got.end(), frame->host_field(i)));
  }
  // Paused: nothing newer to give.
  CHECK_FALSE(remote.next_frame(300ms));
  remote.step(1);
  auto next = remote.next_frame(10s);
  REQUIRE(next);
  CHECK(next->info().step > frame->info().step);
}

BACKEND_TEST("cuview::open picks the run a name and gateways denote, local or remote, and both give its frames",
             "[integration][remote]") {
  RuntimeDir rt;
  auto daemon = start_daemon("run1", backend, {}, "64x48");
  auto gateway = start_gateway();
  auto local = cuview::open({.name = "run1", .client = "open test"});
  auto remote = cuview::open({.name = "run1", .remote = {gateway_url()}, .client = "open test"});
  CHECK(dynamic_cast<Group*>(local.get()) != nullptr);
  CHECK(dynamic_cast<RemoteGroup*>(remote.get()) != nullptr);
  CHECK(local->via().empty());
  CHECK(remote->via() == std::vector<std::string>{gateway_url()});
  for (auto* run : {local.get(), remote.get()}) {
    INFO((run->via().empty() ? "local" : "remote"));
    CHECK_FALSE(run->decomposed());
    CHECK(run->size() == 1);
    CHECK(run->extent() == Extent::grid(64, 48));
    CHECK(run->leader().hello().session == local->leader().hello().session);
    auto frames = run->next(10s);
    REQUIRE(frames);
    REQUIRE_FALSE(frames->verify());
    std::vector<std::byte> field(frames->global_field_bytes(0));
    frames->copy_field_to_host(0, field);
    CHECK(std::any_of(field.begin(), field.end(), [](std::byte b) { return b != std::byte{0}; }));
  }
  try {
    (void)cuview::open({.name = "nothing-here", .client = "open test"});
    FAIL("opened a name nothing runs under");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::no_daemon);
    CHECK_THAT(std::string(e.what()), Catch::Contains("nothing-here"));
  }
}
