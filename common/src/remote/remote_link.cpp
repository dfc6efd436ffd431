#include "remote/remote_link.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "cuview/error.hpp"
#include "cuview/remote_protocol.hpp"
#include "cuview/runtime_dir.hpp"
#include "cuview/zmq_util.hpp"
#include "remote/child_process.hpp"
#include "cuview/remote/curve_keys.hpp"

namespace cuview::remote {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {
std::string quote_lines(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  if (t.size() > 600) t = "…" + t.substr(t.size() - 600);
  return t.empty() ? "(it printed nothing)" : "\"" + t + "\"";
}

std::vector<std::string> destination_args(const RemoteUrl& u) {
  std::vector<std::string> a;
  if (u.port != 0) a.insert(a.end(), {"-p", std::to_string(u.port)});
  a.push_back(u.user.empty() ? u.host : u.user + "@" + u.host);
  return a;
}

/// What the far side runs: $CUVIEW_REMOTE_GATEWAY, or cuview-gateway from the PATH of a
/// non-interactive ssh session, to which ~/.local/bin (where `cmake --install --prefix ~/.local`
/// puts it) is added.
std::string gateway_program() {
  const char* g = std::getenv("CUVIEW_REMOTE_GATEWAY");
  return g != nullptr && *g != '\0' ? g : "PATH=\"$PATH:$HOME/.local/bin\" cuview-gateway";
}
}  // namespace

/// The user's ssh forwarding a local Unix socket to the gateway's, shared by every link of this
/// process to the same ssh:// URL and stopped when the last one goes.
class SshForward {
 public:
  static std::shared_ptr<SshForward> get(const RemoteUrl& url, std::chrono::milliseconds timeout) {
    auto& r = registry();
    std::lock_guard lock(r.mu);
    auto& slot = r.forwards[url.text];
    if (auto f = slot.lock(); f && f->alive()) return f;
    auto f = std::shared_ptr<SshForward>(new SshForward(url, timeout));
    slot = f;
    return f;
  }

  ~SshForward() { stop(); }

  void stop() noexcept {
    ssh_.stop();
    std::error_code ec;
    fs::remove(local_, ec);
  }

  [[nodiscard]] bool alive() { return !ssh_.exit_status().has_value(); }
  [[nodiscard]] const fs::path& local_socket() const { return local_; }

 private:
  SshForward(const RemoteUrl& url, std::chrono::milliseconds timeout) {
    const auto dest = destination_args(url);
    // 1. The gateway's socket on the far side, starting the gateway if none runs there.
    auto ensure_args = dest;
    ensure_args.push_back(gateway_program() + " --ensure");
    auto ensure = ChildProcess::spawn(ssh_command_line(ensure_args));
    const auto status = ensure.wait(std::max<std::chrono::milliseconds>(timeout, 20s));
    if (!status) {
      throw Error(Errc::timeout, "ssh to " + url.text + " did not finish starting cuview-gateway within " +
                                     std::to_string(std::max<std::chrono::milliseconds>(timeout, 20s).count() / 1000) +
                                     " s; check that `ssh " + dest.back() + "` logs in without a prompt");
    }
    if (*status != 0) {
      std::string hint = "check that `ssh " + dest.back() + " cuview-gateway --ensure` works from this shell";
      if (*status == 127)
        hint = "cuview-gateway is not installed on " + url.host +
               " (or not on the PATH of a non-interactive ssh session); install cuview there, or set "
               "CUVIEW_REMOTE_GATEWAY to its full path";
      else if (*status == 255)
        hint = "ssh itself failed: check `ssh " + dest.back() + "` (host name, keys, agent, ~/.ssh/config)";
      throw Error(Errc::no_daemon, "ssh to " + url.text + " could not start cuview-gateway (exit " +
                                       std::to_string(*status) + "): " + quote_lines(ensure.err()) + "; " + hint);
    }
    std::string remote_socket;
    {
      std::string out = ensure.out();
      while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
      remote_socket = out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
    }
    if (remote_socket.empty() || remote_socket.front() != '/')
      throw Error(Errc::bad_message, "cuview-gateway --ensure on " + url.host +
                                         " did not print its socket's path (it printed " + quote_lines(ensure.out()) +
                                         "); is it the same cuview release as this one?");
    // 2. A local socket in our own 0700 runtime directory, forwarded to it by ssh.
    const fs::path dir = runtime_root() / ".remote";
    ensure_private_dir(runtime_root());
    ensure_private_dir(dir);
    local_ = dir / (std::to_string(::getpid()) + "-" + random_hex(6) + ".sock");
    auto fwd_args = std::vector<std::string>{"-N", "-o", "ExitOnForwardFailure=yes", "-o", "StreamLocalBindUnlink=yes",
                                             "-o", "ServerAliveInterval=5", "-L", local_.string() + ":" + remote_socket};
    fwd_args.insert(fwd_args.end(), dest.begin(), dest.end());
    ssh_ = ChildProcess::spawn(ssh_command_line(fwd_args));
    const auto deadline = Clock::now() + std::max<std::chrono::milliseconds>(timeout, 20s);
    for (;;) {
      struct stat st{};
      if (::stat(local_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) break;
      if (const auto s = ssh_.exit_status())
        throw Error(Errc::no_daemon, "ssh could not forward " + local_.string() + " to " + url.host + ":" +
                                         remote_socket + " (exit " + std::to_string(*s) + "): " +
                                         quote_lines(ssh_.err()) +
                                         "; the ssh server must allow it (AllowStreamLocalForwarding yes)");
      if (Clock::now() > deadline)
        throw Error(Errc::timeout, "ssh did not open the forwarded socket " + local_.string() + " to " + url.text +
                                       " in time");
      std::this_thread::sleep_for(10ms);
    }
    // The socket is ours alone: the directory is 0700, and so is the socket.
    ::chmod(local_.c_str(), 0600);
  }

  /// Every forwarding of this process. A program that ends without destroying its clients (exit()
  /// from a library, a Python interpreter finalising) still stops its ssh when static objects go.
  struct Registry {
    std::mutex mu;
    std::map<std::string, std::weak_ptr<SshForward>> forwards;
    ~Registry() {
      std::lock_guard lock(mu);
      for (auto& [url, weak] : forwards)
        if (auto f = weak.lock()) f->stop();
    }
  };
  static Registry& registry() {
    static Registry r;
    return r;
  }

  ChildProcess ssh_;
  fs::path local_;
};

RemoteLink::RemoteLink(RemoteUrl url, std::shared_ptr<SshForward> forward)
    : url_(std::move(url)), forward_(std::move(forward)) {
  configure_client_socket(socket_);
  enable_remote_heartbeats(socket_);
  socket_.set(zmq::sockopt::rcvhwm, 64);
  last_heard_ = listening_since_ = last_listened_ = Clock::now();
  static std::atomic<unsigned> links{0};
  const std::string monitor = "inproc://cuview-remote-link-" + std::to_string(links++);
  if (zmq_socket_monitor(socket_.handle(), monitor.c_str(),
                         ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                             ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) != 0)
    throw_errno("watching the connection to the gateway at " + url_.text + " (zmq_socket_monitor)", zmq_errno());
  monitor_ = zmq::socket_t(context_, zmq::socket_type::pair);
  monitor_.set(zmq::sockopt::linger, 0);
  monitor_.connect(monitor);
}

void RemoteLink::read_events() {
  for (;;) {
    zmq::message_t event, address;
    if (!monitor_.recv(event, zmq::recv_flags::dontwait)) return;
    if (event.more()) (void)monitor_.recv(address, zmq::recv_flags::dontwait);
    if (event.size() < 6) continue;
    std::uint16_t id = 0;
    std::uint32_t value = 0;
    std::memcpy(&id, event.data(), 2);
    std::memcpy(&value, static_cast<const char*>(event.data()) + 2, 4);
    if (id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
      handshake_done_ = true;
    } else if (id == ZMQ_EVENT_DISCONNECTED) {
      // A CURVE server that cannot decrypt our hello (it holds another key than the one we
      // expect) closes the connection without a word: the only sign is a drop before any
      // handshake succeeded.
      if (!handshake_done_ && !key_mismatch_.empty() && refused_.empty()) refused_ = key_mismatch_;
      dropped_ = true;
    } else if (id == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
      refused_ = "the gateway at " + url_.text + " refused this user's key (status " + std::to_string(value) +
                 "): add the line `cuview-ctl keygen` prints to ~/.config/cuview/authorized_keys on " + url_.host;
    } else if (id == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) {
      refused_ = "the CURVE handshake with " + url_.text +
                 " failed: is the gateway's key the one pinned in ~/.config/cuview/known_gateways?";
    }
  }
}

std::string RemoteLink::why_silent() const {
  if (!refused_.empty()) return refused_;
  if (dropped_)
    return "the connection to the gateway at " + url_.text + " dropped: it, or the ssh forwarding, exited";
  return "the gateway at " + url_.text + " fell silent (no heartbeat for " + std::to_string(kSilenceLimitMs / 1000) +
         " s): it is frozen, or the network is gone";
}

RemoteLink::~RemoteLink() = default;

std::unique_ptr<RemoteLink> RemoteLink::open(const std::string& text, std::chrono::milliseconds timeout) {
  auto url = RemoteUrl::parse(text);
  std::string endpoint;
  std::shared_ptr<SshForward> forward;
  switch (url.scheme) {
    case RemoteUrl::Scheme::ssh:
      forward = SshForward::get(url, timeout);
      endpoint = "ipc://" + forward->local_socket().string();
      break;
    case RemoteUrl::Scheme::unix_socket:
      if (!fs::exists(url.path))
        throw Error(Errc::no_daemon, "no cuview-gateway socket at " + url.path +
                                         "; start one with `cuview-gateway` (or `cuview-gateway --ensure`)");
      endpoint = "ipc://" + url.path;
      break;
    case RemoteUrl::Scheme::tcp:
      endpoint = "tcp://" + url.host_port();
      break;
  }
  auto link = std::unique_ptr<RemoteLink>(new RemoteLink(url, std::move(forward)));
  if (url.scheme == RemoteUrl::Scheme::tcp) link->apply_keys();
  if (url.listen) {
    // Requests wait (up to the timeout) for the gateway to dial in rather than fail at once.
    link->socket_.set(zmq::sockopt::sndtimeo, static_cast<int>(timeout.count()));
    link->blocking_send_ = true;
    link->socket_.bind(endpoint);
  } else {
    link->socket_.connect(endpoint);
  }
  return link;
}

void RemoteLink::apply_keys() {
  const auto key_file = default_client_key();
  if (!fs::exists(key_file))
    throw Error(Errc::access, "no CURVE key of this user at " + key_file.string() + " for " + url_.text +
                                  ": make one with `cuview-ctl keygen`, then add the line it prints to "
                                  "~/.config/cuview/authorized_keys on " + url_.host);
  const auto mine = read_keypair(key_file);
  const auto known_file = default_known_gateways();
  auto known = KnownGateways::read(known_file);
  const auto host_port = url_.host_port();
  const auto pinned = known.key_for(host_port);
  std::string server;
  if (url_.key && !pinned) {
    server = *url_.key;
    pin_when_answered_ = server;
    key_mismatch_ = "the gateway at " + url_.text + " closed the connection during the CURVE handshake: the key in the "
                    "URL (?key=" + server + ") is not its key. Nothing was pinned; run `cuview-gateway --print-key` "
                    "on " + url_.host + " and connect with the key it prints";
  } else {
    // A URL's key that differs from the pinned one is refused here, before any connection.
    server = known.require_key(host_port, url_.key);
    const auto line = std::to_string(known.line_for(host_port).value_or(0));
    key_mismatch_ = "the gateway at " + url_.text + " does not hold the key pinned for " + host_port + " (line " + line +
                    " of " + known_file.string() + "): it closed the connection during the CURVE handshake. Someone "
                    "could be intercepting the connection, or the gateway's key was made again (its gateway.key "
                    "removed). If you trust the gateway's new key, remove line " + line + " of " + known_file.string() +
                    " and connect once with ?key=<key> (`cuview-gateway --print-key` on " + url_.host + " prints it)";
  }
  apply_client_curve(socket_, mine, server);
}

bool RemoteLink::send(std::string_view to, std::string_view body) {
  const auto wait = blocking_send_ ? zmq::send_flags::none : zmq::send_flags::dontwait;
  if (!socket_.send(zmq::buffer(to), zmq::send_flags::sndmore | wait)) return false;
  return socket_.send(zmq::buffer(body), wait).has_value();
}

std::optional<Incoming> RemoteLink::receive(std::chrono::milliseconds timeout) {
  // Silence counts only while someone listens: after a pause in listening (a ctl between
  // commands), the count starts afresh, and beats queued meanwhile are read first.
  if (Clock::now() - last_listened_ > 200ms) listening_since_ = Clock::now();
  zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, timeout);
  last_listened_ = Clock::now();
  read_events();
  if (!(item.revents & ZMQ_POLLIN)) return std::nullopt;
  std::vector<zmq::message_t> parts;
  for (;;) {
    zmq::message_t m;
    if (!socket_.recv(m, zmq::recv_flags::dontwait)) break;
    const bool more = m.more();
    parts.push_back(std::move(m));
    if (!more) break;
  }
  last_heard_ = Clock::now();
  heard_ = true;
  if (pin_when_answered_) {
    // Only the holder of the key's secret completes a CURVE handshake: the key is the gateway's.
    const auto key = std::move(*pin_when_answered_);
    pin_when_answered_.reset();
    try {
      KnownGateways::read(default_known_gateways()).check_or_pin(url_.host_port(), key);
    } catch (const Error& e) {
      refused_ = e.what();  // another key was pinned meanwhile: this link is not to be trusted
    }
  }
  if (parts.size() < 3 || parts.size() > 4) return std::nullopt;  // not a gateway's message: ignored
  Incoming in{parts[0].to_string(), parts[1].to_string(), parts[2].to_string(), {}};
  if (parts.size() == 4) in.payload = std::move(parts[3]);
  return in;
}

bool RemoteLink::silent() const noexcept {
  const auto now = Clock::now();
  const auto limit = std::chrono::milliseconds(kSilenceLimitMs);
  // Before the gateway first spoke, a request's own timeout decides (a listening client waits for
  // a gateway to dial in).
  return dropped_ || !refused_.empty() || (heard_ && now - last_heard_ > limit && now - listening_since_ > limit);
}

void RemoteLink::note_gateway_session(const std::string& s) {
  if (!gateway_session_.empty() && s != gateway_session_) gateway_restarted_ = true;
  gateway_session_ = s;
}

}  // namespace cuview::remote
