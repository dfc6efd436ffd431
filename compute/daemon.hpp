// cuview-compute's event loop: runs the simulation, publishes frames into the ring, answers
// control requests. Single-threaded; it never blocks on a client.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "cuview/posix.hpp"
#include "cuview/protocol.hpp"
#include "cuview/ring.hpp"
#include "cuview/runtime_dir.hpp"
#include "executor/executor.hpp"
#include "publisher/frame_writer.hpp"
#include "publisher/parameter_set.hpp"
#include "share/slot_memory.hpp"
#include "sims/plugin.hpp"
#include "sims/simulation.hpp"

namespace cuview {

struct DaemonOptions {
  std::string name = "default";
  std::string backend = "auto";  ///< auto | cuda | host
  /// A built-in simulation (sim::builtin_simulations()), or the path of a plugin (a name with a
  /// '/' or ending in ".so").
  std::string sim = "grayscott";
  std::map<std::string, std::string> sim_options;  ///< passed to the simulation (e.g. steps_per_launch)
  std::uint32_t width = 512, height = 512, slots = 3;
  double max_fps = 60;  ///< frames published per second at most; 0 = after every batch
  std::uint64_t seed = 1;
  std::string preset;  ///< empty: the simulation's first preset
  bool start_paused = false;
  int ready_fd = -1;  ///< written "ready\n" and closed once clients can attach
};

/// Blocks SIGINT and SIGTERM in the calling thread (and threads it starts later), so that the
/// daemon receives them through its signalfd. Call first thing in main().
void block_shutdown_signals();

class Daemon {
 public:
  /// Claims the runtime directory and lock, creates the backend, ring and sockets.
  /// Throws Error(access | already_running | cuda | bad_value | system).
  explicit Daemon(const DaemonOptions& opts);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  /// Runs until SIGTERM/SIGINT or a `shutdown` request, then shuts down gracefully: returns 0.
  /// When the simulation fails (throws, or its GPU work fails) it says so, tells the clients and
  /// shuts down the same way: returns 1.
  int run();

 private:
  struct Peer {
    std::string client;
    ProcessHandle process;
    std::optional<std::uint32_t> lease;
  };

  std::string handle(const std::string& peer, std::string_view bytes);
  void serve_control();
  void drop_peer(const std::string& peer, const char* why);
  void simulate();
  /// Runs one call into the simulation; whatever it throws becomes SimulationFailed naming the
  /// simulation, the plugin file and the call.
  template <class F>
  decltype(auto) in_simulation(const char* call, F&& f);
  void apply_params(std::map<std::string, double> values);
  void publish_frame();
  void update_rates();
  proto::Stats stats() const;
  /// The fields `describe` and `stats` share: session, backend, device, sim, size, slots.
  template <class Reply>
  void fill_identity(Reply& r) const;
  proto::DescribeResult describe() const;
  void clean_leftovers();
  void write_segments_file() const;

  DaemonOptions opts_;
  InstancePaths paths_;
  std::unique_ptr<InstanceLock> lock_;  // declared early: released last
  std::string session_;
  std::unique_ptr<Executor> executor_;
  std::optional<sim::Plugin> plugin_;  // outlives the simulation it made
  std::string sim_name_;               // the built-in's name, or the plugin's own
  std::unique_ptr<sim::Simulation> sim_;
  std::vector<sim::FieldSpec> fields_;
  std::vector<sim::ParticleSetSpec> particles_;
  std::unique_ptr<FrameWriter> writer_;
  std::unique_ptr<SlotMemory> slots_;
  std::unique_ptr<ParameterSet> params_;
  std::unique_ptr<RingWriter> ring_;
  zmq::context_t ctx_{1};
  zmq::socket_t router_{ctx_, zmq::socket_type::router};
  zmq::socket_t pub_{ctx_, zmq::socket_type::pub};
  UniqueFd signals_;
  std::map<std::string, Peer> peers_;

  std::uint32_t steps_per_frame_ = 16;
  bool paused_ = false;
  bool stop_ = false;
  std::uint64_t pending_steps_ = 0;  // requested by `step` while paused
  bool publish_now_ = false;
  std::uint64_t step_ = 0;
  double sim_time_ = 0;
  std::uint64_t frames_published_ = 0;
  std::int64_t last_publish_ns_ = 0;
  std::int64_t started_ns_ = 0;
  // rates, measured over the last half second
  std::int64_t rate_t0_ = 0;
  std::uint64_t rate_step0_ = 0, rate_frames0_ = 0;
  double steps_per_s_ = 0, frames_per_s_ = 0;
};

}  // namespace cuview
