// When and where cuview-compute writes checkpoints: on request (`cuview-ctl checkpoint`), every
// --checkpoint-every, and at exit. The simulation's loop only waits for its state to reach
// host memory (pinned on CUDA); a writer thread turns it into a file while the simulation goes on.
// One write at a time: a request that finds the writer busy waits its turn, a periodic one that
// finds it busy is taken when it is free.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/checkpoint_file.hpp"
#include "cuview/protocol.hpp"
#include "executor/executor.hpp"
#include "sims/simulation.hpp"

namespace cuview::checkpoint {

struct Options {
  std::filesystem::path dir;  ///< where periodic, final and unnamed checkpoints go
  double every_s = 0;         ///< 0: no periodic checkpoints
  unsigned keep = 5;          ///< checkpoints kept in `dir` (the oldest are removed); 0 keeps all
};

/// $XDG_STATE_HOME/cuview/NAME (default ~/.local/state/cuview/NAME).
[[nodiscard]] std::filesystem::path default_dir(const std::string& name);
/// "90s", "5m", "1h", "250ms", or plain seconds; throws Error(bad_value) naming `text`.
[[nodiscard]] double parse_duration(const std::string& text);

class Checkpointer {
 public:
  /// Creates `o.dir` (0700) and removes the temporary files of writes that were killed. `base`
  /// carries what does not change (simulation, version, grid, options, backend).
  Checkpointer(Options o, Executor& executor, sim::Simulation& sim, Meta base);
  ~Checkpointer();  ///< waits for a write under way
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  /// A client's request (`ticket` from the publisher); `path` empty: into the directory.
  void request(std::uint64_t ticket, std::string path);
  /// Between batches: captures the state when a request waits or the period is due and the
  /// writer is free. `now_s` is monotonic seconds.
  void tick(std::uint64_t step, double sim_time, const std::map<std::string, double>& params, double now_s);
  /// Decomposed runs, where every rank must capture the same step: waits for a write under way,
  /// captures now and hands the file to the writer. `ticket`: the request it answers (0: none).
  void capture_now(std::uint64_t step, double sim_time, const std::map<std::string, double>& params,
                   std::uint64_t ticket);
  /// At exit: waits for the writer, then captures and writes on this thread. Returns the file.
  /// Throws Error naming what failed.
  std::filesystem::path write_now(std::uint64_t step, double sim_time, const std::map<std::string, double>& params);
  /// The whole status when it changed since the last call (first: enabled, where, how often; then
  /// each write finished or failed), for the publisher's stats.
  [[nodiscard]] std::optional<proto::CheckpointStatus> take_status();

  /// The newest checkpoint of `dir` that reads back whole, skipping (and logging) damaged ones:
  /// its path and what was read (verified; not read again). Throws Error(bad_value) when there is none.
  [[nodiscard]] static std::pair<std::filesystem::path, Loaded> latest(const std::filesystem::path& dir);

 private:
  struct Job {
    std::filesystem::path path;
    Meta meta;
    std::uint64_t ticket = 0;
    double stall_ms = 0;
    bool prune = false;  // in the directory: keep only the newest `keep`
  };
  Job capture(std::uint64_t step, double sim_time, const std::map<std::string, double>& params, std::string path,
              std::uint64_t ticket);
  void finish(const Job& job, const std::string& error, double write_ms);
  /// Captures now and gives the file to the writer (which the caller found free).
  void hand_over(std::uint64_t step, double sim_time, const std::map<std::string, double>& params,
                 const std::string& path, std::uint64_t ticket);
  void run_writer();
  void prune();

  Options o_;
  Executor& executor_;
  sim::Simulation& sim_;
  Meta base_;
  std::vector<sim::StateSpec> specs_;
  std::vector<Block> blocks_;  // the capture buffers, reused: a capture waits for an idle writer
  double next_due_s_ = -1;
  std::deque<std::pair<std::uint64_t, std::string>> requests_;  // the loop's thread only

  std::mutex m_;
  std::condition_variable cv_;
  std::optional<Job> job_;  // handed to the writer
  bool busy_ = false, stop_ = false, status_changed_ = false;
  proto::CheckpointStatus status_;
  std::thread writer_;
};

}  // namespace cuview::checkpoint
