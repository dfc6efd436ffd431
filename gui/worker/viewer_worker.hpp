// The viewer's worker thread (after Qt's threaded mandelbrot example): it owns the Client, so
// every ZeroMQ socket and every wait lives here and the UI thread never blocks. It copies its
// inputs under a lock, attaches (and re-attaches after a daemon restart by itself), takes the
// newest frame, has the render step (render/view_renderer.hpp) turn it into a picture at the
// window's size, and hands that to the UI, a value type over a queued connection. A frame is
// rendered only once the view has painted the previous one: frames are skipped, never queued.
#pragma once

#include <QMutex>
#include <QString>
#include <QThread>
#include <QWaitCondition>
#include <optional>

#include "cuview/client.hpp"
#include "render/rendered_frame.hpp"
#include "render/view_renderer.hpp"
#include "worker/command_queue.hpp"

namespace cuview::gui {

enum class Connection { detached, connecting, connected, waiting, failed };

class ViewerWorker : public QThread {
  Q_OBJECT
 public:
  explicit ViewerWorker(QObject* parent = nullptr);
  ~ViewerWorker() override;  // stops, wakes and joins the thread

  // Each of these may be called from any thread.
  /// Attach to `name` (and keep re-attaching to it); empty detaches.
  void set_target(const QString& name);
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
  void try_attach(const QString& name);
  void run_commands(std::deque<Command> commands);
  /// Renders the held frame as `view` asks and hands it over; with nothing to hand over, the
  /// next frame may come at once.
  void render(const ViewRequest& view);
  void drop_client();

  QMutex mu_;
  QWaitCondition wake_;
  QString target_;
  ViewRequest view_;
  bool view_changed_ = false;
  bool shown_ = true;
  bool stop_ = false;
  CommandQueue commands_;

  // worker-thread state
  std::optional<Client> client_;
  std::optional<Frame> current_;  ///< held, so that a paused simulation can be re-rendered
  Connection state_ = Connection::detached;
  QString state_text_;
  std::uint64_t last_seq_ = 0;
  ViewRenderer renderer_;  ///< its sampler's pinned rows and copy stream belong to this thread
};

}  // namespace cuview::gui

Q_DECLARE_METATYPE(cuview::gui::Connection)
Q_DECLARE_METATYPE(cuview::proto::DescribeResult)
Q_DECLARE_METATYPE(cuview::proto::Stats)
