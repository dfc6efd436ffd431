// The publisher's state, grouped by who may touch it: what is fixed once publishing began, what
// only the program's thread uses, and what crosses to the control thread (Steering, Progress).
// The control thread's own state lives in ControlOps; the sockets in the ControlServer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuview/publisher.hpp"
#include "cuview/ring.hpp"
#include "cuview/runtime_dir.hpp"
#include "executor/executor.hpp"
#include "publisher/control_ops.hpp"
#include "publisher/pacer.hpp"
#include "publisher/steering.hpp"
#include "publisher/transport/control_server.hpp"
#include "render/volume_caster.hpp"
#include "cuview/share/slot_memory.hpp"

namespace cuview {

inline std::string where(const std::string& name) { return "publisher '" + name + "'"; }

/// What the program declared before publishing (add_field, add_param, …).
struct Declarations {
  std::vector<FieldDecl> fields;
  std::vector<ParticlesDecl> particles;
  std::vector<ParamSpec> params;
  std::vector<Preset> presets;
  std::vector<InputSpec> inputs;
  std::optional<std::string> preset;                          // use_preset()
  std::optional<std::map<std::string, double>> start_params;  // use_params(): a restored run's
  std::vector<std::uint32_t> dims;  ///< the fields' grid, slowest axis first (the first add_field's)
  std::vector<GridDecl> grids;      ///< add_grid's (start() adds the one the fields' dims give when none was)
};

struct Publisher::State {
  // ---- fixed once start() ran ----
  PublisherOptions opts;
  InstancePaths paths;
  std::unique_ptr<InstanceLock> lock;  // released last
  std::string session = random_hex(16);
  std::unique_ptr<Executor> executor;
  Declarations declared;
  bool started = false, closed = false;
  SlotLayout layout;
  struct Block {
    const FieldDecl* decl;  // in `declared`: fixed once started
    std::string what;       // "field 'u'", "attribute 'x' of particle set 'p'", for messages
    std::size_t bytes = 0;  // in the slot (packed)
    std::optional<Section> section{};  // where a strided field's cells lie in the program's buffer
  };
  std::vector<Block> blocks;  // slot order: the fields, then every particle attribute
  std::unique_ptr<share::SlotMemory> slots;
  std::unique_ptr<RingWriter> ring;
  proto::DescribeResult description;  // without params (those change)

  // ---- crossing between the program's thread and the control thread ----
  Steering steering;
  Progress progress;

  // ---- the control thread: requests' meaning, then their transport (stopped first) ----
  std::unique_ptr<ControlOps> ops;
  std::unique_ptr<ControlServer> server;

  // ---- the program's thread only ----
  /// The next frame is published at once, frame rate and budget aside: the first one, after a
  /// reset, a change while paused, publish_next_now().
  bool publish_now = true;
  bool reader_came = false;         // a reader arrived: the next frame need not wait for the frame period
  std::uint64_t arrivals_seen = 0;  // RingWriter::arrivals() when publish() last looked
  std::uint64_t reads_seen = 0;     // RingWriter::reads_changed() when publish() last looked
  FramePacer pacer;
  std::vector<FieldTarget> targets;
  SlotLayout frame_layout;  ///< the frame being written's: `layout`, a packed frame's bytes (FieldTarget::every)
  std::map<std::string, double> in_effect;
  /// `render` on CUDA: one picture in flight per view asked for, read from slot `slot`.
  struct PictureJob {
    proto::RenderArgs view;
    std::unique_ptr<AsyncPicture> gpu;
    std::uint32_t slot = 0;
    /// What a picture of this view costs: one in kAloneEvery is cast alone on the frame's stream
    /// and timed (beside the simulation a picture's time is mostly waiting for its kernels); the
    /// others are counted at that time, or their own when less. < 0: not timed yet.
    double alone_s = -1;
    std::uint64_t cast = 0;
    bool queued_alone = false;
    struct Frame {
      std::uint64_t seq = 0, step = 0;
      double time = 0;
      std::int64_t stamp_ns = 0;
    } frame;
  };
  static constexpr std::size_t kMaxPictureViews = 4;  ///< views cast at once (the newest asked)
  static constexpr std::uint64_t kAloneEvery = 16;
  std::vector<PictureJob> picture_jobs;
  /// The newest frame written, while its slot is not being rewritten: a new view's first picture
  /// is cast from it (pictures_from_newest).
  std::optional<FrameInfo> newest_frame;

  explicit State(PublisherOptions o)
      : opts(std::move(o)),
        paths(opts.name, opts.part ? std::optional(opts.part->index) : std::nullopt),
        pacer(opts.max_fps, opts.max_cost) {}

  void claim();
  void check_declarable(const std::string& what) const;
  void check_name(const std::string& name) const;
  void check_buffer(const FieldDecl& f, const std::string& what) const;
  void start();
  /// Fewer ring slots than asked where the GPU has no room for them (a warning says so); an
  /// error naming the memory a frame needs where not one fits.
  void fit_slots();
  void describe();
  bool publish(std::uint64_t step, double sim_time, const FieldWriter* write, cuda::StreamRef stream);
  void record(std::uint64_t step, double sim_time);
  /// Hands the costs of frames finished since the last call to the pacer and to stats.
  void take_costs();
  /// Notes a reader that arrived while none was reading.
  void look_for_arrivals();
  /// The views of pictures asked for (`render`) and not given up, each once, newest first.
  [[nodiscard]] std::vector<Steering::PictureAsk> pictures_wanted();
  /// Casts a picture from the frame in `slot` on this thread (host backend) and keeps it.
  void cast_on_host(const Steering::PictureAsk& ask, const void* slot, const PictureJob::Frame& at);
  /// Queues each view's picture of the frame just written in `slot` (CUDA), one in flight per view.
  void queue_pictures(const std::vector<Steering::PictureAsk>& views, std::uint32_t slot,
                      const PictureJob::Frame& at, cuda::StreamRef stream);
  /// Casts each new view (no picture of it yet, none being cast) from the newest frame, when it
  /// holds the view's field whole and the budget has room now — or, beyond the budget's pace, one
  /// view once between frames (FramePacer::may_borrow); returns the views cast.
  std::vector<proto::RenderArgs> pictures_from_newest(const std::vector<Steering::PictureAsk>& views,
                                                      cuda::StreamRef stream);
  /// Takes the pictures whose casting has finished (never waits), and counts their cost.
  void collect_pictures();
  void keep_picture(const proto::RenderArgs& view, const VolumePicture& p, const PictureJob::Frame& at, double seconds);
  void close(const std::string& reason) noexcept;
};

}  // namespace cuview
