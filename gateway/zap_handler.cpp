#include "zap_handler.hpp"

#include <array>
#include <vector>

#include "cuview/error.hpp"

namespace cuview::remote {

namespace {

constexpr std::string_view kZapVersion = "1.0";
constexpr std::size_t kCurveKeyBytes = 32;

std::string z85_of(const zmq::message_t& key) {
  std::array<char, 41> text{};
  if (key.size() != kCurveKeyBytes || zmq_z85_encode(text.data(), key.data<std::uint8_t>(), key.size()) == nullptr)
    return {};
  return text.data();
}

/// A name of its own for each handler's stop pair (a closed socket's inproc name may be held a
/// little longer than the socket).
std::string next_stop_endpoint() {
  static std::atomic<std::uint64_t> count{0};
  return "inproc://cuview-zap-stop-" + std::to_string(count.fetch_add(1));
}

}  // namespace

ZapHandler::ZapHandler(zmq::context_t& context, ZapDecision decide, ZapLog log)
    : decide_(std::move(decide)), log_(std::move(log)) {
  try {
    rep_ = zmq::socket_t(context, zmq::socket_type::rep);
    rep_.set(zmq::sockopt::linger, 0);
    stop_receiver_ = zmq::socket_t(context, zmq::socket_type::pair);
    stop_sender_ = zmq::socket_t(context, zmq::socket_type::pair);
    const std::string stop = next_stop_endpoint();
    stop_receiver_.bind(stop);
    stop_sender_.connect(stop);
  } catch (const zmq::error_t& e) {
    throw Error(Errc::system, std::string("ZAP handler: creating its sockets: ") + e.what());
  }
  try {
    rep_.bind(kEndpoint);
  } catch (const zmq::error_t& e) {
    if (e.num() == EADDRINUSE)
      throw Error(Errc::already_running, std::string("ZAP handler: this ZeroMQ context already has one (") +
                                             kEndpoint + " is bound); a context holds one ZAP handler");
    throw Error(Errc::system, std::string("ZAP handler: binding ") + kEndpoint + ": " + e.what());
  }
  thread_ = std::thread([this] { run(); });
}

ZapHandler::~ZapHandler() {
  try {
    stop_sender_.send(zmq::message_t(), zmq::send_flags::dontwait);
  } catch (const zmq::error_t&) {
    // The context is shutting down: the thread sees ETERM and leaves on its own.
  }
  thread_.join();
  try {
    rep_.unbind(kEndpoint);  // at once, unlike close(): a new handler may bind it right away
  } catch (const zmq::error_t&) {
    // The context is gone or going: nothing is bound any more.
  }
}

void ZapHandler::say(const std::string& line) const noexcept {
  if (!log_) return;
  try {
    log_(line);
  } catch (...) {
    // A logger that throws must not take the handler's thread down.
  }
}

void ZapHandler::run() noexcept {
  std::array<zmq::pollitem_t, 2> items{{{rep_.handle(), 0, ZMQ_POLLIN, 0}, {stop_receiver_.handle(), 0, ZMQ_POLLIN, 0}}};
  try {
    for (;;) {
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(-1));
      if ((items[1].revents & ZMQ_POLLIN) != 0) return;
      if ((items[0].revents & ZMQ_POLLIN) != 0) answer();
    }
  } catch (const zmq::error_t& e) {
    if (e.num() != ETERM) say(std::string("ZAP handler stopped: ") + e.what() + "; every peer is refused from now on");
  }
}

void ZapHandler::answer() {
  std::vector<zmq::message_t> request;
  do {
    request.emplace_back();
    (void)rep_.recv(request.back());
  } while (request.back().more());

  // RFC 27: version, request id, domain, address, routing id, mechanism, credentials...
  const std::string request_id = request.size() > 1 ? request[1].to_string() : std::string();
  std::string status = "400", text = "refused", user, why;
  if (request.size() < 6 || request[0].to_string_view() != kZapVersion) {
    status = "500";
    text = "malformed ZAP request";
    why = "ZAP: refused a malformed request (" + std::to_string(request.size()) + " frames)";
  } else {
    const std::string address = request[3].to_string();
    const std::string mechanism = request[5].to_string();
    const std::string key = mechanism == "CURVE" && request.size() == 7 ? z85_of(request[6]) : std::string();
    if (key.empty()) {
      text = "only CURVE is accepted";
      why = "ZAP: refused a " + mechanism + " peer from " + address + ": only CURVE clients are accepted";
    } else {
      try {
        if (auto accepted = decide_(mechanism, key, address)) {
          status = "200";
          text = "OK";
          user = std::move(*accepted);
        } else {
          why = "ZAP: refused the CURVE key " + key + " from " + address + ": not authorised";
        }
      } catch (const std::exception& e) {
        status = "500";
        text = "internal error";
        why = "ZAP: refused the CURVE key " + key + " from " + address + ": deciding threw: " + e.what();
      }
    }
  }
  // Counted before the log line, so a reader woken by the line sees the count.
  (status == "200" ? acceptances_ : refusals_).fetch_add(1, std::memory_order_relaxed);
  if (!why.empty()) say(why);
  const std::array<std::string_view, 6> reply{kZapVersion, request_id, status, text, user, ""};
  for (std::size_t i = 0; i < reply.size(); ++i)
    (void)rep_.send(zmq::buffer(reply[i]), i + 1 < reply.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
}

}  // namespace cuview::remote
