// The local channel: a ZeroMQ DEALER on the publisher's ipc:// control endpoint, its pidfd for
// liveness, its descriptor socket (or pidfd_getfd) for descriptors.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <zmq.hpp>

#include "cuview/error.hpp"
#include "cuview/fd_passing.hpp"
#include "cuview/runtime_dir.hpp"
#include "cuview/zmq_util.hpp"
#include "transport/request_channel.hpp"

namespace cuview::transport {
namespace {

class LocalChannel final : public RequestChannel {
 public:
  LocalChannel(const std::string& name, std::optional<std::uint32_t> part) : paths_(name, part) {
    // Ownership first: a directory of another user is refused before anything in it is touched.
    const bool exists = check_private_dir(paths_.name_dir.parent_path()) && check_private_dir(paths_.name_dir) &&
                        (!part || check_private_dir(paths_.dir));
    if (!exists || !InstanceLock::is_held(paths_)) {
      if (!part) {
        if (const auto parts = running_parts(name); parts > 0)
          throw Error(Errc::bad_value, "'" + name + "' runs as " + std::to_string(parts) +
                                           " parts (an MPI run): attach to it as a group (cuview::Group, "
                                           "cuview_group_attach, cuview.attach in Python; cuview-ctl and cuview-gui "
                                           "do so by themselves)");
      }
      std::string others;
      for (const auto& n : list_running_instances()) others += (others.empty() ? "" : ", ") + n;
      throw Error(Errc::no_daemon, "no cuview-compute daemon " + (part ? paths_.who() : "named '" + name + "'") +
                                       " is running (nothing holds " + paths_.lock.string() +
                                       "); start one with `cuview-compute --name " + name + "`" +
                                       (others.empty() ? std::string() : "; running now: " + others));
    }
    configure_client_socket(socket_);
    socket_.connect(paths_.control_endpoint());
  }

  [[nodiscard]] std::string endpoint() const override { return paths_.control_endpoint(); }

  bool send(std::string_view request) override {
    return socket_.send(zmq::buffer(request), zmq::send_flags::dontwait).has_value();
  }

  std::optional<std::string> receive(std::chrono::milliseconds timeout) override {
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, timeout);
    if (!(item.revents & ZMQ_POLLIN)) return std::nullopt;
    zmq::message_t msg;
    if (!socket_.recv(msg, zmq::recv_flags::dontwait)) return std::nullopt;
    return msg.to_string();
  }

  void watch_publisher(pid_t pid) override {
    try {
      publisher_ = ProcessHandle(pid);
    } catch (const Error&) {
      throw Error(Errc::daemon_gone, "daemon '" + paths_.name + "' (pid " + std::to_string(pid) +
                                         ") exited during attach; try again");
    }
    // Its bye notice, read only once it is gone (farewell()).
    configure_client_socket(byes_);
    byes_.set(zmq::sockopt::subscribe, std::string(proto::kByeTopic));
    byes_.connect(paths_.frames_endpoint());
  }

  std::string farewell(const std::string& session) override {
    using Clock = std::chrono::steady_clock;
    std::lock_guard lock(bye_mu_);
    if (!bye_reason_.empty() || !publisher_) return bye_reason_;
    // It is sent just after the ring says the publisher shut down: wait briefly, once.
    if (!bye_until_) bye_until_ = Clock::now() + std::chrono::milliseconds(100);
    zmq::pollitem_t item{byes_.handle(), 0, ZMQ_POLLIN, 0};
    for (bool once = true; bye_reason_.empty() && (once || Clock::now() < *bye_until_); once = false) {
      zmq::poll(&item, 1, Clock::now() < *bye_until_ ? std::chrono::milliseconds(20) : std::chrono::milliseconds(0));
      if (!(item.revents & ZMQ_POLLIN)) continue;
      zmq::message_t topic, body;
      if (!byes_.recv(topic, zmq::recv_flags::dontwait) || !topic.more() || !byes_.recv(body, zmq::recv_flags::dontwait))
        continue;
      try {
        const auto bye = proto::decode_bytes<proto::ByeNotice>(body.to_string(), "bye notice");
        if (bye.session == session) bye_reason_ = bye.reason;
      } catch (const Error&) {
        // not a notice we can read: the publisher's going is told without its reason
      }
    }
    return bye_reason_;
  }

  bool publisher_exited() const noexcept override {
    try {
      return publisher_ && publisher_.exited();
    } catch (...) {
      return true;  // its descriptor cannot be read: treat it as gone rather than wait on it
    }
  }

  std::vector<UniqueFd> fetch_descriptors(const proto::HandlesResult& h, const std::string& session) override {
    std::vector<UniqueFd> fds;
    const std::string who = "daemon '" + paths_.name + "' (pid " + std::to_string(publisher_.pid()) + ")";
    const char* how = std::getenv("CUVIEW_FD_TRANSFER");
    if (how != nullptr && std::string_view(how) == "pidfd") {
      for (const auto n : h.fd_numbers) fds.push_back(take_fd_of(publisher_.pid(), n));
      return fds;
    }
    if (how != nullptr && *how != '\0' && std::string_view(how) != "socket")
      throw Error(Errc::bad_value,
                  std::string("CUVIEW_FD_TRANSFER is '") + how + "'; use socket (the default) or pidfd");
    UniqueFd sock = connect_fd_socket(h.fd_socket);
    const std::string what = "the descriptor socket of " + who;
    send_with_fds(sock.get(), proto::encode(proto::FdRequest{proto::kVersion, session, h.fd_token}), {},
                  "asking " + what);
    const auto bytes = receive_with_fds(sock.get(), fds, std::chrono::milliseconds(3000), what);
    const auto reply = proto::decode_bytes<proto::FdReply>(bytes, "descriptor reply");
    if (!reply.code.empty())
      throw Error(errc_from_string(reply.code), what + " refused the descriptors: " + reply.message);
    if (fds.size() != reply.fds || fds.size() != h.fds)
      throw Error(Errc::bad_message,
                  what + " sent " + std::to_string(fds.size()) + " descriptors; expected " + std::to_string(h.fds));
    return fds;
  }

 private:
  InstancePaths paths_;
  zmq::context_t context_{1};
  zmq::socket_t socket_{context_, zmq::socket_type::dealer};
  ProcessHandle publisher_;
  std::mutex bye_mu_;  // guards the byes: farewell() may be asked from any thread
  zmq::socket_t byes_{context_, zmq::socket_type::sub};
  std::string bye_reason_;
  std::optional<std::chrono::steady_clock::time_point> bye_until_;
};

}  // namespace

std::unique_ptr<RequestChannel> open_local_channel(const std::string& name, std::optional<std::uint32_t> part) {
  return std::make_unique<LocalChannel>(name, part);
}

}  // namespace cuview::transport
