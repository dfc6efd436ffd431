// A simulation backend: owns the state and the ring's slot memory, advances the simulation and
// copies frames into slots. The daemon decides which slot (cuview/ring.hpp); the backend only
// writes where it is told. Single-threaded: called from the daemon's loop only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuview/frame_layout.hpp"
#include "cuview/protocol.hpp"
#include "sim/grayscott.hpp"

namespace cuview {

inline constexpr std::uint32_t kDefaultStepsPerLaunch = 4;

struct BackendConfig {
  std::uint32_t width = 512, height = 512, slots = 3;
  /// CUDA: simulation steps per kernel launch (1 to 4; temporal blocking above 1). The results
  /// are the same bits either way; docs/benchmarks.md says which is fastest.
  std::uint32_t steps_per_launch = kDefaultStepsPerLaunch;
};

class SimBackend {
 public:
  virtual ~SimBackend() = default;
  [[nodiscard]] virtual std::string kind() const = 0;    ///< "cuda" | "host"
  [[nodiscard]] virtual std::string device() const = 0;  ///< GPU or CPU name
  /// Sets the initial state generated from `seed` (sim::initial_state).
  virtual void reset(std::uint64_t seed) = 0;
  /// Advances `steps` steps (asynchronously on CUDA; at most two batches stay in flight).
  virtual void advance(std::uint32_t steps, const sim::GrayScottParams& p) = 0;
  /// Copies the current state into `slot` with its trailer (seq, step, checksum). On CUDA this
  /// is queued behind the simulation and followed by the slot's interprocess event record.
  virtual void publish(std::uint32_t slot, std::uint64_t seq, std::uint64_t step) = 0;
  /// Blocks until every queued operation completed (before exit).
  virtual void finish() = 0;
  /// Fills the backend-specific part of a `handles` reply.
  virtual void fill_handles(proto::HandlesResult& h) const = 0;
  /// CUDA: a slot's device address and the stream (cudaStream_t) its writes are queued on, for
  /// tools that move frames by other means (cuview-bench's copy-through-the-host comparison).
  /// Host backend: both null.
  struct DeviceSlot {
    void* data = nullptr;
    void* stream = nullptr;
  };
  [[nodiscard]] virtual DeviceSlot device_slot(std::uint32_t /*slot*/) const { return {}; }
  /// Shared-memory segments this backend created (for clean-up after a crash).
  [[nodiscard]] virtual std::vector<std::string> segments() const { return {}; }
  [[nodiscard]] const SlotLayout& layout() const noexcept { return layout_; }

 protected:
  SlotLayout layout_;
};

std::unique_ptr<SimBackend> make_host_backend(const BackendConfig& cfg);
#ifdef CUVIEW_HAVE_CUDA
/// Throws Error(cuda) when no usable device exists.
std::unique_ptr<SimBackend> make_cuda_backend(const BackendConfig& cfg);
#endif

}  // namespace cuview
