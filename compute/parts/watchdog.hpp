// A decomposed run's guard against a dead rank. The other ranks would wait for it forever in a
// halo exchange or a collective (MPI's shared-memory transport and NCCL do not notice a dead
// peer), their viewers none the wiser. The watchdog watches the ranks of this host through
// pidfds; when one dies it tells this part's clients which rank died and ends this process.
// Ranks on other hosts are mpirun's to notice: it ends the job.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cuview/posix.hpp"
#include "parts/comm.hpp"

namespace cuview::parts {

class Watchdog {
 public:
  /// A collective: learns every rank's pid and host. `on_death(reason)` runs on the watchdog's
  /// thread when a rank of this host dies before finishing() (it should tell clients; then the
  /// process is ended with _exit(1), because its loop may be stuck waiting for the dead rank).
  Watchdog(Comm& comm, std::function<void(const std::string&)> on_death);
  ~Watchdog();
  /// The run ends normally: ranks that exit from now on are not mourned. Call it before the last
  /// collective of the run, so that no rank can have passed it (and exited) before.
  void finishing() noexcept { finishing_.store(true); }

 private:
  void watch();
  struct Peer {
    int rank;
    pid_t pid;
    std::string host;
    UniqueFd pidfd;
  };
  std::vector<Peer> peers_;
  std::function<void(const std::string&)> on_death_;
  std::atomic<bool> finishing_{false};
  UniqueFd stop_;  // eventfd
  std::thread thread_;
};

}  // namespace cuview::parts
