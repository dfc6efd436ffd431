// CURVE keys in files (like ssh's), authorized_keys and known_gateways, and the ZAP handler
// guarding a real ROUTER on loopback TCP.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <zmq_addon.hpp>

#include "cuview/error.hpp"
#include "cuview/remote/curve_keys.hpp"
#include "authorized_keys.hpp"  // the gateway's half
#include "zap_handler.hpp"

using namespace cuview;
using namespace cuview::remote;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

/// A fresh private directory, removed with everything in it.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "cuview-curve-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write_text(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::trunc);
  out << text;
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), {}};
}

unsigned mode_of(const fs::path& file) {
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

/// The Error `f` throws, or a failed test.
template <class F>
Error error_of(F&& f) {
  std::optional<Error> caught;
  try {
    f();
  } catch (const Error& e) {
    caught = e;
  }
  if (!caught) FAIL("no cuview::Error was thrown");
  return *caught;
}

}  // namespace

TEST_CASE("a key pair written to files reads back the same; the secret file is 0600, the .pub 0644", "[remote][curve]") {
  TempDir dir;
  const auto keys = generate_keypair();
  CHECK(keys.public_key.size() == 40);
  CHECK(keys.secret_key.size() == 40);
  const fs::path file = dir.path / "sub" / "client.key";
  write_keypair(file, keys, "alice@laptop");

  CHECK(mode_of(file) == 0600);
  CHECK(mode_of(file.string() + ".pub") == 0644);
  CHECK(mode_of(dir.path / "sub") == 0700);
  CHECK(read_text(file.string() + ".pub") == keys.public_key + " alice@laptop\n");
  CHECK(read_text(file) == "curve-secret " + keys.secret_key + " " + keys.public_key + " alice@laptop\n");
  const auto back = read_keypair(file);
  CHECK(back.public_key == keys.public_key);
  CHECK(back.secret_key == keys.secret_key);
}

TEST_CASE("an existing secret key file is never overwritten", "[remote][curve]") {
  TempDir dir;
  const fs::path file = dir.path / "client.key";
  const auto first = generate_keypair();
  write_keypair(file, first, "");
  const auto e = error_of([&] { write_keypair(file, generate_keypair(), ""); });
  CHECK(e.code() == Errc::bad_value);
  CHECK_THAT(e.what(), Catch::Contains(file.string()) && Catch::Contains("already exists"));
  CHECK(read_keypair(file).secret_key == first.secret_key);
}

TEST_CASE("a secret key file readable by group or others is refused with the chmod to run", "[remote][curve]") {
  TempDir dir;
  const fs::path file = dir.path / "gateway.key";
  write_keypair(file, generate_keypair(), "");
  REQUIRE(::chmod(file.c_str(), 0644) == 0);
  const auto e = error_of([&] { (void)read_keypair(file); });
  CHECK(e.code() == Errc::access);
  CHECK_THAT(e.what(), Catch::Contains("permissions 0644 for '" + file.string() + "' are too open") &&
                           Catch::Contains("chmod 600 '" + file.string() + "'"));
}

TEST_CASE("a secret key file whose public key belongs to another secret is refused, naming file and line",
          "[remote][curve]") {
  TempDir dir;
  const fs::path file = dir.path / "client.key";
  const auto a = generate_keypair();
  const auto b = generate_keypair();
  write_text(file, "# my key\ncurve-secret " + a.secret_key + " " + b.public_key + "\n");
  REQUIRE(::chmod(file.c_str(), 0600) == 0);
  const auto e = error_of([&] { (void)read_keypair(file); });
  CHECK(e.code() == Errc::bad_value);
  CHECK_THAT(e.what(), Catch::Contains(file.string() + ":2") && Catch::Contains("does not belong"));

  write_text(file, "curve-secret " + a.secret_key.substr(0, 39) + " " + a.public_key + "\n");
  CHECK_THAT(error_of([&] { (void)read_keypair(file); }).what(),
             Catch::Contains(file.string() + ":1") && Catch::Contains("not a CURVE key"));
}

TEST_CASE("the gateway's key is made on its first start and read on later ones", "[remote][curve]") {
  TempDir dir;
  const fs::path file = dir.path / "cuview" / "gateway.key";
  const auto made = load_or_create_keypair(file, "gateway@host");
  CHECK(mode_of(file) == 0600);
  const auto again = load_or_create_keypair(file, "gateway@host");
  CHECK(again.public_key == made.public_key);
  CHECK(again.secret_key == made.secret_key);
}

TEST_CASE("the key files live in $XDG_CONFIG_HOME/cuview, else ~/.config/cuview", "[remote][curve]") {
  const char* old_xdg = std::getenv("XDG_CONFIG_HOME");
  const std::string saved = old_xdg != nullptr ? old_xdg : "";
  ::setenv("XDG_CONFIG_HOME", "/somewhere/config", 1);
  CHECK(default_client_key() == fs::path("/somewhere/config/cuview/client.key"));
  CHECK(default_authorized_keys() == fs::path("/somewhere/config/cuview/authorized_keys"));
  ::unsetenv("XDG_CONFIG_HOME");
  CHECK(config_dir() == fs::path(std::getenv("HOME")) / ".config" / "cuview");
  CHECK(default_known_gateways().filename() == "known_gateways");
  CHECK(default_gateway_key().filename() == "gateway.key");
  if (old_xdg != nullptr) ::setenv("XDG_CONFIG_HOME", saved.c_str(), 1);
}

TEST_CASE("authorized_keys holds keys with or without comments among comment lines and blanks", "[remote][curve]") {
  TempDir dir;
  const auto alice = generate_keypair();
  const auto bob = generate_keypair();
  const auto stranger = generate_keypair();
  const fs::path file = dir.path / "authorized_keys";
  write_text(file, "# who may view this host's simulations\n\n" + alice.public_key + " alice on her laptop\n  " +
                       bob.public_key + "\n");
  const auto keys = AuthorizedKeys::read(file);
  CHECK(keys.exists());
  CHECK(keys.size() == 2);
  CHECK(keys.comment_of(alice.public_key) == std::optional<std::string>("alice on her laptop"));
  CHECK(keys.comment_of(bob.public_key) == std::optional<std::string>(""));
  CHECK_FALSE(keys.comment_of(stranger.public_key));
}

TEST_CASE("authorized_keys: a malformed line is refused naming file:line; a missing file authorises no one",
          "[remote][curve]") {
  TempDir dir;
  const fs::path file = dir.path / "authorized_keys";
  write_text(file, "# ok\n" + generate_keypair().public_key + " ok\nssh-ed25519 AAAAC3Nza me@host\n");
  const auto e = error_of([&] { (void)AuthorizedKeys::read(file); });
  CHECK(e.code() == Errc::bad_value);
  CHECK_THAT(e.what(), Catch::Contains(file.string() + ":3"));

  const auto none = AuthorizedKeys::read(dir.path / "absent");
  CHECK_FALSE(none.exists());
  CHECK(none.size() == 0);
  CHECK_FALSE(none.comment_of(generate_keypair().public_key));
}

TEST_CASE("a key added to authorized_keys is honoured after reload_if_changed, without a restart", "[remote][curve]") {
  TempDir dir;
  const auto alice = generate_keypair();
  const auto bob = generate_keypair();
  const fs::path file = dir.path / "authorized_keys";
  write_text(file, alice.public_key + " alice\n");
  auto keys = AuthorizedKeys::read(file);
  CHECK_FALSE(keys.reload_if_changed());
  CHECK_FALSE(keys.comment_of(bob.public_key));

  write_text(file, alice.public_key + " alice\n" + bob.public_key + " bob\n");
  CHECK(keys.reload_if_changed());
  CHECK(keys.comment_of(bob.public_key) == std::optional<std::string>("bob"));
  CHECK_FALSE(keys.reload_if_changed());

  SECTION("a malformed edit refuses everyone until it is fixed") {
    write_text(file, alice.public_key + " alice\nnot-a-key\n");
    CHECK(error_of([&] { (void)keys.reload_if_changed(); }).code() == Errc::bad_value);
    CHECK_FALSE(keys.comment_of(alice.public_key));
    CHECK_FALSE(keys.reload_if_changed());  // said once per change
  }
  SECTION("removing the file refuses everyone") {
    fs::remove(file);
    CHECK(keys.reload_if_changed());
    CHECK_FALSE(keys.exists());
    CHECK_FALSE(keys.comment_of(alice.public_key));
  }
}

TEST_CASE("known_gateways pins a gateway's first key and refuses a changed one, naming the line to remove",
          "[remote][curve]") {
  TempDir dir;
  const fs::path file = dir.path / "cfg" / "known_gateways";
  const auto first = generate_keypair();
  const auto other = generate_keypair();
  auto known = KnownGateways::read(file);
  CHECK_FALSE(known.key_for("gpu1:5555"));

  known.check_or_pin("gpu1:5555", first.public_key);  // not pinned: pinned now
  known.check_or_pin("gpu2:5555", other.public_key);
  CHECK(mode_of(file) == 0600);
  CHECK(mode_of(file.parent_path()) == 0700);
  CHECK(read_text(file) == "gpu1:5555 " + first.public_key + "\ngpu2:5555 " + other.public_key + "\n");

  auto reread = KnownGateways::read(file);
  CHECK(reread.key_for("gpu1:5555") == first.public_key);
  reread.check_or_pin("gpu1:5555", first.public_key);  // the same key: fine
  const auto e = error_of([&] { reread.check_or_pin("gpu2:5555", first.public_key); });
  CHECK(e.code() == Errc::access);
  CHECK_THAT(e.what(), Catch::Contains("IDENTIFICATION HAS CHANGED") && Catch::Contains("line 2 of '" + file.string()) &&
                           Catch::Contains(first.public_key));
  CHECK(KnownGateways::read(file).key_for("gpu2:5555") == other.public_key);  // nothing re-pinned
}

TEST_CASE("require_key takes an offered key once, then the pinned one; with neither it says how to learn it",
          "[remote][curve]") {
  TempDir dir;
  const fs::path file = dir.path / "known_gateways";
  const auto gateway = generate_keypair();
  auto known = KnownGateways::read(file);
  const auto e = error_of([&] { (void)known.require_key("gpu1:5555", std::nullopt); });
  CHECK(e.code() == Errc::access);
  CHECK_THAT(e.what(), Catch::Contains("cuview-gateway --print-key") &&
                           Catch::Contains("tcp://gpu1:5555?key=<key>"));
  CHECK(known.require_key("gpu1:5555", gateway.public_key) == gateway.public_key);
  CHECK(KnownGateways::read(file).require_key("gpu1:5555", std::nullopt) == gateway.public_key);
  CHECK(error_of([&] { (void)known.require_key("gpu1:5555", generate_keypair().public_key); }).code() == Errc::access);
  CHECK(error_of([&] { known.pin("gpu3:1", "short"); }).code() == Errc::bad_value);

  write_text(file, "gpu1:5555 " + gateway.public_key + " trailing\n");
  CHECK_THAT(error_of([&] { (void)KnownGateways::read(file); }).what(), Catch::Contains(file.string() + ":1"));
}

// ---- end to end: a CURVE ROUTER on loopback TCP behind the ZAP handler ----

namespace {

/// A ROUTER with the gateway's key behind a ZapHandler that accepts one client key.
struct CurveServer {
  zmq::context_t context;
  CurveKeyPair keys = generate_keypair();
  CurveKeyPair authorised = generate_keypair();
  std::mutex mutex;
  std::condition_variable logged;
  std::vector<std::string> log;
  ZapHandler zap{context,
                 [this](std::string_view, std::string_view key, std::string_view) -> std::optional<std::string> {
                   if (key == authorised.public_key) return "alice";
                   return std::nullopt;
                 },
                 [this](const std::string& line) {
                   std::lock_guard lock(mutex);
                   log.push_back(line);
                   logged.notify_all();
                 }};
  zmq::socket_t router{context, zmq::socket_type::router};
  std::string endpoint;

  CurveServer() {
    router.set(zmq::sockopt::linger, 0);
    router.set(zmq::sockopt::rcvtimeo, 500);
    apply_server_curve(router, keys, "cuview-test");
    router.bind("tcp://127.0.0.1:*");
    endpoint = router.get(zmq::sockopt::last_endpoint);
  }

  /// A DEALER of this server's, connected; `setup` makes it CURVE (or not).
  zmq::socket_t client(const std::function<void(zmq::socket_t&)>& setup) {
    zmq::socket_t s(context, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 0);
    s.set(zmq::sockopt::rcvtimeo, 500);
    setup(s);
    s.connect(endpoint);
    return s;
  }

  /// Answers one message with "pong"; false if none came within 500 ms.
  bool answer_one() {
    std::vector<zmq::message_t> parts;
    if (!zmq::recv_multipart(router, std::back_inserter(parts))) return false;
    REQUIRE(parts.size() == 2);
    CHECK(parts[0].size() > 0);
    std::array<zmq::const_buffer, 2> reply{zmq::buffer(parts[0].data(), parts[0].size()), zmq::str_buffer("pong")};
    (void)zmq::send_multipart(router, reply);
    return true;
  }

  /// Waits for a log line containing `text` (the handler's real signal of a refusal).
  bool wait_logged(const std::string& text, std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mutex);
    return logged.wait_for(lock, timeout, [&] {
      return std::any_of(log.begin(), log.end(), [&](const auto& l) { return l.find(text) != std::string::npos; });
    });
  }
};

std::optional<std::string> receive(zmq::socket_t& s) {
  zmq::message_t m;
  if (!s.recv(m)) return std::nullopt;
  return m.to_string();
}

}  // namespace

TEST_CASE("CURVE end to end: a client with an authorised key is answered", "[remote][curve]") {
  CurveServer server;
  auto client = server.client([&](auto& s) { apply_client_curve(s, server.authorised, server.keys.public_key); });
  client.send(zmq::str_buffer("ping"));
  bool answered = false;
  for (int i = 0; i < 10 && !answered; ++i) answered = server.answer_one();
  REQUIRE(answered);
  CHECK(receive(client) == "pong");
  CHECK(server.zap.acceptances() >= 1);
  CHECK(server.zap.refusals() == 0);
}

TEST_CASE("CURVE end to end: refused clients get nothing and the server receives nothing", "[remote][curve]") {
  CurveServer server;
  SECTION("an unknown client key: ZAP refuses it and counts the refusal") {
    auto stranger = generate_keypair();
    auto client = server.client([&](auto& s) { apply_client_curve(s, stranger, server.keys.public_key); });
    client.send(zmq::str_buffer("ping"));
    REQUIRE(server.wait_logged(stranger.public_key));
    CHECK(server.zap.refusals() >= 1);
    CHECK_FALSE(server.answer_one());
    CHECK_FALSE(receive(client));
  }
  SECTION("a client without CURVE: the handshake fails before ZAP") {
    auto client = server.client([](auto&) {});
    client.send(zmq::str_buffer("ping"));
    CHECK_FALSE(server.answer_one());
    CHECK_FALSE(receive(client));
    CHECK(server.zap.acceptances() == 0);
  }
  SECTION("the authorised client key with a wrong server key: the server cannot read its hello") {
    auto client = server.client([&](auto& s) { apply_client_curve(s, server.authorised, generate_keypair().public_key); });
    client.send(zmq::str_buffer("ping"));
    CHECK_FALSE(server.answer_one());
    CHECK_FALSE(receive(client));
    CHECK(server.zap.acceptances() == 0);
  }
}

TEST_CASE("two clients holding the same authorised key are two peers, each answered; the server requires CURVE",
          "[remote][curve]") {
  CurveServer server;
  CHECK(server.router.get(zmq::sockopt::curve_server) == 1);
  CHECK(server.router.get(zmq::sockopt::mechanism) == ZMQ_CURVE);
  auto first = server.client([&](auto& s) { apply_client_curve(s, server.authorised, server.keys.public_key); });
  auto second = server.client([&](auto& s) { apply_client_curve(s, server.authorised, server.keys.public_key); });
  first.send(zmq::str_buffer("ping"));
  second.send(zmq::str_buffer("ping"));
  int answered = 0;
  for (int i = 0; i < 10 && answered < 2; ++i) answered += server.answer_one() ? 1 : 0;
  REQUIRE(answered == 2);
  CHECK(receive(first) == "pong");
  CHECK(receive(second) == "pong");
  CHECK_FALSE(receive(first));  // each reply went to its own peer
}

TEST_CASE("a CURVE server whose context has no ZAP handler refuses every client", "[remote][curve]") {
  zmq::context_t context;
  const auto keys = generate_keypair();
  zmq::socket_t router(context, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  router.set(zmq::sockopt::rcvtimeo, 500);
  apply_server_curve(router, keys, "cuview-test");
  router.bind("tcp://127.0.0.1:*");
  zmq::socket_t client(context, zmq::socket_type::dealer);
  client.set(zmq::sockopt::linger, 0);
  apply_client_curve(client, generate_keypair(), keys.public_key);
  client.connect(router.get(zmq::sockopt::last_endpoint));
  client.send(zmq::str_buffer("ping"));
  zmq::message_t m;
  CHECK_FALSE(router.recv(m));
}

TEST_CASE("one ZAP handler per context; destroying it never hangs", "[remote][curve]") {
  zmq::context_t context;
  {
    ZapHandler zap(context, [](auto, auto, auto) { return std::optional<std::string>(); });
    const auto e = error_of([&] { ZapHandler second(context, [](auto, auto, auto) { return std::optional<std::string>(); }); });
    CHECK(e.code() == Errc::already_running);
  }
  ZapHandler again(context, [](auto, auto, auto) { return std::optional<std::string>(); });  // the endpoint is free again
  CHECK(again.refusals() == 0);
}
