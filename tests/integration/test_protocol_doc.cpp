// docs/protocol.md against a running daemon: every key the document lists for `describe` and
// `stats` is what the daemon sends (no more, no fewer), the descriptor socket's timeout, and the
// counters' meanings (frames_published, frames_skipped). An outside client is written from the
// document alone, so where the two differ, these tests fail.
#include <poll.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <zmq.hpp>

#include "backend_test.hpp"
#include "protocol_client.hpp"
#include "cuview/client.hpp"
#include "cuview/fd_passing.hpp"
#include "cuview/runtime_dir.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;

namespace {

std::string protocol_doc() {
  std::ifstream in(std::string(CUVIEW_SOURCE_DIR) + "/docs/protocol.md");
  REQUIRE(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// "a, b[], c{}, d (a remark)" → {a, b, c, d}
std::set<std::string> names_in(const std::string& text) {
  static const std::regex kRemark(R"(\([^)]*\))"), kName(R"([A-Za-z_][A-Za-z0-9_]*)");
  const std::string list = std::regex_replace(text, kRemark, "");
  std::set<std::string> out;
  for (std::sregex_iterator it(list.begin(), list.end(), kName), end; it != end; ++it) out.insert(it->str());
  return out;
}

/// The keys the document gives for op `op`'s result: its table row's third column.
std::set<std::string> documented_result(const std::string& doc, const std::string& op) {
  const std::regex row("\\| `" + op + "` \\| [^|]* \\| `([^`|]*)` \\|");
  std::smatch m;
  REQUIRE(std::regex_search(doc, m, row));
  return names_in(m[1]);
}

/// The keys the document gives for `name = {…}` or `name[i] = {…}` in the notes.
std::set<std::string> documented_object(const std::string& doc, const std::string& name) {
  const std::regex obj("`" + name + R"((\[i\])? = \{([^}]*)\})");
  std::smatch m;
  INFO("protocol.md has no `" << name << " = {...}`");
  REQUIRE(std::regex_search(doc, m, obj));
  return names_in(m[2]);
}

std::set<std::string> keys(const msgpack::object& map) {
  REQUIRE(map.type == msgpack::type::MAP);
  std::set<std::string> out;
  for (std::uint32_t i = 0; i < map.via.map.size; ++i) out.insert(map.via.map.ptr[i].key.as<std::string>());
  return out;
}

const msgpack::object& at(const msgpack::object& map, const std::string& key) {
  for (std::uint32_t i = 0; i < map.via.map.size; ++i)
    if (map.via.map.ptr[i].key.as<std::string>() == key) return map.via.map.ptr[i].val;
  FAIL("no key '" << key << "'");
  throw;
}

const msgpack::object& first(const msgpack::object& array) {
  REQUIRE(array.type == msgpack::type::ARRAY);
  REQUIRE(array.via.array.size > 0);
  return array.via.array.ptr[0];
}

void check_same(const std::set<std::string>& sent, const std::set<std::string>& documented, const std::string& what) {
  for (const auto& k : sent) {
    INFO(what << ": the daemon sends '" << k << "', which protocol.md does not list");
    CHECK(documented.count(k) == 1);
  }
  for (const auto& k : documented) {
    INFO(what << ": protocol.md lists '" << k << "', which the daemon does not send");
    CHECK(sent.count(k) == 1);
  }
}

}  // namespace

TEST_CASE("describe and stats send exactly the keys protocol.md lists", "[integration][protocol][host]") {
  const std::string doc = protocol_doc();
  RuntimeDir rt;
  // N-body: fields, a particle set with bounds, a drawing input, parameters and presets.
  auto daemon = start_daemon("doc", Backend::host, {"--sim", "nbody", "--sim-option", "bodies=256"}, "64x64");
  ProtocolClient c("doc", "protocol.md test");
  const auto d = c.request("describe", proto::NoArgs{});
  check_same(keys(d.result), documented_result(doc, "describe"), "describe");
  check_same(keys(first(at(d.result, "fields"))), documented_object(doc, "fields"), "describe.fields[i]");
  check_same(keys(first(at(d.result, "particles"))), documented_object(doc, "particles"), "describe.particles[i]");
  check_same(keys(first(at(d.result, "params"))), documented_object(doc, "params"), "describe.params[i]");
  check_same(keys(first(at(d.result, "presets"))), documented_object(doc, "presets"), "describe.presets[i]");
  check_same(keys(first(at(d.result, "inputs"))), documented_object(doc, "inputs"), "describe.inputs[i]");
  check_same(keys(first(at(d.result, "grids"))), documented_object(doc, "grids"), "describe.grids[i]");
  const auto s = c.request("stats", proto::NoArgs{});
  check_same(keys(s.result), documented_result(doc, "stats"), "stats");
  check_same(keys(at(s.result, "checkpoint")), documented_object(doc, "checkpoint"), "stats.checkpoint");
  const auto h = c.request("hello", proto::HelloArgs{"again", ::getpid()});
  check_same(keys(h.result), documented_result(doc, "hello"), "hello");
  const auto handles = c.request("handles", proto::NoArgs{});
  check_same(keys(handles.result), documented_result(doc, "handles"), "handles");
}

TEST_CASE("the descriptor socket drops a client that sends nothing after the second protocol.md says",
          "[integration][protocol][host]") {
  const std::string doc = protocol_doc();
  REQUIRE_THAT(doc, Catch::Contains("A client that sends nothing is disconnected after one second"));
  RuntimeDir rt;
  auto daemon = start_daemon("doc", Backend::host, {}, "64x64");
  const auto t0 = std::chrono::steady_clock::now();
  UniqueFd s = connect_fd_socket(InstancePaths("doc").fds.string());
  pollfd p{s.get(), POLLIN, 0};
  REQUIRE(::poll(&p, 1, 10000) == 1);  // the daemon hangs up: readable with EOF
  char byte;
  CHECK(::read(s.get(), &byte, 1) == 0);
  const auto waited = std::chrono::steady_clock::now() - t0;
  CHECK(waited >= 900ms);
  CHECK(waited < 5s);  // one second, with the slack a loaded machine needs
}

BACKEND_TEST("frames_published counts every frame a reader can hold, when it can hold it", "[integration][protocol]") {
  RuntimeDir rt;
  auto daemon = start_daemon("doc", backend, {"--fps", "0"});
  auto c = attach("doc");
  for (int i = 0; i < 40; ++i) {
    auto f = c.next_frame(10s);
    REQUIRE(f);
    const auto published = c.stats().frames_published;
    INFO("held frame " << f->info().seq << ", stats said " << published << " published");
    REQUIRE(published >= f->info().seq);
  }
}

BACKEND_TEST("frames_skipped counts frames due by --fps that found every slot held, not steps",
             "[integration][protocol]") {
  RuntimeDir rt;
  constexpr double kFps = 20;
  auto daemon = start_daemon("doc", backend, {"--slots", "1", "--fps", "20"});
  // A reader holds the only slot: from now on every due frame is skipped.
  ChildProcess holder({bin("cuview-ctl"), "--name", "doc", "attach", "--frames", "1", "--hold-ms", "600000"});
  (void)wait_stats("doc", [](const StatsView& s) { return s.held_slots == 1; });
  const auto before = stats("doc");
  const auto t0 = std::chrono::steady_clock::now();
  (void)wait_stats("doc", [&](const StatsView& s) { return s.step > before.step + 200; });
  std::this_thread::sleep_for(1500ms);  // a span of time to count frame periods over, not a synchronisation
  const auto after = stats("doc");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto skipped = after.frames_skipped - before.frames_skipped;
  INFO(skipped << " skipped over " << seconds << " s at --fps 20, " << after.step - before.step << " steps");
  CHECK(after.frames_published == before.frames_published);  // nothing could be published
  CHECK(skipped >= 1);
  CHECK(skipped <= static_cast<std::uint64_t>(kFps * seconds * 1.2 + 2));
  CHECK(skipped < after.step - before.step);
}

/// Whether a row of the document's op table has `op` in its first cell ("| `pause`, `resume` |").
static bool documented_op(const std::string& doc, const std::string& op) {
  const std::regex row("\\n\\| [^|\\n]*`" + op + "`[^|\\n]*\\|");
  return std::regex_search(doc, row);
}

TEST_CASE("every op of the protocol's table is documented and answered by its own handler",
          "[integration][protocol][host]") {
  const std::string doc = protocol_doc();
  RuntimeDir rt;
  auto daemon = start_daemon("ops", Backend::host, {"--sim", "lbm"}, "64x32");
  ProtocolClient c("ops", "op table test");
  for (const auto& spec : proto::kOps) {  // shutdown comes last
    const std::string op(spec.name);
    INFO("op " << op);
    CHECK(documented_op(doc, op));
    // No arguments: an op either does its work or refuses them by name, never "not handled".
    const auto hello_args = proto::HelloArgs{"op table test", ::getpid()};
    const std::string bytes = spec.op == proto::Op::hello
                                  ? proto::encode_request(spec.op, c.id++, "", hello_args)
                                  : proto::encode_request(spec.op, c.id++, c.session, proto::NoArgs{});
    c.sock.send(zmq::buffer(bytes));
    zmq::message_t m;
    REQUIRE(c.sock.recv(m));
    const auto reply = proto::decode_reply(m.to_string_view());
    INFO(reply.error.code << ": " << reply.error.message);
    CHECK((reply.ok || (reply.error.code != "internal" && reply.error.code != "unknown_op")));
    if (spec.op == proto::Op::detach) (void)c.request("hello", hello_args);
  }
  CHECK(daemon.wait_for(std::chrono::seconds(10)) == 0);  // `shutdown` was answered and obeyed
}
