#include "cuview/zmq_util.hpp"

#include <unistd.h>

#include "cuview/protocol.hpp"

namespace cuview {

static void common_options(zmq::socket_t& s) { s.set(zmq::sockopt::linger, 0); }

void enable_remote_heartbeats(zmq::socket_t& s) {
  s.set(zmq::sockopt::heartbeat_ivl, 500);
  s.set(zmq::sockopt::heartbeat_timeout, 3000);
  s.set(zmq::sockopt::heartbeat_ttl, 3000);
}

void configure_client_socket(zmq::socket_t& s) {
  common_options(s);
  s.set(zmq::sockopt::reconnect_ivl, 100);
  s.set(zmq::sockopt::sndhwm, 64);
}

bool configure_server_socket(zmq::socket_t& s) {
  common_options(s);
  s.set(zmq::sockopt::maxmsgsize, proto::kMaxWireBytes);
  s.set(zmq::sockopt::sndhwm, 1000);
  s.set(zmq::sockopt::rcvhwm, 1000);
  // Besides the 0700 directory: the kernel's SO_PEERCRED check drops connections of other uids.
  const int uid = static_cast<int>(::getuid());
  return zmq_setsockopt(s.handle(), ZMQ_IPC_FILTER_UID, &uid, sizeof uid) == 0;
}

}  // namespace cuview
