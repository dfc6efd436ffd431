// The remote channel: a Client's requests to one publisher through a cuview-gateway
// (remote_protocol.hpp). Requests and replies are the local protocol's, carried in [name, body]
// messages; the gateway's own ops (view, credit, fetch) and its pushed views, beats and "gone"
// notices travel on the same link. The publisher counts as exited when the gateway says so,
// restarts, or falls silent for a second.
#pragma once

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "cuview/remote/picture_codec.hpp"
#include "cuview/remote/value_codec.hpp"
#include "cuview/remote_protocol.hpp"
#include "remote/remote_link.hpp"
#include "transport/request_channel.hpp"

namespace cuview::transport {

/// A view as it arrived: its header and its payload, not yet decoded.
struct ArrivedView {
  remote::ViewHeader header;
  zmq::message_t payload;
};

class RemoteChannel final : public RequestChannel {
 public:
  /// Connects to the gateway at `url` for the publisher `name`. Throws as RemoteLink::open.
  RemoteChannel(const std::string& url, const std::string& name, std::chrono::milliseconds timeout);

  [[nodiscard]] std::string endpoint() const override;
  [[nodiscard]] bool send(std::string_view request) override;
  [[nodiscard]] std::optional<std::string> receive(std::chrono::milliseconds timeout) override;
  void watch_publisher(pid_t) override {}  // the gateway watches it, and says "gone"
  [[nodiscard]] bool publisher_exited() const noexcept override;
  /// The gateway's "gone" notice says it (gone_reason()).
  [[nodiscard]] std::string farewell(const std::string&) override { return {}; }
  [[nodiscard]] std::vector<UniqueFd> fetch_descriptors(const proto::HandlesResult& h,
                                                        const std::string& session) override;

  /// One of the gateway's own ops, answered by the gateway. Throws Error with its code and message.
  template <class Result, class Args>
  Result gateway_call(remote::Op op, const Args& args, std::chrono::milliseconds timeout,
                      std::size_t max_bin = proto::kMaxRequestBytes);
  /// The newest view that arrived, waiting at most `timeout`; older ones are dropped (and their
  /// credits returned at once).
  std::optional<ArrivedView> take_view(std::chrono::milliseconds timeout);
  /// Allows the gateway one more view (after `seq`; of the first frame at or after `from_step`
  /// when given: remote::CreditArgs).
  void credit(std::uint64_t seq, std::optional<std::uint64_t> from_step = std::nullopt);
  /// Why the publisher counts as gone, for messages.
  [[nodiscard]] std::string gone_reason() const;
  /// The gateway could not be authenticated or refused this client (gone_reason() says how).
  [[nodiscard]] bool refused() const noexcept;

  remote::ValueDecoder decoder;  ///< keeps its zstd context between views
  /// The version of the gateway's own ops this session speaks (its hello's; kFirstStable until
  /// the gateway was greeted).
  [[nodiscard]] std::uint32_t gateway_version() const noexcept { return gateway_version_; }
  bool gateway_greeted = false;  ///< the gateway's own `hello` was said on this link
  /// The newest picture received (RemoteClient::render), of `picture_view`: asked again, the
  /// gateway answers `same` while it is still the newest.
  std::optional<proto::RenderArgs> picture_view;
  proto::RenderResult picture;
  remote::PictureDecoder picture_decoder;

 private:
  /// Reads one message if one comes within `timeout` and files it.
  void pump(std::chrono::milliseconds timeout);
  std::unique_ptr<remote::RemoteLink> link_;
  std::string name_;
  std::deque<std::string> replies_;           // from the publisher (through the gateway)
  std::deque<std::string> gateway_replies_;   // from the gateway itself
  std::optional<ArrivedView> newest_;
  std::uint64_t next_gateway_id_ = 1;
  /// The remote version the gateway's ops are sent in: its `hello` is said in remote::kVersion and
  /// names the session's, the lowest (remote::kFirstStable) serves before one.
  std::uint32_t gateway_version_ = remote::kFirstStable;
  bool gone_ = false;
  std::string gone_reason_;
};

std::unique_ptr<RemoteChannel> open_remote_channel(const std::string& url, const std::string& name,
                                                   std::chrono::milliseconds timeout);

template <class Result, class Args>
Result RemoteChannel::gateway_call(remote::Op op, const Args& args, std::chrono::milliseconds timeout,
                                   std::size_t max_bin) {
  using Clock = std::chrono::steady_clock;
  const std::uint64_t id = next_gateway_id_++;
  const std::string what = "the gateway at " + link_->url().text;
  const bool hello = op == remote::Op::hello;
  if (!link_->send("", remote::encode_gateway_request(op, id, args, hello ? remote::kVersion : gateway_version_)))
    throw Error(Errc::timeout, "cannot send '" + std::string(remote::name_of(op)) + "' to " + what +
                                   ": its queue is full; is the link down?");
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    while (!gateway_replies_.empty()) {
      const std::string bytes = std::move(gateway_replies_.front());
      gateway_replies_.pop_front();
      auto reply = remote::decode_gateway_reply(bytes, max_bin);
      if (reply.id != id) continue;
      if (!reply.ok) throw Error(errc_from_string(reply.error.code), reply.error.message);
      auto result = proto::decode_as<Result>(reply.result, "'" + std::string(remote::name_of(op)) + "' result");
      if constexpr (std::is_same_v<Result, remote::HelloResult>)
        gateway_version_ = std::clamp(result.protocol, remote::kFirstStable, remote::kVersion);
      return result;
    }
    if (link_->refused()) throw Error(Errc::access, link_->why_silent());
    if (link_->silent()) throw Error(Errc::daemon_gone, link_->why_silent() + "; connect again");
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left <= std::chrono::milliseconds(0))
      throw Error(Errc::timeout, what + " did not answer '" + std::string(remote::name_of(op)) + "' within " +
                                     std::to_string(timeout.count()) + " ms");
    pump(std::min(left, std::chrono::milliseconds(50)));
  }
}

}  // namespace cuview::transport
