// The local transport: ZeroMQ ROUTER (requests) and PUB (notices) over ipc:// in the instance's
// 0700 runtime directory, a pidfd per attached process for liveness, and a SOCK_SEQPACKET socket
// that hands out descriptors (SCM_RIGHTS) to the process that asked for them.
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <zmq.hpp>

#include "cuview/error.hpp"
#include "cuview/fd_passing.hpp"
#include "cuview/posix.hpp"
#include "cuview/zmq_util.hpp"
#include "publisher/publisher_log.hpp"
#include "publisher/transport/control_server.hpp"

namespace cuview {
namespace {
constexpr auto kTick = std::chrono::milliseconds(50);  // the handler's tick (heartbeat) period at most
constexpr std::size_t kMaxPendingFdConnections = 32;
constexpr std::int64_t kFdRequestDeadlineNs = 1'000'000'000;

/// Owner of /proc/PID (the process's effective uid); -1 when it cannot be read.
uid_t process_uid(pid_t pid) {
  struct stat st {};
  if (::stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0) return static_cast<uid_t>(-1);
  return st.st_uid;
}

class LocalControlServer final : public ControlServer {
 public:
  explicit LocalControlServer(const InstancePaths& paths) : paths_(paths), who_("'" + paths.name + "'") {
    wake_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!wake_) throw_errno("eventfd for publisher " + who_ + "'s control thread", errno);
    if (!configure_server_socket(router_) || !configure_server_socket(pub_))
      publisher_log().warn(
          "this libzmq cannot filter ipc:// peers by uid; only the 0700 runtime directory keeps other users out");
    fd_listener_ = listen_fd_socket(paths_.fds);
    router_.bind(paths_.control_endpoint());
    pub_.bind(paths_.frames_endpoint());
  }

  ~LocalControlServer() override {
    stop();
    router_.close();
    // The `bye` notice was queued just before: with the sockets' usual linger of 0 closing would
    // drop it before it leaves, and subscribers (cuview::Group) would never learn why we went.
    // A short linger lets it go without making a close wait on a subscriber that is stuck.
    pub_.set(zmq::sockopt::linger, 200);
    pub_.close();
    std::error_code ec;
    std::filesystem::remove(paths_.control, ec);
    std::filesystem::remove(paths_.frames, ec);
    std::filesystem::remove(paths_.fds, ec);
  }

  [[nodiscard]] std::string endpoint() const override { return paths_.control_endpoint(); }
  [[nodiscard]] std::string descriptor_endpoint() const override { return paths_.fds.string(); }

  void start(ControlHandler& handler) override {
    handler_ = &handler;
    thread_ = std::thread([this] { run(); });
  }

  void stop() noexcept override {
    stopping_.store(true);
    const std::uint64_t one = 1;
    (void)!::write(wake_.get(), &one, sizeof one);
    if (thread_.joinable()) thread_.join();
  }

  void watch(const std::string& peer, pid_t pid) override {
    ProcessHandle process(pid);  // throws bad_value naming the pid when there is no such process
    if (const auto uid = process_uid(pid); uid != ::getuid())
      throw Error(Errc::access, "process " + std::to_string(pid) + " runs as uid " + std::to_string(uid) + "; " +
                                    who_ + " serves only its own user (uid " + std::to_string(::getuid()) + ")");
    processes_.insert_or_assign(peer, std::move(process));
  }

  void forget(const std::string& peer) noexcept override { processes_.erase(peer); }

  void notify(std::string_view topic, const std::string& body) override {
    std::lock_guard lock(pub_mutex_);
    // Takes in subscribers that connected or subscribed since the last send (a send only looks
    // now and then): else a notice sent at once, like the `bye` of a close, can miss them.
    (void)pub_.get(zmq::sockopt::events);
    pub_.send(zmq::buffer(topic), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    pub_.send(zmq::buffer(body), zmq::send_flags::dontwait);
  }

 private:
  struct FdConnection {  // a connection to the descriptor socket whose request has not come yet
    UniqueFd fd;
    std::int64_t deadline_ns;
  };

  void run();
  void serve_requests();
  void accept_fd_connections();
  void answer_fd_request(int connection);

  InstancePaths paths_;
  std::string who_;  // 'NAME', in messages
  zmq::context_t ctx_{1};
  zmq::socket_t router_{ctx_, zmq::socket_type::router};
  zmq::socket_t pub_{ctx_, zmq::socket_type::pub};
  std::mutex pub_mutex_;  // notices come from the program's thread (frames) and from close (goodbye)
  UniqueFd wake_;         // eventfd: stops the thread
  UniqueFd fd_listener_;
  std::atomic<bool> stopping_{false};
  ControlHandler* handler_ = nullptr;
  std::thread thread_;
  // ---- the server's thread only ----
  std::map<std::string, ProcessHandle> processes_;  // peer → the process that said hello on it
  std::vector<FdConnection> fd_connections_;
};

void LocalControlServer::run() {
  std::vector<zmq::pollitem_t> items;
  std::vector<std::string> item_peers;
  while (!stopping_.load()) {
    try {
      items.assign({{router_.handle(), 0, ZMQ_POLLIN, 0},
                    {nullptr, wake_.get(), ZMQ_POLLIN, 0},
                    {nullptr, fd_listener_.get(), ZMQ_POLLIN, 0}});
      item_peers.clear();
      for (const auto& [peer, process] : processes_) {
        items.push_back({nullptr, process.fd(), ZMQ_POLLIN, 0});
        item_peers.push_back(peer);
      }
      const std::size_t first_conn = items.size();
      for (const auto& c : fd_connections_) items.push_back({nullptr, c.fd.get(), ZMQ_POLLIN, 0});
      zmq::poll(items.data(), items.size(), kTick);
      if (stopping_.load()) break;
      constexpr std::size_t kFirstPeer = 3;
      for (std::size_t i = kFirstPeer; i < first_conn; ++i) {
        if (items[i].revents & ZMQ_POLLIN) {
          processes_.erase(item_peers[i - kFirstPeer]);
          handler_->peer_exited(item_peers[i - kFirstPeer]);
        }
      }
      if (items[0].revents & ZMQ_POLLIN) serve_requests();
      // Answer (or drop, past their deadline) the descriptor-socket connections, then take new ones.
      const std::int64_t now = monotonic_ns();
      std::vector<FdConnection> waiting;
      for (std::size_t i = 0; i < fd_connections_.size(); ++i) {
        auto& c = fd_connections_[i];
        if (items[first_conn + i].revents & (ZMQ_POLLIN | ZMQ_POLLERR))
          answer_fd_request(c.fd.get());
        else if (now < c.deadline_ns)
          waiting.push_back(std::move(c));
      }
      fd_connections_ = std::move(waiting);
      if (items[2].revents & ZMQ_POLLIN) accept_fd_connections();
      handler_->tick();
    } catch (const std::exception& e) {
      // Never let the thread die: the program goes on, and so must the answers to its viewers.
      publisher_log().error("publisher {}: control thread: {}; going on", who_, e.what());
      std::this_thread::sleep_for(kTick);
    }
  }
}

void LocalControlServer::serve_requests() {
  // Drain: the ZMQ_FD edge has fired, so read until nothing is left.
  for (int budget = 0; budget < 256; ++budget) {
    std::vector<zmq::message_t> parts;
    zmq::message_t part;
    if (!router_.recv(part, zmq::recv_flags::dontwait)) return;
    parts.push_back(std::move(part));
    while (parts.back().more()) {
      zmq::message_t more;
      (void)router_.recv(more, zmq::recv_flags::none);
      parts.push_back(std::move(more));
    }
    const std::string peer = parts[0].to_string();
    // DEALER sends [payload]; REQ sends ["", payload]. Answer in the same shape.
    const bool req_style = parts.size() == 3 && parts[1].size() == 0;
    std::string reply;
    if (parts.size() == 2 || req_style) {
      reply = handler_->answer(peer, parts.back().to_string_view());
    } else {
      reply = proto::encode_error(0, Errc::bad_message,
                                  "a request is one message part holding a MessagePack map; got " +
                                      std::to_string(parts.size() - 1) + " parts");
      publisher_log().warn("rejected a request of {} parts", parts.size() - 1);
    }
    router_.send(zmq::buffer(peer), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    if (req_style) router_.send(zmq::message_t(), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    router_.send(zmq::buffer(reply), zmq::send_flags::dontwait);
  }
}

void LocalControlServer::accept_fd_connections() {
  // Requests are read when they arrive (run() polls the connections), so a client that connects
  // and says nothing costs the thread nothing; it is dropped after a second.
  for (int budget = 0; budget < 16; ++budget) {
    UniqueFd conn = accept_fd_socket(fd_listener_.get());
    if (!conn) return;
    if (fd_connections_.size() >= kMaxPendingFdConnections) fd_connections_.erase(fd_connections_.begin());
    fd_connections_.push_back({std::move(conn), monotonic_ns() + kFdRequestDeadlineNs});
  }
}

void LocalControlServer::answer_fd_request(int conn) {
  proto::FdReply reply;
  std::vector<int> fds;
  try {
    const PeerCredentials cred = peer_credentials(conn);
    if (cred.uid != ::getuid())
      throw Error(Errc::access, "process " + std::to_string(cred.pid) + " runs as uid " + std::to_string(cred.uid) +
                                    "; " + who_ + " hands its memory only to its own user (uid " +
                                    std::to_string(::getuid()) + ")");
    std::vector<UniqueFd> ignored;  // a client has no business sending descriptors: closed here
    const std::string bytes =
        receive_with_fds(conn, ignored, std::chrono::milliseconds(0), "the request on the descriptor socket");
    const auto req = proto::decode_bytes<proto::FdRequest>(bytes, "descriptor request");
    // Its three fields mean the same in every version from 7 on, a later client's too.
    if (req.v < proto::kFirstStable)
      throw Error(Errc::version_mismatch, "the descriptor request speaks protocol " + std::to_string(req.v) +
                                              ", from before " + std::to_string(proto::kFirstStable) +
                                              ", the first stable version; this daemon serves protocols " +
                                              std::to_string(proto::kFirstStable) + " to " +
                                              std::to_string(proto::kVersion) + ": update the client");
    fds = handler_->descriptors_for(req, cred.pid);
    reply.fds = static_cast<std::uint32_t>(fds.size());
  } catch (const Error& e) {
    if (e.code() == Errc::daemon_gone) return;  // it hung up without asking: nobody to answer
    reply.code = std::string(to_string(e.code()));
    reply.message = e.what();
    fds.clear();
    publisher_log().warn("refused descriptors: {} ({})", reply.message, reply.code);
  }
  try {
    send_with_fds(conn, proto::encode(reply), fds, "the reply on the descriptor socket");
  } catch (const std::exception& e) {
    publisher_log().warn("descriptor socket: {}", e.what());
  }
}
}  // namespace

std::unique_ptr<ControlServer> make_local_control_server(const InstancePaths& paths) {
  return std::make_unique<LocalControlServer>(paths);
}

}  // namespace cuview
