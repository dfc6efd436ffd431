// Clients speaking the protocol by hand, as one written from docs/protocol.md would: a DEALER
// socket, hello, then requests carrying the session (every reply must be ok: the test fails
// otherwise, with the error's code and message); and a raw peer that sends whatever bytes a test
// wants, for the refusals.
#pragma once

#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "cuview/protocol.hpp"
#include "cuview/runtime_dir.hpp"

namespace cuview::test {

struct ProtocolClient {
  zmq::context_t ctx;
  zmq::socket_t sock{ctx, zmq::socket_type::dealer};
  std::string session;
  std::uint64_t id = 1;
  ProtocolClient(const std::string& name, const std::string& client) {
    sock.set(zmq::sockopt::linger, 0);
    sock.set(zmq::sockopt::rcvtimeo, 10000);
    sock.connect(InstancePaths(name).control_endpoint());
    session = call<proto::HelloResult>("hello", proto::HelloArgs{client, ::getpid()}).session;
  }
  /// The reply to `op`, its `result` still a MessagePack map.
  template <class Args>
  proto::Reply request(const std::string& op, const Args& args) {
    sock.send(zmq::buffer(proto::encode_request(op, id++, op == "hello" ? "" : session, args)));
    zmq::message_t m;
    REQUIRE(sock.recv(m));
    auto r = proto::decode_reply(m.to_string_view());
    INFO(op << ": " << r.error.code << " " << r.error.message);
    REQUIRE(r.ok);
    return r;
  }
  template <class Result, class Args>
  Result call(const std::string& op, const Args& args) {
    return proto::decode_as<Result>(request(op, args).result, op);
  }
};

/// A raw DEALER on the daemon's control socket: sends whatever bytes a test wants.
struct RawPeer {
  zmq::context_t ctx;
  zmq::socket_t sock{ctx, zmq::socket_type::dealer};
  explicit RawPeer(const std::string& name) {
    sock.set(zmq::sockopt::linger, 0);
    sock.set(zmq::sockopt::rcvtimeo, 10000);
    sock.connect(InstancePaths(name).control_endpoint());
  }
  proto::Reply send(const std::vector<std::string>& parts) {
    for (std::size_t i = 0; i < parts.size(); ++i)
      sock.send(zmq::buffer(parts[i]), i + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
    zmq::message_t m;
    REQUIRE(sock.recv(m));
    return proto::decode_reply(m.to_string_view());
  }
  proto::Reply send(const std::string& bytes) { return send(std::vector<std::string>{bytes}); }
};

}  // namespace cuview::test
