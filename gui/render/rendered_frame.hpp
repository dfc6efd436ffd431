// What the UI asks the render step for (ViewRequest) and what it gets back (RenderedFrame): value
// types, copied under the worker's lock and handed over a queued connection.
#pragma once

#include <array>
#include <QImage>
#include <QMetaType>
#include <cstdint>
#include <QString>
#include <memory>
#include <optional>
#include <vector>

#include "cuview/client.hpp"
#include "cuview/schema.hpp"
#include "render/colormap.hpp"
#include "render/volume_render.hpp"

namespace cuview::gui {

/// A volume seen whole (issue 40) rather than a plane of it: how, and from where.
struct VolumeRequest {
  VolumeMode mode = VolumeMode::mip;
  VolumeCamera camera;
  std::array<float, 256> opacity{};  ///< emission–absorption: per cell of path, over [lo, hi] (the editor's curve)
  /// Emission–absorption from the brick's own values instead (opacity_by_rarity): the values most
  /// cells hold clear, the rare ones opaque, over the range most values lie in (robust_range).
  bool auto_opacity = false;
  float level = 0.5f;                ///< the isosurface's
  int max_brick = 128;               ///< the brick's longest axis, cells: a volume larger is taken every k-th cell
  bool show_plane = false;           ///< the plane the Display dock names, outlined inside the volume
  /// The mouse is moving the camera: the picture may be drawn at a lower resolution and scaled up
  /// when a full one takes longer than a frame at 30 Hz (as ParaView's interactive render does).
  bool interacting = false;
};

/// What the UI asks the worker to render.
struct ViewRequest {
  int width = 0, height = 0;  ///< pixels
  int field = 0;              ///< a field, or past the fields: point_views(description)[field − fields]
  Colormap colormap = Colormap::viridis;
  bool auto_range = true;  ///< the values' range; centred on 0 with diverging when they have both signs
  float lo = 0, hi = 1;    ///< used when !auto_range
  double zoom = 1, center_x = -1, center_y = -1;  ///< center < 0: the field's centre
  bool arrows = false;                            ///< vector fields: arrows over the magnitude
  Slice slice{};  ///< a grid of three axes: the plane shown (its index clamped to the axis)
  /// A grid of three axes: three orthogonal planes side by side through cell `through` ({x, y,
  /// z}) rather than `slice` alone (PictureLayout::of_three_planes); `slice` is the one the
  /// slider and the keyboard move.
  bool three_planes = false;
  std::array<std::uint32_t, 3> through{};
  std::optional<VolumeRequest> volume;  ///< a grid of three axes seen whole; empty: planes of it
};

/// How a volume view was made: what the picture is of, and what it cost the viewer.
struct VolumeInfo {
  VolumeMode mode = VolumeMode::mip;
  VolumeCamera camera;
  float level = 0.5f;
  int brick_w = 0, brick_h = 0, brick_d = 0;  ///< the brick rendered
  int stride = 1;                             ///< its cell (i, j, k) is the grid's (i, j, k)·stride
  std::array<std::uint32_t, 3> grid{};        ///< the whole grid, {depth, height, width}
  double copy_ms = 0, render_ms = 0;          ///< taking the brick (0: the one held), casting the rays
  std::size_t bytes = 0;                      ///< the copy engine brought for this brick (0: host memory or held)
  int scale = 1;                              ///< drawn at 1/scale of the picture's resolution, scaled up
  QString source;                             ///< remote: how the brick came ("u8 zstd ± 0.004"); empty locally
  /// Cast by the run from every cell of its frame (`render`), in render_ms where it ran; no brick.
  bool by_run = false;
  /// The curve drawn with when VolumeRequest::auto_opacity (what the editor shows); empty otherwise.
  std::optional<std::array<float, 256>> auto_opacity;
};

/// How a remote view came: the gateway's encoding, how far a value may be from the true one, and
/// the gateway's estimate of the link.
struct RemoteLink {
  QString encoding;  ///< u8, u16 or f32
  double error_bound = 0;
  double link_bytes_per_s = 0;  ///< 0: not measured yet
};

/// One rendered frame, handed to the UI thread by value.
struct RenderedFrame {
  QImage image;
  std::shared_ptr<const std::vector<float>> values;  ///< per pixel, NaN outside the field
  /// Per pixel as `values`, in double, for a field whose values a float does not hold (float64,
  /// int64): what the readout says. Empty otherwise.
  std::shared_ptr<const std::vector<double>> exact;
  DType dtype = DType::float32;  ///< the field's values', and their components per cell
  int components = 1;
  FrameInfo info;
  float lo = 0, hi = 1;            ///< the range the colours were mapped from
  float data_lo = 0, data_hi = 0;  ///< the smallest and largest value drawn (equal: one value, or none)
  int field = 0;
  Colormap colormap = Colormap::viridis;
  double center_x = 0, center_y = 0, pixels_per_cell = 1;
  int field_w = 0, field_h = 0;
  std::uint64_t skipped = 0;  ///< frames published since the previous one that this viewer skipped
  std::optional<RemoteLink> link;  ///< a remote view's; empty for a frame read on this host
  std::optional<Slice> slice;      ///< the plane of a volume shown; empty for a 2-D grid
  PictureLayout layout;            ///< where the picture's cells come from: the grid, a plane, three planes
  std::optional<VolumeInfo> volume;  ///< a volume seen whole: values are per pixel the mode's (volume_render.hpp)
};

}  // namespace cuview::gui

Q_DECLARE_METATYPE(cuview::gui::RenderedFrame)
