// The viewer's worker thread (after Qt's threaded mandelbrot example): it owns the Client, so
// every ZeroMQ socket and every wait lives here and the UI thread never blocks. It copies its
// inputs under a lock, attaches (and re-attaches after a daemon restart by itself), takes the
// newest frame, has the render step (render/view_renderer.hpp) turn it into a picture at the
// window's size, and hands that to the UI, a value type over a queued connection. A frame is
// rendered only once the view has painted the previous one: frames are skipped, never queued.
// Through a gateway (a remote target) it watches the field and region the view shows instead, and
// colours the views the gateway samples; the watch follows the view, once per turn of its loop, so
// that a burst of zooms and pans becomes one watch.
#pragma once

#include <QMutex>
#include <QString>
#include <QThread>
#include <QWaitCondition>
#include <future>
#include <optional>

#include "cuview/client.hpp"
#include "render/rendered_frame.hpp"
#include "render/view_renderer.hpp"
#include "render/volume_view.hpp"
#include "worker/command_queue.hpp"

namespace cuview::gui {

enum class Connection { detached, connecting, connected, waiting, failed };

class ViewerWorker : public QThread {
  Q_OBJECT
 public:
  explicit ViewerWorker(QObject* parent = nullptr);
  ~ViewerWorker() override;  // stops, wakes and joins the thread

  // Each of these may be called from any thread.
  /// Attach to `name` (and keep re-attaching to it), through the gateway at `remote` when it is not
  /// empty (AttachOptions::remote); an empty name detaches.
  void set_target(const QString& name, const QString& remote = {});
  void set_view(const ViewRequest& v);
  /// The view has painted the last frame: the worker may render the next one.
  void frame_shown();
  /// Runs `command` with the client on the worker thread, merged by key with one still queued
  /// (CommandQueue); a refusal comes back as error().
  void post(Command command);

 Q_SIGNALS:
  void frame_ready(const cuview::gui::RenderedFrame& frame);
  void connection_changed(cuview::gui::Connection state, const QString& text);
  void described(const cuview::proto::DescribeResult& description);
  void stats_updated(const cuview::proto::Stats& stats);
  void error(const QString& message);

 protected:
  void run() override;

 private:
  void set_state(Connection s, const QString& text);
  void try_attach(const QString& name, const QString& remote);
  /// While `opening` attaches for frames (this process's CUDA context, the ring), asks the run
  /// over a control-only connection for its own picture of the plane the window shows (`render`
  /// mode "plane", protocol 11) and hands it over: the first pixels need no CUDA context here.
  /// Returns once it is shown, `opening` is done, or 2 s have passed; says nothing of failures
  /// (the frames' attach does).
  void show_first_picture(const OpenOptions& options, std::future<std::unique_ptr<Run>>& opening);
  void run_commands(std::deque<Command> commands);
  /// Renders the held frame as `view` asks and hands it over; with nothing to hand over, the
  /// next frame may come at once. `fresh`: the frame arrived since the last render (a volume view
  /// takes its brick then, and otherwise draws the one it holds).
  void render(const ViewRequest& view, bool fresh);
  /// Hands a rendered frame of sequence `seq` to the UI, or frees the worker for the next one.
  void hand_over(RenderResult result, std::uint64_t seq);
  void drop_client();
  /// The connection that takes steering and stats: the whole publisher's, or part 0's of a run of
  /// parts; null while detached.
  [[nodiscard]] cuview::Attachment* leader();
  /// Remote: watches what `view` shows (when that changed), colours the newest view the gateway
  /// sent, or the one held when only the colours changed.
  void render_remote(const ViewRequest& view, bool view_changed);
  /// Remote, a volume seen whole: watches a brick of the field `w` names, draws the newest brick
  /// the gateway sent, or the one held when only the camera or colours changed.
  void render_remote_volume(const ViewRequest& view, bool view_changed, ViewWatch w);
  /// A volume seen whole with the camera at rest, on this host or through gateways: asks the run
  /// for the picture of every cell (protocol 10, `render`) and shows each new one (ParaView's
  /// rule: a coarse picture while the camera moves, full resolution once it rests). Returns
  /// whether it handed one over.
  bool show_run_picture(const ViewRequest& view, bool view_changed, bool arrived);
  /// show_run_picture() once the UI has taken the last picture handed over (or the view changed).
  void offer_run_picture(const ViewRequest& view, bool view_changed, bool arrived);

  QMutex mu_;
  QWaitCondition wake_;
  QString target_, remote_;
  ViewRequest view_;
  std::uint64_t view_serial_ = 0;  ///< views set so far (set_view)
  bool view_changed_ = false;
  bool shown_ = true;
  bool stop_ = false;
  CommandQueue commands_;

  // worker-thread state
  std::unique_ptr<Run> run_;  ///< what the target names (cuview::open): local or through gateways
  /// Local: every part's frame of one step (one frame for a whole publisher), held so that a
  /// paused simulation can be re-rendered.
  std::optional<FrameGroup> current_group_;
  /// A volume view's next frame, kept while current_group_ is still being written (run()).
  std::optional<FrameGroup> next_group_;
  /// The fields this viewer reads (Run::read_fields): the one it shows; empty for every field (a
  /// particle view). Unset until first asked.
  std::optional<std::vector<std::string>> reading_;
  /// Frames of every k-th cell this viewer also takes (Run::read_every): the volume view's brick
  /// stride; 1 otherwise. 0 until first asked.
  std::uint32_t every_ = 0;
  bool said_phases_ = false;  ///< the first frame's attach phases logged, for this attachment
  proto::DescribeResult group_description_;       ///< part 0's, with the global grid's size
  std::vector<const proto::DescribeResult*> part_descriptions_;
  Connection state_ = Connection::detached;
  QString state_text_;
  std::uint64_t last_seq_ = 0;
  QString client_remote_;                 ///< the gateways run_ is attached through
  std::optional<ViewWatch> watched_;      ///< what the gateway was last asked to send
  std::optional<RemoteView> held_view_;   ///< the newest remote view, kept for colour changes
  RemoteView incoming_;                   ///< next_view's buffers, reused
  std::shared_ptr<const HostBrick> held_brick_;  ///< remote: the newest brick, drawn again for camera changes
  remote::ViewHeader held_brick_header_;
  ViewRenderer renderer_;  ///< its sampler's pinned rows and copy stream belong to this thread
  VolumeViewRenderer volume_;  ///< the volume view's brick, held for camera changes
  QString volume_refusal_;     ///< why the volume view showed nothing last (said once)
  bool volume_pending_ = false;  ///< a frame arrived whose brick is not taken yet (still being written)
  bool fresh_view_ = false;      ///< the view changed since the last picture (a camera move: draw the brick held)
  /// Pictures cast by the run from every cell (show_run_picture).
  struct RunPictures {
    int refused_field = -1;  ///< the field the publisher casts none of (a version before 10, its dtype): bricks only
    std::chrono::steady_clock::time_point moved{};     ///< when the view last changed
    std::chrono::steady_clock::time_point next_ask{};  ///< asked again no sooner, unless a frame came
    std::optional<proto::RenderArgs> asked;  ///< the view asked for since the camera rested
    bool showing = false;     ///< a picture of `asked` is on screen: frames' bricks are taken, not drawn
    std::uint64_t shown_seq = 0;
  } run_pictures_;
  /// How long the view stays unchanged before full resolution is asked for: a camera at rest.
  static constexpr std::chrono::milliseconds kRestMs{150};
};

}  // namespace cuview::gui

Q_DECLARE_METATYPE(cuview::gui::Connection)
Q_DECLARE_METATYPE(cuview::proto::DescribeResult)
Q_DECLARE_METATYPE(cuview::proto::Stats)
