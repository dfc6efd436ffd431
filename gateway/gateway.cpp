#include "gateway.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>

#include "cuview/runtime_dir.hpp"
#include "cuview/zmq_util.hpp"
#include "cuview/remote/curve_keys.hpp"
#include "authorized_keys.hpp"
#include "zap_handler.hpp"

namespace cuview::gateway {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

GatewayPaths::GatewayPaths()
    : dir(runtime_root() / ".gateway"), socket(dir / "gateway.sock"), lock(dir / "lock"), log(dir / "gateway.log"),
      pid(dir / "pid") {}

GatewayLock::GatewayLock(const GatewayPaths& paths) {
  fd_ = UniqueFd(::open(paths.lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd_) throw_errno("opening the gateway's lock " + paths.lock.string(), errno);
  if (::flock(fd_.get(), LOCK_EX | LOCK_NB) != 0)
    throw Error(Errc::already_running, "a cuview-gateway of this user already runs (it holds " + paths.lock.string() +
                                           ") and serves " + paths.socket.string() +
                                           "; use it, or stop it first (`pkill -u $USER cuview-gateway`)");
}

bool GatewayLock::is_held(const GatewayPaths& paths) {
  UniqueFd fd(::open(paths.lock.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return false;
  if (::flock(fd.get(), LOCK_SH | LOCK_NB) == 0) {
    ::flock(fd.get(), LOCK_UN);
    return false;
  }
  return true;
}

struct Gateway::Impl {
  std::unique_ptr<remote::ZapHandler> zap;
  std::unique_ptr<remote::AuthorizedKeys> authorized;
  std::mutex authorized_mu;
};

Gateway::Gateway(GatewayOptions options) : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  session_ = random_hex(8);
  outbox_.set(zmq::sockopt::linger, 0);
  outbox_.set(zmq::sockopt::rcvhwm, 0);
  outbox_.bind(kOutbox);

  auto router = [&] {
    zmq::socket_t s(context_, zmq::socket_type::router);
    configure_server_socket(s);
    enable_remote_heartbeats(s);  // its peers are remote clients, end to end through ssh or TCP
    s.set(zmq::sockopt::router_mandatory, 1);
    return s;
  };
  // The Unix socket, in the user's 0700 runtime directory: what ssh forwards to.
  auto local = router();
  std::error_code ec;
  fs::remove(options_.paths.socket, ec);
  local.bind("ipc://" + options_.paths.socket.string());
  sockets_.push_back(std::move(local));

  if (!options_.listen.empty() || !options_.dial.empty()) {
    const auto key = remote::load_or_create_keypair(options_.key, "cuview-gateway");
    impl_->authorized = std::make_unique<remote::AuthorizedKeys>(remote::AuthorizedKeys::read(options_.authorized));
    impl_->zap = std::make_unique<remote::ZapHandler>(
        context_,
        [this](std::string_view mechanism, std::string_view client_key,
               std::string_view address) -> std::optional<std::string> {
          std::lock_guard lock(impl_->authorized_mu);
          impl_->authorized->reload_if_changed();
          if (mechanism == "CURVE")
            if (auto who = impl_->authorized->comment_of(client_key)) return who->empty() ? std::string(client_key) : *who;
          spdlog::warn("gateway: refused a {} peer from {} with key {}: not in {}", mechanism, address,
                       client_key.empty() ? "(none)" : std::string(client_key), options_.authorized.string());
          return std::nullopt;
        });
    if (!options_.listen.empty()) {
      auto tcp = router();
      remote::apply_server_curve(tcp, key, "cuview");
      tcp.bind(options_.listen);
      tcp_endpoint_ = tcp.get(zmq::sockopt::last_endpoint);
      spdlog::info("gateway: listening on {} (CURVE; clients' keys from {})", tcp_endpoint_,
                   options_.authorized.string());
      sockets_.push_back(std::move(tcp));
    }
    if (!options_.dial.empty()) {
      // The gateway dials out, and is still the CURVE server: the viewer it reaches must hold an
      // authorised key, and pins this gateway's key as any client does.
      auto dial = router();
      remote::apply_server_curve(dial, key, "cuview");
      dial.connect(options_.dial);
      spdlog::info("gateway: dialling {} (CURVE)", options_.dial);
      sockets_.push_back(std::move(dial));
    }
  }
  spdlog::info("gateway: serving {} (session {})", options_.paths.socket.string(), session_);
  if (options_.announce_port != 0) announcer_ = std::make_unique<Announcer>(options_.announce_port, tcp_endpoint_);
}

Gateway::~Gateway() {
  feeds_.clear();  // their threads end before the outbox closes
  std::error_code ec;
  fs::remove(options_.paths.socket, ec);
}

PublisherFeed& Gateway::feed(const std::string& name) {
  auto& f = feeds_[name];
  if (!f) f = std::make_unique<PublisherFeed>(name, context_, options_.feed);
  return *f;
}

void Gateway::run(const std::atomic<bool>& stop) {
  std::vector<zmq::pollitem_t> items;
  for (auto& s : sockets_) items.push_back({s.handle(), 0, ZMQ_POLLIN, 0});
  items.push_back({outbox_.handle(), 0, ZMQ_POLLIN, 0});
  auto next_reap = Clock::now() + 1s;
  while (!stop) {
    try {
      zmq::poll(items, 50ms);
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
      continue;  // a signal: the loop looks at `stop`
    }
    for (std::size_t i = 0; i < sockets_.size(); ++i) {
      if (!(items[i].revents & ZMQ_POLLIN)) continue;
      for (int n = 0; n < 256; ++n) {  // a burst, but never starving the others
        std::vector<zmq::message_t> parts;
        for (;;) {
          zmq::message_t m;
          if (!sockets_[i].recv(m, zmq::recv_flags::dontwait)) break;
          const bool more = m.more();
          parts.push_back(std::move(m));
          if (!more) break;
        }
        if (parts.empty()) break;
        on_message(i, parts);
      }
    }
    route_outbox();
    if (Clock::now() >= next_beat_) beat();
    if (Clock::now() >= next_reap) {
      next_reap = Clock::now() + 1s;
      for (auto it = feeds_.begin(); it != feeds_.end();)
        it = it->second->idle_s() > 30 ? feeds_.erase(it) : std::next(it);
    }
  }
}

void Gateway::on_message(std::size_t socket, std::vector<zmq::message_t>& parts) {
  // [routing id, to, body]
  PeerId peer(1, static_cast<char>(socket));
  peer += parts[0].to_string();
  const bool known = peers_.count(peer) > 0;
  peers_[peer].last_seen = Clock::now();
  if (!known) spdlog::info("gateway: client {} connected through socket {}", peers_.size(), socket);
  if (parts.size() != 3)
    return reply(peer, "",
                 remote::encode_gateway_error(0, Errc::bad_message,
                                              "a message of " + std::to_string(parts.size() - 1) +
                                                  " part(s) reached the gateway; a request is two parts: [to, body] "
                                                  "(docs/remote.md)"));
  const std::string to = parts[1].to_string();
  std::string body = parts[2].to_string();
  if (to.empty()) return on_gateway_request(peer, std::move(body));
  try {
    (void)parse_publisher_address(to);
  } catch (const Error& e) {
    std::uint64_t id = 0;
    try {
      (void)proto::decode_request(body, id);
    } catch (const Error&) {
    }
    return reply(peer, to, proto::encode_error(id, e.code(), e.what()));
  }
  feed(to).publisher_request(peer, std::move(body));
}

namespace {
/// Whether an undecodable gateway request still reads as a `credit` (its `op`).
bool names_credit(std::string_view body) {
  try {
    std::size_t offset = 0;
    const auto h = proto::detail::unpack_bounded(body, "gateway request", offset);
    if (h.get().type != msgpack::type::MAP) return false;
    const auto* op = proto::detail::find_key(h.get(), "op");
    return op && op->type == msgpack::type::STR &&
           std::string_view(op->via.str.ptr, op->via.str.size) == remote::name_of(remote::Op::credit);
  } catch (const Error&) {
    return false;
  }
}
}  // namespace

void Gateway::on_gateway_request(const PeerId& peer, std::string body) {
  std::uint64_t id = 0;
  std::string answer;
  try {
    auto request = remote::decode_gateway_request(body, id);
    switch (remote::check_op(request.op)) {
      case remote::Op::hello: {
        const auto a = proto::decode_as<remote::HelloArgs>(request.args, "'hello' arguments");
        spdlog::info("gateway: hello from '{}'", a.client);
        remote::HelloResult r;
        r.protocol = std::min<std::uint32_t>(request.v, remote::kVersion);
        r.gateway_version = CUVIEW_VERSION;
        r.session = session_;
        char host[256] = {};
        ::gethostname(host, sizeof host - 1);
        r.host = host;
        const char* user = std::getenv("USER");
        r.user = user ? user : std::to_string(::getuid());
        r.encodings = {"auto", "u8", "u16", "f32"};
        answer = remote::encode_gateway_result(request, r);
        break;
      }
      case remote::Op::list: {
        (void)proto::decode_as<proto::NoArgs>(request.args, "'list' arguments");
        remote::ListResult r;
        // A whole publisher by its name, a run of parts by each part running here ("NAME/part-K"):
        // a client finds the other parts on the gateways of the other hosts.
        auto add = [&](const std::string& address) {
          auto it = feeds_.find(address);
          remote::PublisherEntry unknown;
          unknown.name = address;
          r.publishers.push_back(it != feeds_.end() ? it->second->entry() : unknown);
        };
        for (const auto& instance : list_instances()) {
          if (instance.here.empty()) add(instance.name);
          for (const auto k : instance.here) add(PublisherAddress{instance.name, k}.text());
        }
        answer = remote::encode_gateway_result(request, r);
        break;
      }
      case remote::Op::view:
      case remote::Op::credit:
      case remote::Op::stop:
      case remote::Op::fetch:
      case remote::Op::picture: {
        const auto* name = proto::detail::find_key(request.args, "name");
        if (request.args.type != msgpack::type::MAP || name == nullptr || name->type != msgpack::type::STR)
          throw Error(Errc::missing_field, "'" + request.op + "' arguments lack the publisher's 'name'");
        const std::string n(name->via.str.ptr, name->via.str.size);
        (void)parse_publisher_address(n);
        feed(n).gateway_request(peer, std::move(body));
        return;
      }
    }
  } catch (const Error& e) {
    // Credits are never answered, not even when malformed; anything else is, with id 0 when the
    // body held none that could be read.
    if (id == 0 && names_credit(body)) return;
    answer = remote::encode_gateway_error(id, e.code(), e.what());
  }
  reply(peer, "", answer);
}

void Gateway::reply(const PeerId& peer, std::string_view from, std::string_view body) {
  std::vector<zmq::message_t> parts;
  parts.emplace_back(peer.data(), peer.size());
  parts.emplace_back(remote::kReply.data(), remote::kReply.size());
  parts.emplace_back(from.data(), from.size());
  parts.emplace_back(body.data(), body.size());
  send_to(peer, parts);
}

void Gateway::route_outbox() {
  for (int n = 0; n < 1024; ++n) {
    std::vector<zmq::message_t> parts;
    for (;;) {
      zmq::message_t m;
      if (!outbox_.recv(m, zmq::recv_flags::dontwait)) break;
      const bool more = m.more();
      parts.push_back(std::move(m));
      if (!more) break;
    }
    if (parts.empty()) return;
    const PeerId peer = parts[0].to_string();
    send_to(peer, parts);
  }
}

void Gateway::send_to(const PeerId& peer, std::vector<zmq::message_t>& parts) {
  // parts[0] is the peer id; on the wire it becomes the routing id alone.
  if (peer.size() < 2 || static_cast<std::size_t>(peer[0]) >= sockets_.size() || !peers_.count(peer)) return;
  auto& s = sockets_[static_cast<std::size_t>(peer[0])];
  parts[0] = zmq::message_t(peer.data() + 1, peer.size() - 1);
  try {
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const auto flags = (i + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none) |
                         zmq::send_flags::dontwait;
      if (!s.send(parts[i], flags)) return;  // its queue is full: this message is dropped for it
    }
  } catch (const zmq::error_t& e) {
    if (e.num() == EHOSTUNREACH) forget(peer);
  }
}

void Gateway::forget(const PeerId& peer) {
  if (peers_.erase(peer) == 0) return;
  spdlog::info("gateway: a client left ({} remain)", peers_.size());
  for (auto& [name, f] : feeds_) f->forget(peer);
}

void Gateway::beat() {
  next_beat_ = Clock::now() + std::chrono::milliseconds(remote::kBeatIntervalMs);
  const auto body = proto::encode(remote::Beat{session_, realtime_ns()});
  std::vector<PeerId> all;
  for (const auto& [p, info] : peers_) all.push_back(p);
  for (const auto& p : all) {
    std::vector<zmq::message_t> parts;
    parts.emplace_back(p.data(), p.size());
    parts.emplace_back(remote::kBeat.data(), remote::kBeat.size());
    parts.emplace_back();
    parts.emplace_back(body.data(), body.size());
    send_to(p, parts);
  }
}

}  // namespace cuview::gateway
