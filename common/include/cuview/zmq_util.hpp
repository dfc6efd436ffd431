// ZeroMQ socket settings shared by the daemon and its clients.
#pragma once

#include <zmq.hpp>

namespace cuview {

/// No linger, so closing never blocks on a peer that went away; bounded message size. No ZMTP
/// heartbeats: on one host a peer's liveness is its process (pidfd), and a heartbeat timeout on a
/// loaded machine would make ZeroMQ connect again under a new identity, losing the peer's hello.
void configure_client_socket(zmq::socket_t& s);
/// Server sockets also accept ipc:// peers of this uid only; false when libzmq cannot filter.
bool configure_server_socket(zmq::socket_t& s);
/// The remote links (gateway and remote clients, end to end through ssh or TCP): ZMTP heartbeats
/// every 500 ms, the peer declared gone after 3 s without traffic (kSilenceLimitMs), so that a
/// host or network that vanished without closing the connection is noticed on both ends.
void enable_remote_heartbeats(zmq::socket_t& s);

}  // namespace cuview
