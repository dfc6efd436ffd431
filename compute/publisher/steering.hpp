// What crosses between the program's thread and the control thread: the requests clients made
// (under one mutex) and the program's progress (atomics the control thread reads for `stats`).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cuview/protocol.hpp"
#include "cuview/ring.hpp"
#include "cuview/schema.hpp"
#include "publisher/parameter_set.hpp"

namespace cuview {

/// Clients' requests on their way to the program's poll(). Every member is guarded by `m`.
struct Steering {
  std::mutex m;
  std::condition_variable changed;       // a request arrived (wait_for_requests)
  std::unique_ptr<ParameterSet> params;  // the values clients asked for (stats shows them)
  bool params_changed = false, reset = false, shutdown = false, paused = false;
  bool reader_arrived = false;  // a reader came while none was reading (publish even while paused)
  std::vector<Stroke> strokes;                                     // drawn since the last poll()
  std::vector<std::pair<std::uint64_t, std::string>> checkpoints;  // requested since the last poll()
  std::uint64_t checkpoint_tickets = 0;
  proto::CheckpointStatus checkpoint;  // the program's report_checkpoint(); disabled until then
  /// Steps asked for (`step`, while paused) since the last poll(), and those asked for before it:
  /// steps_allowed() grants only the latter, so that a step asked for after a stroke or a
  /// parameter change never runs before the poll() that hands the program that change.
  std::uint64_t pending_steps = 0, polled_steps = 0;
  std::uint64_t requests = 0, requests_seen = 0;  // counts state-changing requests
  /// The pictures clients ask for (`render`): each client's view (by its connection), which
  /// field (its index) and when it last asked; cast with each frame until it has not asked for
  /// kPictureIdleNs. Clients asking for the same view share its pictures: the newest one of each
  /// view cast is kept in `pictures`.
  struct PictureAsk {
    proto::RenderArgs view;
    std::size_t field = 0;
    std::int64_t asked_ns = 0;
    std::int64_t since_ns = 0;  ///< when this view was first asked for (a camera that moved asks a new one)
  };
  static constexpr std::int64_t kPictureIdleNs = 5'000'000'000;
  /// A view asked for less than this long ago is a camera still moving (an orbit asks a new view
  /// every few tens of ms): its picture is cast from the newest frame, and no frame is made for it,
  /// so that the budget pays for the pictures of the moving camera rather than for frames it would
  /// leave behind (ParaView's rule: while the camera moves, time stands still). At rest, each
  /// frame brings its picture again.
  static constexpr std::int64_t kViewSettleNs = 250'000'000;
  std::map<std::string, PictureAsk> picture_asks;
  /// !picture_asks.empty(), readable without `m` (Publisher::frame_wanted); set with it.
  std::atomic<bool> pictures_asked{false};
  /// The newest pictures of each view cast, oldest first (at most kPicturesKept).
  std::vector<std::pair<proto::RenderArgs, std::vector<proto::RenderResult>>> pictures;
  static constexpr std::size_t kPicturesKept = 4;
  std::uint64_t pictures_cast = 0;
  double picture_ms = 0;
  std::string picture_error;  ///< why the last picture that failed could not be cast

  /// Counts a state-changing request and wakes the program. The caller holds `m`.
  void note_request() {
    ++requests;
    changed.notify_all();
  }
};

/// Of the views asked for, those a new frame is made for: the views at rest (asked for
/// Steering::kViewSettleNs or longer), and the moving ones the newest frame cannot serve (none yet,
/// every k-th cell only, or without their field).
std::vector<Steering::PictureAsk> views_needing_frames(const std::vector<Steering::PictureAsk>& views,
                                                       std::int64_t now_ns, const std::optional<FrameInfo>& newest);

/// The blocks a frame holds: those its `readers` asked for (`reads`, RingWriter::reads(): kAllBlocks
/// when one asked for every block) and the fields of the pictures it is made for (`views`). A frame
/// made for pictures alone holds their fields alone: a flow's speed, not also its velocity,
/// vorticity and density.
std::uint64_t frame_blocks(std::uint32_t readers, std::uint64_t reads, const std::vector<Steering::PictureAsk>& views);

/// Where the program is: written by its thread at each publish(), read by the control thread.
struct Progress {
  /// A recorded step and the monotonic time it was recorded at, and how many records so far: a
  /// step rate taken between two records is the run's, however coarsely its steps are recorded
  /// (a batch of 16 a launch, at 30 steps/s, is two records a second).
  struct Stamp {
    std::uint64_t step = 0, records = 0;
    std::int64_t ns = 0;
  };
  /// Records `at_step`; a step smaller than the last (a reset) counts a restart first, under the
  /// same lock, so a rate window that sees the smaller step also sees the restart.
  void stamp(std::uint64_t at_step, std::int64_t ns) {
    std::lock_guard lock(stamp_m);
    if (at_step < last.step) restarts.fetch_add(1);
    last = {at_step, last.records + 1, ns};
  }
  [[nodiscard]] Stamp stamped() const {
    std::lock_guard lock(stamp_m);
    return last;
  }
  /// The newest recorded step.
  [[nodiscard]] std::uint64_t step() const { return stamped().step; }
  mutable std::mutex stamp_m;
  Stamp last;

  std::atomic<std::uint64_t> restarts{0};  // times the published step went backwards (a reset)
  std::atomic<double> sim_time{0};
  std::atomic<double> publish_seconds{0};  // measured cost of every frame so far (FramePacer::cost_seconds)
  std::atomic<std::uint8_t> limit{0};      // RateLimit: what holds the frame rate down
};

}  // namespace cuview
