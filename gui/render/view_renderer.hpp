// The render step: a frame and the UI's request in, a finished picture out. A field is sampled by
// the client library (cuview::ViewSampler: host wait and copy-engine rows on CUDA, in place on the
// host), a particle set is drawn as points; then the values are coloured, and arrows drawn over a
// vector field. A remote view arrives already sampled (by the gateway): it enters at the colouring.
// No Qt widget and no lock: it runs on the worker's thread.
#pragma once

#include <QString>
#include <optional>
#include <string>
#include <utility>

#include "cuview/assembly.hpp"
#include "cuview/client.hpp"
#include "cuview/view_sampler.hpp"
#include "render/rendered_frame.hpp"

namespace cuview::gui {

/// What the render step made of a frame.
struct RenderResult {
  std::optional<RenderedFrame> frame;  ///< empty: nothing to show for this request
  QString refusal;                     ///< why not, the first time it is so for a field
};

/// The picture `view` asks for of `d`'s grid (the whole run's): the 2-D grid, the plane of a volume
/// or its three planes through one cell side by side, indices clamped to the axes.
[[nodiscard]] PictureLayout layout_of(const proto::DescribeResult& d, const ViewRequest& view);
/// The picture's grid, columns × rows (layout_of's size).
[[nodiscard]] std::pair<int, int> picture_grid(const proto::DescribeResult& d, const ViewRequest& view);
/// The plane `view` asks for of `d`'s volume, its index clamped to the axis; empty for a 2-D grid.
[[nodiscard]] std::optional<Slice> slice_of(const proto::DescribeResult& d, const ViewRequest& view);

/// Keeps what carries from one frame to the next: the automatic range, the space a particle set
/// is fitted into, the sampler's pinned rows. One thread at a time.
class ViewRenderer {
 public:
  /// `frame` of the session `description` describes, as `view` asks. Throws Error(cuda) naming a
  /// failing copy.
  RenderResult render(const Frame& frame, const proto::DescribeResult& description, const ViewRequest& view);
  /// The frames of one step of every part of a run of parts (`parts`: each part's description;
  /// `description`: the whole run's, with the global grid's size), as one picture: each part's
  /// block sampled from the whole grid's sampling, so the parts meet without a seam.
  RenderResult render(const FrameGroup& frames, const std::vector<const proto::DescribeResult*>& parts,
                      const proto::DescribeResult& description, const ViewRequest& view);
  /// A view a gateway sampled (RemoteView), coloured as `view` asks; its values are moved into the
  /// result. Particle views are refused: a gateway sends fields only.
  RenderResult render(RemoteView&& remote, const proto::DescribeResult& description, const ViewRequest& view);
  /// A new daemon session: the range and the particles' fit are learnt again.
  void forget_session();

 private:
  /// The refusal to draw `what`, said once: empty when it was the last refusal too.
  RenderResult refuse(const std::string& what, const QString& why);
  RenderResult refuse_undrawable(const proto::FieldDesc& field);
  /// The colours' range for values [data_lo, data_hi] of `field` (none drawn: `drawn` false), and
  /// the automatic range learnt from them for the next frame.
  /// Colours `sampled` (its region: the picture's size and place) into the finished frame.
  /// `slice`: the plane of a volume shown, whose in-plane components the arrows draw.
  RenderedFrame colour(SampledView&& sampled, int field, const ViewRequest& view,
                       const std::optional<Slice>& slice = std::nullopt);
  std::pair<float, float> range_for(const ViewRequest& view, int field, bool drawn, float data_lo, float data_hi);
  /// One frame of each part (a whole publisher: one part, its block the whole grid), field `field`,
  /// sampled as one picture of the whole grid (layout_of): each part's share of each panel.
  struct PartFrame {
    const Frame* frame;
    const proto::FieldDesc* field;  ///< the part's own
    Block block;                    ///< the part's block of the whole grid
  };
  RenderResult draw_field(const std::vector<PartFrame>& parts, const proto::DescribeResult& d, int field,
                          const ViewRequest& view, const FrameInfo& info);

  ViewSampler sampler_;
  bool auto_valid_ = false;
  int auto_field_ = -1;  ///< the field the automatic range was taken from
  float auto_lo_ = 0, auto_hi_ = 1;
  double particle_half_ = 0;  ///< half-width of the space the view shows; 0: fit at the next frame
  std::string unshowable_;    ///< the field last refused as undrawable (said once)
};

}  // namespace cuview::gui
