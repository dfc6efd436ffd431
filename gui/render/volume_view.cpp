#include "render/volume_view.hpp"

#include <QPainter>
#include <QPen>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "cuview/assembly.hpp"

namespace cuview::gui {
namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::array<std::uint32_t, 3> grid_of(const proto::DescribeResult& d) {
  const auto g = d.dims;
  return {g.at(0), g.at(1), g.at(2)};
}
}  // namespace

void VolumeViewRenderer::forget() {
  drawn_.reset();
  brick_.reset();
  taken_.reset();
  spare_.reset();
  field_ = -1;
  full_ms_ = assumed_full_ms_.value_or(0);
}

bool VolumeViewRenderer::holds(int field, const ViewRequest& view) const {
  return brick_ && field_ == field && view.volume && max_brick_ == view.volume->max_brick;
}

RenderResult VolumeViewRenderer::render(const std::vector<Part>& parts, const proto::DescribeResult& d, int field,
                                        const ViewRequest& view, bool fresh, bool draw_it) {
  if (!view.volume || parts.empty() || view.width <= 0 || view.height <= 0) return {};
  if (fresh || !holds(field, view)) {
    const auto t0 = Clock::now();
    // The brick before the one held is filled again (its memory already the process's).
    auto brick = std::exchange(spare_, nullptr);
    if (!brick || brick.use_count() != 1) brick = std::make_shared<HostBrick>();
    const auto grid = grid_of(d);
    BrickSampler::begin(*brick, grid, BrickSampler::stride_for(grid, view.volume->max_brick));
    std::size_t bytes = 0;
    for (const auto& p : parts) {
      sampler_.sample(*p.frame, *p.field, p.block, *brick);
      bytes += sampler_.bytes_copied();
    }
    BrickSampler::finish(*brick);
    spare_ = std::exchange(taken_, brick);
    // A brick larger than 256³ is not kept twice (its take is dwarfed by its rays anyway).
    if (spare_ && spare_->values.size() > std::size_t{256} * 256 * 256) spare_.reset();
    brick_ = std::move(brick);
    field_ = field, max_brick_ = view.volume->max_brick;
    info_ = parts.front().frame->info();
    // A frame of every k-th cell (Run::read_every): the run wrote only the brick's cells.
    source_ = info_.every > 1 ? QString("the run wrote only these cells") : QString();
    copy_ms_ = take_ms_ = ms_since(t0), bytes_ = bytes;
    if (!draw_it) return {};
    return draw(d, view, true);
  }
  copy_ms_ = 0, bytes_ = 0;  // drawn again from the brick held
  return draw(d, view, false);
}

RenderResult VolumeViewRenderer::render(std::shared_ptr<const HostBrick> brick, const proto::DescribeResult& d,
                                        int field, const ViewRequest& view, const FrameInfo& info,
                                        const QString& source) {
  if (!view.volume || !brick) return {};
  brick_ = std::move(brick);
  field_ = field, max_brick_ = view.volume->max_brick;
  info_ = info;
  source_ = source;
  copy_ms_ = 0, bytes_ = 0;
  return draw(d, view, true);
}

RenderResult VolumeViewRenderer::draw(const proto::DescribeResult& d, const ViewRequest& view, bool new_brick) {
  const auto& req = *view.volume;
  const HostBrick& b = *brick_;
  // The colours' range: the brick's values, or the range asked for; diverging centred on 0.
  float lo = view.lo, hi = view.hi;
  if (view.auto_range) {
    lo = b.lo, hi = b.hi;
    if (req.auto_opacity) {  // the range most values lie in: a few extreme cells do not squeeze the colours
      const auto r = robust_range(b.values.data(), b.values.size(), lo, hi);
      lo = r[0], hi = r[1];
    }
    if (view.colormap == Colormap::diverging && lo < 0 && hi > 0) hi = std::max(-lo, hi), lo = -hi;
  }
  if (!(hi > lo)) hi = lo + 1e-6f;
  VolumeStyle style;
  style.lut = make_lut(view.colormap);
  style.lo = lo, style.hi = hi;
  style.level = req.level;
  // The editor's curve is in [0, 1]: 1 makes a path of a quarter of the brick's longest axis nearly opaque.
  const float top = full_opacity(std::max({b.width, b.height, b.depth}));
  std::optional<std::array<float, 256>> auto_curve;
  if (req.auto_opacity) auto_curve = opacity_by_rarity(b.values.data(), b.values.size(), lo, hi);
  const auto& curve = auto_curve ? *auto_curve : req.opacity;
  for (std::size_t i = 0; i < style.opacity.size(); ++i) style.opacity[i] = std::clamp(curve[i], 0.0f, 1.0f) * top;
  drawn_ = Drawn{lo, hi, curve, auto_curve};
  // While the camera moves, a picture that takes longer than a 30 Hz frame is drawn at a lower
  // resolution (the rays, not the brick) and scaled up; so is a new brick while the run's frames
  // come faster than full pictures can be made; at rest, at full resolution.
  // New data is drawn at half resolution at most: where a quarter would be needed (a small
  // machine), a sharp picture of fewer frames is kinder than a blurred stream.
  const bool for_data = new_brick && streaming() && !req.interacting && interactive_scale(full_ms_) == 2;
  const int scale = req.interacting || for_data ? interactive_scale(full_ms_) : 1;
  coarse_for_data_ = for_data && scale > 1;
  const int w = std::max(1, view.width / scale), h = std::max(1, view.height / scale);
  const auto t0 = Clock::now();
  // Drawn with the grid's aspect ratio: a cell is its spacing (x, y, z), the brick's every-k cells alike.
  const auto grid = whole_grid(d, static_cast<std::size_t>(std::max(view.field, 0)));
  VolumeBrick vb{b.values.data(), b.width, b.height, b.depth};
  if (grid.spacing.size() == 3) vb.cell = {grid.spacing[2], grid.spacing[1], grid.spacing[0]};
  VolumeImage img = render_volume(vb, req.camera, req.mode, style, w, h);
  const double render_ms = ms_since(t0);
  if (scale == 1) full_ms_ = assumed_full_ms_.value_or(render_ms);

  RenderedFrame out;
  QImage small(reinterpret_cast<const uchar*>(img.argb.data()), w, h, QImage::Format_ARGB32);
  out.image = scale == 1 ? small.copy() : small.scaled(view.width, view.height, Qt::IgnoreAspectRatio, Qt::FastTransformation);
  auto values = std::make_shared<std::vector<float>>();
  if (scale == 1) {
    *values = std::move(img.values);
  } else {
    values->resize(static_cast<std::size_t>(view.width) * view.height);
    std::vector<int> column(static_cast<std::size_t>(view.width));
    for (int x = 0; x < view.width; ++x) column[static_cast<std::size_t>(x)] = std::min(x / scale, w - 1);
    for (int y = 0; y < view.height; ++y) {
      const float* src = img.values.data() + static_cast<std::size_t>(std::min(y / scale, h - 1)) * w;
      float* dst = values->data() + static_cast<std::size_t>(y) * view.width;
      for (int x = 0; x < view.width; ++x) dst[x] = src[column[static_cast<std::size_t>(x)]];
    }
  }
  if (req.show_plane) outline_plane(out.image, d, view, vb, b.stride);

  out.values = std::move(values);
  out.info = info_;
  out.lo = lo, out.hi = hi;
  out.data_lo = b.lo, out.data_hi = b.hi;
  out.field = field_;
  out.colormap = view.colormap;
  out.field_w = view.width, out.field_h = view.height;
  out.center_x = view.width / 2.0, out.center_y = view.height / 2.0, out.pixels_per_cell = 1;
  VolumeInfo vi;
  vi.mode = req.mode, vi.camera = req.camera, vi.level = req.level;
  vi.brick_w = b.width, vi.brick_h = b.height, vi.brick_d = b.depth, vi.stride = b.stride, vi.grid = b.grid;
  vi.copy_ms = copy_ms_, vi.render_ms = render_ms, vi.bytes = bytes_, vi.scale = scale, vi.source = source_;
  vi.auto_opacity = auto_curve;
  out.volume = vi;
  out.slice = slice_of(d, view);
  return {std::move(out), {}};
}

void VolumeViewRenderer::outline_plane(QImage& image, const proto::DescribeResult& d, const ViewRequest& view,
                                       const VolumeBrick& g, int stride) {
  const auto s = slice_of(d, view);
  if (!s) return;
  const double at = static_cast<double>(s->index) / stride;
  const double X = g.width - 0.5, Y = g.height - 0.5, Z = g.depth - 0.5;
  std::array<std::array<double, 3>, 4> c{};
  if (s->axis == SliceAxis::z) c = {{{-0.5, -0.5, at}, {X, -0.5, at}, {X, Y, at}, {-0.5, Y, at}}};
  if (s->axis == SliceAxis::y) c = {{{-0.5, at, -0.5}, {X, at, -0.5}, {X, at, Z}, {-0.5, at, Z}}};
  if (s->axis == SliceAxis::x) c = {{{at, -0.5, -0.5}, {at, Y, -0.5}, {at, Y, Z}, {at, -0.5, Z}}};
  QPolygonF poly;
  const auto camera = view.volume ? view.volume->camera : VolumeCamera{};
  for (const auto& p : c) {
    const auto px = volume_pixel(g, camera, image.width(), image.height(), p[0], p[1], p[2]);
    poly << QPointF(px[0], px[1]);
  }
  QPainter painter(&image);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(QPen(QColor(255, 255, 255, 200), 1.5, Qt::DashLine));
  painter.drawPolygon(poly);
}

std::optional<proto::RenderArgs> VolumeViewRenderer::picture_request(const proto::DescribeResult& d,
                                                                     const ViewRequest& view) const {
  if (!view.volume || !drawn_ || !brick_ || view.width <= 0 || view.height <= 0 || view.field < 0 ||
      static_cast<std::size_t>(view.field) >= d.fields.size())
    return std::nullopt;
  const auto& req = *view.volume;
  const auto grid = whole_grid(d, static_cast<std::size_t>(view.field));
  if (grid.dims.size() != 3) return std::nullopt;
  proto::RenderArgs a;
  a.field = d.fields[static_cast<std::size_t>(view.field)].name;
  a.width = static_cast<std::uint32_t>(view.width), a.height = static_cast<std::uint32_t>(view.height);
  a.mode = volume_mode_name(req.mode);
  // The brick's world is the grid's shrunk by its stride (a brick cell is drawn one spacing
  // wide): its pan, in brick cells, is the grid's over the stride.
  const double stride = brick_->stride;
  a.azimuth = req.camera.azimuth_deg, a.elevation = req.camera.elevation_deg, a.zoom = req.camera.zoom;
  a.pan_x = req.camera.pan_x * stride, a.pan_y = req.camera.pan_y * stride;
  a.lo = drawn_->lo, a.hi = drawn_->hi, a.level = req.level;
  // One sample a cell along each ray (ParaView's default sample distance), trilinear: every cell
  // is seen, at half the cost of the brick's two a cell.
  a.step = 1.0;
  const auto lut = make_lut(view.colormap);
  a.lut.assign(lut.begin(), lut.end());
  const float top = full_opacity(static_cast<int>(std::max({grid.dims[0], grid.dims[1], grid.dims[2]})));
  a.opacity.resize(256);
  for (std::size_t i = 0; i < 256; ++i) a.opacity[i] = std::clamp(drawn_->curve[i], 0.0f, 1.0f) * top;
  return a;
}

RenderResult VolumeViewRenderer::show_picture(const proto::RenderResult& p, const proto::RenderArgs& asked,
                                              const proto::DescribeResult& d, const ViewRequest& view) {
  const std::size_t n = std::size_t{p.width} * p.height;
  if (!view.volume || p.pending || n == 0 || p.argb.size() != n * 4 || p.values.size() != n * 4) return {};
  const auto& req = *view.volume;
  const auto w = static_cast<int>(p.width), h = static_cast<int>(p.height);
  RenderedFrame out;
  out.image = QImage(reinterpret_cast<const uchar*>(p.argb.data()), w, h, QImage::Format_ARGB32).copy();
  auto values = std::make_shared<std::vector<float>>(n);
  std::memcpy(values->data(), p.values.data(), n * 4);
  const auto grid = whole_grid(d, static_cast<std::size_t>(std::max(view.field, 0)));
  VolumeBrick geometry{nullptr, static_cast<int>(grid.dims[2]), static_cast<int>(grid.dims[1]),
                       static_cast<int>(grid.dims[0])};
  if (grid.spacing.size() == 3) geometry.cell = {grid.spacing[2], grid.spacing[1], grid.spacing[0]};
  if (req.show_plane && w == view.width && h == view.height) {
    // The outline is drawn with the grid's own camera: the brick's pan in grid cells.
    ViewRequest grid_view = view;
    grid_view.volume->camera.pan_x = asked.pan_x, grid_view.volume->camera.pan_y = asked.pan_y;
    outline_plane(out.image, d, grid_view, geometry, 1);
  }
  out.values = std::move(values);
  out.info = info_;
  out.info.seq = p.seq, out.info.step = p.step, out.info.sim_time = p.sim_time, out.info.stamp_ns = p.stamp_ns;
  out.info.every = p.every;
  out.lo = asked.lo, out.hi = asked.hi;
  out.data_lo = brick_ ? brick_->lo : asked.lo, out.data_hi = brick_ ? brick_->hi : asked.hi;
  out.field = view.field;
  out.colormap = view.colormap;
  out.field_w = w, out.field_h = h;
  out.center_x = w / 2.0, out.center_y = h / 2.0, out.pixels_per_cell = 1;
  VolumeInfo vi;
  vi.mode = req.mode, vi.camera = req.camera, vi.level = req.level;
  vi.brick_w = geometry.width, vi.brick_h = geometry.height, vi.brick_d = geometry.depth, vi.stride = static_cast<int>(p.every);
  vi.grid = {grid.dims[0], grid.dims[1], grid.dims[2]};
  vi.render_ms = p.cast_ms;
  vi.by_run = true;
  vi.auto_opacity = drawn_ ? drawn_->auto_curve : std::nullopt;
  out.volume = vi;
  out.slice = slice_of(d, view);
  return {std::move(out), {}};
}

}  // namespace cuview::gui
