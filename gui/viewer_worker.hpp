// The viewer's worker thread (after Qt's threaded mandelbrot example): it owns the Client, so
// every ZeroMQ socket and every wait lives here and the UI thread never blocks. It copies its
// inputs under a lock, attaches (and re-attaches after a daemon restart by itself), renders the
// newest frame at the window's size and hands the UI a value type over a queued connection.
// A frame is rendered only once the UI has shown the previous one: frames are skipped, never queued.
#pragma once

#include <QImage>
#include <QMutex>
#include <QString>
#include <QThread>
#include <QWaitCondition>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "cuview/client.hpp"
#include "render/colormap.hpp"
#include "render/frame_renderer.hpp"

namespace cuview::gui {

/// What the UI asks the worker to render.
struct ViewRequest {
  int width = 0, height = 0;  ///< pixels
  int field = 0;              ///< a field, or past the fields: point_views(description)[field − fields]
  Colormap colormap = Colormap::viridis;
  bool auto_range = true;  ///< the values' range; centred on 0 with diverging when they have both signs
  float lo = 0, hi = 1;    ///< used when !auto_range
  double zoom = 1, center_x = -1, center_y = -1;  ///< center < 0: the field's centre
  bool arrows = false;                            ///< vector fields: arrows over the magnitude
};

/// A particle set drawn as points, coloured by one of its attributes (its magnitude for vectors).
struct PointView {
  std::size_t set = 0;
  int colour = -1;  ///< index into the set's attributes; −1: one colour
  QString label;    ///< "SET (points by ATTR)", or "SET (points)" when nothing can colour it
};
/// The point views a description offers, after its fields in the viewer's list: one per float32
/// attribute other than position, velocity first.
std::vector<PointView> point_views(const proto::DescribeResult& d);
/// The index in `labels` that `name` picks: the label itself, or "SET (points)" for SET's first view.
int find_view(const QStringList& labels, const QString& name);

/// One rendered frame, handed to the UI thread by value.
struct RenderedFrame {
  QImage image;
  std::shared_ptr<const std::vector<float>> values;  ///< per pixel, NaN outside the field
  FrameInfo info;
  float lo = 0, hi = 1;            ///< the range the colours were mapped from
  float data_lo = 0, data_hi = 0;  ///< the smallest and largest value drawn (equal: one value, or none)
  int field = 0;
  Colormap colormap = Colormap::viridis;
  double center_x = 0, center_y = 0, pixels_per_cell = 1;
  int field_w = 0, field_h = 0;
  std::uint64_t skipped = 0;  ///< frames published since the previous one that this viewer skipped
};

enum class Connection { detached, connecting, connected, waiting, failed };

struct DaemonEntry {
  QString name, summary;
};

class ViewerWorker : public QThread {
  Q_OBJECT
 public:
  explicit ViewerWorker(QObject* parent = nullptr);
  ~ViewerWorker() override;  // stops, wakes and joins the thread

  /// Attach to `name` (and keep re-attaching to it); empty detaches.
  void set_target(const QString& name);
  void set_view(const ViewRequest& v);
  /// The UI has shown the last frame: the worker may render the next one.
  void frame_shown();
  /// Runs `command` with the client on the worker thread; a refusal comes back as error().
  void post(const QString& what, std::function<void(Client&)> command);

 Q_SIGNALS:
  void frame_ready(const cuview::gui::RenderedFrame& frame);
  void connection_changed(cuview::gui::Connection state, const QString& text);
  void described(const cuview::proto::DescribeResult& description);
  void stats_updated(const cuview::proto::Stats& stats);
  void daemons_listed(const QList<cuview::gui::DaemonEntry>& daemons);
  void error(const QString& message);

 protected:
  void run() override;

 private:
  void set_state(Connection s, const QString& text);
  void try_attach(const QString& name);
  void render(const Frame& frame, const ViewRequest& view);
  /// A particle set as points: positions (x, y) mapped onto the grid's view (the set's bounds, or
  /// fitted to the bodies of the first frame), coloured by the view's attribute.
  /// White arrows over a vector field's picture, from the per-pixel vectors the renderer wrote.
  static void draw_arrows(QImage& image, const std::vector<float>& vectors, const ViewTransform& t);
  void render_particles(const Frame& frame, const ViewRequest& view, int field, const PointView& pv,
                        const ViewTransform& t, const std::uint32_t* lut);
  /// The common end of both paths: the auto range from this frame's values (recolouring it when
  /// the range came from another field), arrows when `vectors` holds them, and the frame to the UI.
  void finish_frame(const Frame& frame, const ViewRequest& view, int field, QImage image,
                    std::shared_ptr<std::vector<float>> values, ViewTransform t, const std::uint32_t* lut,
                    const std::vector<float>& vectors);
  void drop_client();
  void list_daemons();

  QMutex mu_;
  QWaitCondition wake_;
  QString target_;
  ViewRequest view_;
  bool view_changed_ = false;
  bool shown_ = true;
  bool stop_ = false;
  std::deque<std::pair<QString, std::function<void(Client&)>>> commands_;

  // worker-thread state
  std::optional<Client> client_;
  std::optional<Frame> current_;  ///< held, so that a paused simulation can be re-rendered
  Connection state_ = Connection::detached;
  QString state_text_;
  std::uint64_t last_seq_ = 0;
  bool auto_lo_hi_valid_ = false;
  int auto_field_ = -1;       ///< the field the auto range was taken from
  double particle_half_ = 0;  ///< half-width of the space the view shows; 0: fit at the next frame
  std::string unshowable_;    ///< the field last refused as undrawable (said once)
  float auto_lo_ = 0, auto_hi_ = 1;
  FrameRenderer renderer_;  ///< owned by the worker thread: its pinned rows and copy stream
};

}  // namespace cuview::gui

Q_DECLARE_METATYPE(cuview::gui::RenderedFrame)
Q_DECLARE_METATYPE(cuview::gui::Connection)
Q_DECLARE_METATYPE(cuview::proto::DescribeResult)
Q_DECLARE_METATYPE(cuview::proto::Stats)
Q_DECLARE_METATYPE(cuview::gui::DaemonEntry)
