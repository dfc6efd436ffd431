// cuview-compute's loop: a Simulation run by the Publisher, the way a program embedding the
// publisher runs its own (docs/sdk.md). The loop steps, publishes and applies what clients asked
// for between batches; the publisher's thread answers the clients.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "checkpoint/checkpointer.hpp"
#include "cuview/extent.hpp"
#include "cuview/posix.hpp"
#include "cuview/publisher.hpp"
#include "sims/plugin.hpp"
#include "sims/simulation.hpp"
#include "sims/slab.hpp"

namespace cuview::parts {
class Comm;
}

namespace cuview {

struct DaemonOptions {
  std::string name = "default";
  std::string backend = "auto";  ///< auto | cuda | host
  std::string sharing = "auto";  ///< auto | legacy | vmm | pool (docs/sharing.md)
  int device = -1;               ///< the GPU (CUDA ordinal); -1: the first usable
  /// A built-in simulation (sim::builtin_simulations()), or the path of a plugin (a name with a
  /// '/' or ending in ".so").
  std::string sim = "grayscott";
  std::map<std::string, std::string> sim_options;  ///< passed to the simulation (e.g. steps_per_launch)
  /// The grid, slowest axis first (--size WxH gives {H, W}; WxHxD {D, H, W}; W {W}): as many axes
  /// as the simulation's.
  Axes size{512, 512};
  std::uint32_t slots = 3;
  double max_fps = 60;  ///< frames published per second at most; 0 = after every batch
  double max_cost = 0.01;  ///< the cost budget: publishing's largest share of the run (PublisherOptions)
  std::uint64_t seed = 1;
  std::string preset;  ///< empty: the simulation's first preset
  bool start_paused = false;
  int ready_fd = -1;  ///< written "ready\n" and closed once clients can attach
  /// Called once clients can attach (cuview-compute tells systemd, sd_notify READY=1), and as the
  /// daemon starts to stop ("stopping").
  std::function<void(std::string_view)> on_state;
  // Checkpoints (docs/checkpoints.md)
  std::string checkpoint_dir;     ///< empty: $XDG_STATE_HOME/cuview/NAME
  double checkpoint_every_s = 0;  ///< 0: on request and at exit only
  unsigned keep = 5;              ///< checkpoints kept in the directory; 0: all
  bool final_checkpoint = true;   ///< one at SIGTERM/SIGINT/shutdown
  std::string restore;            ///< a checkpoint file, or "latest" (in the directory); empty: start afresh
  /// Set when the run is decomposed over ranks (cuview-compute under mpirun): this process is
  /// rank comm->rank() and publishes part comm->rank() of `name`; width × height is the global
  /// grid, split into slabs of rows. Every rank makes its Daemon and calls run() (a collective).
  parts::Comm* comm = nullptr;
};

/// Blocks SIGINT and SIGTERM in the calling thread (and threads it starts later), so that the
/// daemon receives them through its signalfd. Call first thing in main().
void block_shutdown_signals();

class Daemon {
 public:
  /// Claims the name, makes the simulation on the chosen backend, declares it to the publisher.
  /// Throws Error(access | already_running | cuda | bad_value | out_of_range | system).
  explicit Daemon(const DaemonOptions& opts);

  /// Runs until SIGTERM/SIGINT or a `shutdown` request, then shuts down gracefully: returns 0.
  /// When the simulation fails (throws, or its GPU work fails) it says so, tells the clients and
  /// shuts down the same way: returns 1.
  int run();

  /// For benchmarks (cuview-bench --sections publish): whether the loop calls publish() at all.
  /// Off, the run goes on and clients get no frame. Any thread.
  void set_publishing(bool on) noexcept { publishing_.store(on); }
  /// Steps taken so far (updated after each batch; `stats` sees them only through publish()). Any thread.
  [[nodiscard]] std::uint64_t steps_taken() const noexcept { return steps_taken_.load(std::memory_order_relaxed); }

 private:
  /// Runs one call into the simulation; whatever it throws becomes SimulationFailed naming the
  /// simulation, the plugin file and the call.
  template <class F>
  decltype(auto) in_simulation(const char* call, F&& f);
  void apply_params(const std::map<std::string, double>& values);
  void reset();
  void publish();
  /// When a batch of a simulation that writes frames in its step (writes_in_step_) publishes one.
  enum class FrameAfter { if_due, now, none };
  /// A batch of `n` steps of such a simulation, advancing step_ and sim_time_: its last step writes
  /// the frame when publish() makes one (`when`: if due, or now — parts that agreed on it); a batch
  /// without a frame is timed (Executor::timed_steps), so that a frame counts only what writing
  /// adds to its batch. Returns whether a frame was published.
  bool step_writing(std::uint32_t n, FrameAfter when);
  /// A batch of `n` steps of `dt` each has been queued: ends the batch, counts the steps and time.
  void ran(std::uint32_t n, double dt);
  /// Reads, verifies and checks opts_.restore against this run before anything starts.
  void load_checkpoint();
  void report_checkpoints();
  /// The decomposed run's loop: rank 0 polls, every rank applies the same turn (docs/protocol.md "Parts").
  int run_parts();
  /// Parts: where this rank's checkpoints go (the run's directory, part-K).
  [[nodiscard]] std::filesystem::path checkpoint_dir() const;

  DaemonOptions opts_;
  std::optional<sim::Plugin> plugin_;  // outlives the simulation it made
  std::string sim_name_;               // the built-in's name, or the plugin's own
  std::unique_ptr<sim::Halo> halo_;  // parts: outlives the simulation that exchanges through it
  sim::Slab slab_;                  // parts: the rows this rank owns
  std::optional<Publisher> publisher_;
  std::unique_ptr<sim::Simulation> sim_;
  std::unique_ptr<checkpoint::Checkpointer> checkpointer_;
  std::optional<checkpoint::Loaded> restored_;
  checkpoint::Meta meta_;  // what every checkpoint of this run says besides step, time and parameters
  FieldWriter write_fields_;
  bool writes_in_step_ = false;  ///< the simulation writes frames in its own step (Simulation::step_and_write)
  UniqueFd signals_;
  std::atomic<bool> publishing_{true};
  std::atomic<std::uint64_t> steps_taken_{0};
  std::uint32_t steps_per_frame_ = 16;
  std::uint64_t step_ = 0;
  double sim_time_ = 0;
};

}  // namespace cuview
