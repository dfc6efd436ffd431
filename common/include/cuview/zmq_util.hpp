// ZeroMQ socket settings shared by the daemon and its clients.
#pragma once

#include <zmq.hpp>

namespace cuview {

/// ZMTP heartbeats every 250 ms, peer declared dead after 1 s without traffic; no linger, so
/// closing never blocks on a peer that went away; bounded message size.
void configure_client_socket(zmq::socket_t& s);
/// Server sockets also accept ipc:// peers of this uid only; false when libzmq cannot filter.
bool configure_server_socket(zmq::socket_t& s);

}  // namespace cuview
