#include "transport/remote_channel.hpp"

namespace cuview::transport {
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

RemoteChannel::RemoteChannel(const std::string& url, const std::string& name, std::chrono::milliseconds timeout)
    : link_(remote::RemoteLink::open(url, timeout)), name_(name) {}

std::string RemoteChannel::endpoint() const { return link_->url().text + " (publisher '" + name_ + "')"; }

bool RemoteChannel::send(std::string_view request) { return link_->send(name_, request); }

std::optional<std::string> RemoteChannel::receive(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    // A connection that dropped and was made again by ZeroMQ is a new client to the gateway: a
    // reply that came on it (not_attached, say) is not an answer to this client's session. The
    // drop is what the caller hears (publisher_exited), as it would without a reply in between.
    if (publisher_exited()) return std::nullopt;
    if (!replies_.empty()) {
      auto r = std::move(replies_.front());
      replies_.pop_front();
      return r;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left < 0ms || publisher_exited()) return std::nullopt;
    pump(std::min(left, 50ms));
  }
}

bool RemoteChannel::publisher_exited() const noexcept {
  return gone_ || link_->silent() || link_->gateway_restarted();
}

bool RemoteChannel::refused() const noexcept { return link_->refused(); }

std::string RemoteChannel::gone_reason() const {
  if (gone_) return "the gateway at " + link_->url().text + " says it " + gone_reason_;
  if (link_->gateway_restarted()) return "the gateway at " + link_->url().text + " restarted";
  return link_->why_silent();
}

std::vector<UniqueFd> RemoteChannel::fetch_descriptors(const proto::HandlesResult&, const std::string&) {
  throw Error(Errc::unsupported, "publisher '" + name_ + "' is reached through the gateway at " + link_->url().text +
                                     ": a remote client receives views, not the ring's memory");
}

void RemoteChannel::pump(std::chrono::milliseconds timeout) {
  auto in = link_->receive(timeout);
  if (!in) return;
  // Then whatever else is already there, without waiting.
  for (; in; in = link_->receive(0ms)) {
    if (in->kind == remote::kBeat) {
      try {
        link_->note_gateway_session(proto::decode_bytes<remote::Beat>(in->body, "gateway beat").session);
      } catch (const Error&) {
        // a malformed beat still shows the gateway is there
      }
    } else if (in->kind == remote::kReply) {
      if (in->from.empty())
        gateway_replies_.push_back(std::move(in->body));
      else if (in->from == name_)
        replies_.push_back(std::move(in->body));
    } else if (in->kind == remote::kGone && in->from == name_) {
      gone_ = true;
      try {
        const auto g = proto::decode_bytes<remote::Gone>(in->body, "gone notice");
        gone_reason_ = "publisher '" + name_ + "' (session " + g.session + ") " + g.reason;
      } catch (const Error& e) {
        gone_reason_ = "publisher '" + name_ + "' is gone";
      }
    } else if (in->kind == remote::kView && in->from == name_) {
      ArrivedView v{proto::decode_bytes<remote::ViewHeader>(in->body, "view header"), std::move(in->payload)};
      if (newest_) credit(newest_->header.seq);  // dropped unseen: the gateway may send another
      newest_ = std::move(v);
    }
  }
}

std::optional<ArrivedView> RemoteChannel::take_view(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    pump(0ms);
    if (newest_) {
      auto v = std::move(newest_);
      newest_.reset();
      return v;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left <= 0ms || publisher_exited()) return std::nullopt;
    pump(std::min(left, 50ms));
  }
}

void RemoteChannel::credit(std::uint64_t seq, std::optional<std::uint64_t> from_step) {
  (void)link_->send("",
                    remote::encode_gateway_request(remote::Op::credit, 0, remote::CreditArgs{name_, 1, seq, from_step},
                                                   gateway_version_));
}

std::unique_ptr<RemoteChannel> open_remote_channel(const std::string& url, const std::string& name,
                                                   std::chrono::milliseconds timeout) {
  return std::make_unique<RemoteChannel>(url, name, timeout);
}

}  // namespace cuview::transport
