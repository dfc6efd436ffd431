// The volume view's render step (issue 40): a frame (or every part's frame of one step) in, a
// picture of the whole volume out. The brick — the volume every k-th cell, as BrickSampler takes
// it: a host wait, then the copy engine, never a kernel in this process's CUDA context — is kept,
// so that a camera change re-renders at once from the frame held, however slowly frames come. The
// rays are cast on this process's CPU threads (volume_render.hpp): docs/architecture.md says why.
// No Qt widget: it runs on the worker's thread.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "cuview/brick_sampler.hpp"
#include "cuview/client.hpp"
#include "render/rendered_frame.hpp"
#include "render/view_renderer.hpp"

namespace cuview::gui {

class VolumeViewRenderer {
 public:
  /// One part's frame and where its block lies in the whole grid (a whole publisher: own_block).
  struct Part {
    const Frame* frame;
    const proto::FieldDesc* field;
    Block block;
  };
  /// The picture `view` asks for (view.volume set) of field `field` of the whole grid `d`
  /// describes. `fresh`: the parts are a new step, whose brick is taken; otherwise the brick held
  /// is drawn again (a camera or colour change) when it is of this field and size. `draw` false:
  /// only the brick is taken (a picture from elsewhere is shown), and nothing is returned.
  RenderResult render(const std::vector<Part>& parts, const proto::DescribeResult& d, int field,
                      const ViewRequest& view, bool fresh, bool draw = true);
  /// A brick that came from elsewhere (a gateway): held and drawn as the local ones are.
  RenderResult render(std::shared_ptr<const HostBrick> brick, const proto::DescribeResult& d, int field,
                      const ViewRequest& view, const FrameInfo& info, const QString& source);
  /// The view as a `render` request to the publisher (protocol 10): the whole grid, every cell,
  /// in the colours, range and opacity curve of the picture drawn last from the brick, so that
  /// the two pictures agree (the curve's 1 scaled to the grid's longest axis instead of the
  /// brick's, the pan from brick cells to the grid's). nullopt before a picture was drawn.
  [[nodiscard]] std::optional<proto::RenderArgs> picture_request(const proto::DescribeResult& d,
                                                                 const ViewRequest& view) const;
  /// A picture the publisher cast for `asked` (Client::render), shown as the brick's pictures are:
  /// the same readout, colour bar and plane outline, with its own frame and cost.
  RenderResult show_picture(const proto::RenderResult& picture, const proto::RenderArgs& asked,
                            const proto::DescribeResult& d, const ViewRequest& view);
  /// Whether a brick of `field` at the size `view` asks is held (a camera change needs no frame).
  [[nodiscard]] bool holds(int field, const ViewRequest& view) const;
  void forget();
  /// The frames a second the run publishes (its stats). While new bricks come faster than a full
  /// picture and its brick take, each is drawn at half resolution, as a moving camera is
  /// (ParaView's interactive render), so the view keeps up with the run — unless half is not
  /// enough (interactive_scale() > 2): then in full, fewer of them.
  void set_data_rate(double frames_per_second) { data_fps_ = frames_per_second; }
  /// Whether the picture held was drawn coarser for a stream of frames that has since slowed (a
  /// paused run): draw it again, at full resolution.
  [[nodiscard]] bool wants_still() const { return coarse_for_data_ && !streaming(); }
  /// Every picture drawn at full resolution is taken to have cost `ms` instead of its measured
  /// time (nullopt: measured again), so that a test checks the resolution rules whatever the
  /// machine's speed.
  void assume_full_picture_ms(std::optional<double> ms) {
    assumed_full_ms_ = ms;
    if (ms) full_ms_ = *ms;
  }

 private:
  RenderResult draw(const proto::DescribeResult& d, const ViewRequest& view, bool new_brick);
  /// Outlines the plane the Display dock names in `image`, a picture of `geometry` (its cells
  /// `stride` of the grid's apart).
  static void outline_plane(QImage& image, const proto::DescribeResult& d, const ViewRequest& view,
                            const VolumeBrick& geometry, int stride);
  [[nodiscard]] bool streaming() const { return data_fps_ * (full_ms_ + take_ms_) > 1000; }

  BrickSampler sampler_;
  std::shared_ptr<const HostBrick> brick_;
  /// The last brick taken from frames here, and the one before it (filled again by the next take
  /// once nothing else holds it).
  std::shared_ptr<HostBrick> taken_, spare_;
  int field_ = -1, max_brick_ = 0;
  FrameInfo info_;
  QString source_;
  double copy_ms_ = 0;
  std::size_t bytes_ = 0;
  double full_ms_ = 0;  ///< the last picture drawn at full resolution took this long
  /// assume_full_picture_ms()
  std::optional<double> assumed_full_ms_;
  double take_ms_ = 0;  ///< the last new brick took this long to take
  double data_fps_ = 0;  ///< set_data_rate()
  bool coarse_for_data_ = false;  ///< the picture held was drawn coarser because frames streamed
  /// The colours of the picture drawn last: range and curve (0..1), for picture_request().
  struct Drawn {
    float lo = 0, hi = 1;
    std::array<float, 256> curve{};
    std::optional<std::array<float, 256>> auto_curve;
  };
  std::optional<Drawn> drawn_;
};

}  // namespace cuview::gui
