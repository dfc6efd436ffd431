// The meaning of every request: one handler per operation of the protocol (proto::Op), chosen by
// one switch, plus the peers that said hello, their leases and the rates `stats` reports. It
// implements ControlHandler, so it sees requests and peer names, never sockets: the transport
// (publisher/transport/) delivers them. Runs on the control thread only.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cuview/protocol.hpp"
#include "cuview/publisher.hpp"
#include "cuview/ring.hpp"
#include "publisher/steering.hpp"
#include "publisher/transport/control_server.hpp"
#include "cuview/share/slot_memory.hpp"

namespace cuview {

/// What the handlers read and steer, fixed once the publisher started; every reference outlives
/// the ControlOps.
struct ControlContext {
  const PublisherOptions& opts;
  const std::string& session;
  const Executor& executor;
  const proto::DescribeResult& description;  // without params (those change)
  const std::vector<InputSpec>& inputs;
  RingWriter& ring;
  const share::SlotMemory& slots;
  Steering& steering;
  const Progress& progress;
  ControlServer& server;
};

class ControlOps final : public ControlHandler {
 public:
  explicit ControlOps(const ControlContext& context);

  std::string answer(const std::string& peer, std::string_view bytes) override;
  void peer_exited(const std::string& peer) override;
  std::vector<int> descriptors_for(const proto::FdRequest& request, pid_t pid) override;
  void tick() override;

 private:
  struct Peer {
    std::string id;  // the transport's name for the connection
    std::string client;
    pid_t pid = -1;
    std::optional<std::uint32_t> lease;
    std::string fd_token;  // given with `handles`: lets this process fetch the descriptors
  };
  // Rates over windows of at least half a second; a window in which the step went backwards
  // (a reset) is dropped and a new one begins, so a rate is never a difference across a reset.
  struct RateWindow {
    std::int64_t t0 = 0;
    std::uint64_t frames0 = 0, restarts0 = 0;
    double cost0 = 0;  // Progress::publish_seconds
  };

  std::string dispatch(proto::Op op, const std::string& peer, const proto::Request& req);
  std::string op_hello(const std::string& peer, const proto::Request& req);
  std::string op_describe(Peer& peer, const proto::Request& req);
  std::string op_handles(Peer& peer, const proto::Request& req);
  std::string op_stats(Peer& peer, const proto::Request& req);
  std::string op_pause(Peer& peer, const proto::Request& req);
  std::string op_resume(Peer& peer, const proto::Request& req);
  std::string op_step(Peer& peer, const proto::Request& req);
  std::string op_set(Peer& peer, const proto::Request& req);
  std::string op_reset(Peer& peer, const proto::Request& req);
  std::string op_draw(Peer& peer, const proto::Request& req);
  std::string op_checkpoint(Peer& peer, const proto::Request& req);
  std::string op_detach(Peer& peer, const proto::Request& req);
  std::string op_shutdown(Peer& peer, const proto::Request& req);
  std::string op_render(Peer& peer, const proto::Request& req);

  Peer& attached(const std::string& peer, const proto::Request& req);
  void pause_or_resume(Peer& peer, bool pause);
  /// Forgets `peer` and closes its lease (the transport no longer watches it).
  void release_peer(const std::string& peer, const char* why);
  /// Refuses a request whose session is not this run's, on either socket.
  [[nodiscard]] Error stale_session_error(const std::string& theirs) const;
  [[nodiscard]] RateWindow open_window(std::int64_t now) const;
  void update_rates();

  ControlContext c_;
  std::map<std::string, Peer> peers_;
  std::int64_t started_ns_ = 0;
  RateWindow window_;         // frames/s's
  Progress::Stamp steps_from_;  // steps/s's window: from one record of a step to another (none yet: records 0)
  double record_interval_ = 0;  // seconds between two records, over the last closed steps window
  bool first_window_ = true;  // no window has closed yet: stats reports the open one
  double steps_per_s_ = 0, frames_per_s_ = 0, cost_ = 0;
  RateWindow cost_window_;  // the cost's, of at least 5 s (t0 and cost0 only)
  bool first_cost_window_ = true;
  std::uint64_t reads_seen_ = 0;  // RingWriter::reads_changed() at the last tick
};

}  // namespace cuview
