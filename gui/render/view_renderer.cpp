#include "render/view_renderer.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "cuview/assembly.hpp"
#include "cuview/schema.hpp"
#include "render/arrows.hpp"
#include "render/particles.hpp"
#include "render/point_views.hpp"
#include "render/render.hpp"

namespace cuview::gui {

namespace {
/// The automatic range for values in [lo, hi]: that, or −m..+m when a diverging map shows values
/// of both signs, so that its middle colour is 0.
std::pair<float, float> auto_range(float lo, float hi, Colormap map) {
  if (map != Colormap::diverging || !(lo < 0 && hi > 0)) return {lo, hi};
  const float m = std::max(-lo, hi);
  return {-m, m};
}

const proto::FieldDesc* position_of(const proto::ParticleSetDesc& set) {
  for (const auto& a : set.attributes)
    if (parse_dtype(a.dtype) && a.name == "position" && a.components >= 2) return &a;
  return nullptr;
}
}  // namespace

void ViewRenderer::forget_session() {
  auto_valid_ = false;
  auto_field_ = -1;
  particle_half_ = 0;
}

RenderResult ViewRenderer::refuse(const std::string& what, const QString& why) {
  RenderResult out;
  if (unshowable_ != what) out.refusal = why;
  unshowable_ = what;
  return out;
}

std::pair<float, float> ViewRenderer::range_for(const ViewRequest& view, int field, bool drawn, float data_lo,
                                                float data_hi) {
  // Auto range follows the visible values, applied from the next frame on (no second look at the
  // values) — except when the range came from another field: then this frame has its own.
  std::pair<float, float> range{view.lo, view.hi};
  if (view.auto_range) range = auto_valid_ ? auto_range(auto_lo_, auto_hi_, view.colormap) : std::pair(0.0f, 1.0f);
  if (!drawn) return range;
  if (data_hi - data_lo < 1e-6f) data_hi = data_lo + 1e-6f;
  if (view.auto_range && auto_field_ != field) range = auto_range(data_lo, data_hi, view.colormap);
  auto_lo_ = data_lo, auto_hi_ = data_hi, auto_valid_ = true, auto_field_ = field;
  return range;
}

namespace {
/// The render path reads fields of any dtype (values converted to float) of 1 to 4 components: a
/// scalar, or a vector (an RGBA colour too) as its magnitude.
bool drawable(const proto::FieldDesc& fd) {
  return parse_dtype(fd.dtype).has_value() && fd.components >= 1 && fd.components <= 4;
}
}  // namespace

PictureLayout layout_of(const proto::DescribeResult& d, const ViewRequest& view) {
  const auto dims = d.dims;
  if (dims.size() != 3) return PictureLayout::of_grid(d.extent().width(), d.extent().height());
  if (!view.three_planes) return PictureLayout::of_plane(dims, *slice_of(d, view));
  auto at = view.through;  // {x, y, z}
  for (std::size_t k = 0; k < 3; ++k) at[k] = std::min(at[k], dims[2 - k] - 1);
  return PictureLayout::of_three_planes(dims, at);
}

std::pair<int, int> picture_grid(const proto::DescribeResult& d, const ViewRequest& view) {
  const auto layout = layout_of(d, view);
  return {layout.w, layout.h};
}

namespace {
/// The grid of `d` fitted in the view, centred where the view asks (the grid's centre by default).
ViewTransform fitted(const proto::DescribeResult& d, const ViewRequest& view) {
  const auto [w, h] = picture_grid(d, view);
  const double cx = view.center_x < 0 ? w / 2.0 : view.center_x;
  const double cy = view.center_y < 0 ? h / 2.0 : view.center_y;
  return ViewTransform::fit(w, h, view.width, view.height, view.zoom, cx, cy);
}

}  // namespace

std::optional<Slice> slice_of(const proto::DescribeResult& d, const ViewRequest& view) {
  const auto dims = d.dims;
  if (dims.size() != 3) return std::nullopt;
  Slice s = view.slice;
  s.index = std::min(s.index, dims[static_cast<std::size_t>(s.axis)] - 1);
  return s;
}

RenderResult ViewRenderer::refuse_undrawable(const proto::FieldDesc& fd) {
  // A plugin's other fields are described and verified, not drawn (yet): say so once rather
  // than draw garbage.
  return refuse(fd.name, QString("field '%1' (%2 × %3) cannot be drawn yet: the viewer draws fields of 1 to 4 "
                                 "components of %4 values; pick another field")
                             .arg(QString::fromStdString(fd.name), QString::fromStdString(fd.dtype))
                             .arg(fd.components)
                             .arg(QString::fromStdString(dtype_names())));
}

RenderResult ViewRenderer::render(const Frame& frame, const proto::DescribeResult& d, const ViewRequest& view) {
  if (view.width <= 0 || view.height <= 0 || d.fields.empty()) return {};
  const auto points = point_views(d);
  const int field = std::clamp(view.field, 0, static_cast<int>(d.fields.size() + points.size()) - 1);
  const bool is_particles = static_cast<std::size_t>(field) >= d.fields.size();
  const auto& fd = d.fields[is_particles ? 0 : static_cast<std::size_t>(field)];
  if (!is_particles && !drawable(fd)) return refuse_undrawable(fd);
  unshowable_.clear();
  if (!is_particles) {
    return draw_field({{&frame, &fd, own_block(d)}}, d, field, view, frame.info());  // the frame is the picture
  }
  const auto& pv = points[static_cast<std::size_t>(field) - d.fields.size()];
  const auto& set = d.particles.at(pv.set);
  const auto* position = position_of(set);
  if (position == nullptr)
    return refuse(set.name,
                  QString("particle set '%1' has no 'position' of 2 or more components to draw")
                      .arg(QString::fromStdString(set.name)));
  const auto* colour_by = pv.colour >= 0 ? &set.attributes.at(static_cast<std::size_t>(pv.colour)) : nullptr;
  SampledView sampled;
  sampled.region = fitted(d, view);
  sampled.values = sample_particles(frame, set, *position, colour_by, sampled.region, particle_half_);
  RenderedFrame out = colour(std::move(sampled), field, view);
  out.info = frame.info();
  return {std::move(out), {}};
}

RenderResult ViewRenderer::draw_field(const std::vector<PartFrame>& parts, const proto::DescribeResult& d, int field,
                                      const ViewRequest& view, const FrameInfo& info) {
  const auto& fd = d.fields.at(static_cast<std::size_t>(field));
  auto layout = layout_of(d, view);
  auto t = fitted(d, view);
  t.components = static_cast<int>(fd.components);
  // A plane brings every component of its cells too: the arrows draw the two that lie in it
  // (colour()). Three planes side by side have none.
  const bool arrows = view.arrows && fd.components >= 2 && layout.panels.size() <= 1;
  // A float32 field's values are what is drawn; any other's are read in double too, for the readout.
  const DType dtype = parse_dtype(fd.dtype).value_or(DType::float32);
  SampledView sampled;
  ViewSampler::begin(sampled, t, t.components, arrows ? VectorComponents::include : VectorComponents::omit,
                     dtype == DType::float32 ? ExactValues::omit : ExactValues::include);
  // Each part fills its share of each panel (a z-plane lies in one slab; a y- or x-plane crosses
  // them all); the whole grid's sampling is shared, so parts and panels meet without a seam.
  for (const auto& p : parts)
    for (const auto& b : picture_blocks(p.block, layout))
      sampler_.sample_block(*p.frame, block_field(*p.field, b), t, b.rect, sampled);
  const auto slice = slice_of(d, view);
  RenderedFrame out = colour(std::move(sampled), field, view, slice);
  out.dtype = dtype;
  out.info = info;
  out.slice = slice;
  out.layout = std::move(layout);
  return {std::move(out), {}};
}

RenderResult ViewRenderer::render(const FrameGroup& frames, const std::vector<const proto::DescribeResult*>& parts,
                                  const proto::DescribeResult& d, const ViewRequest& view) {
  if (view.width <= 0 || view.height <= 0 || d.fields.empty()) return {};
  if (view.field < 0 || static_cast<std::size_t>(view.field) >= d.fields.size())
    return refuse("particles", "a run of parts shows fields only: pick a field");
  const auto field = static_cast<std::size_t>(view.field);
  const auto& fd = d.fields[field];
  if (!drawable(fd)) return refuse_undrawable(fd);
  unshowable_.clear();
  std::vector<PartFrame> blocks;
  for (std::size_t k = 0; k < frames.size() && k < parts.size(); ++k)
    blocks.push_back({&frames.part(k), &parts[k]->fields.at(field), frames.block(k)});
  return draw_field(blocks, d, static_cast<int>(field), view, frames.part(0).info());
}

RenderResult ViewRenderer::render(RemoteView&& remote, const proto::DescribeResult& d, const ViewRequest& view) {
  if (view.field < 0 || static_cast<std::size_t>(view.field) >= d.fields.size())
    return refuse("particles", "particle views are not available remotely: a gateway sends fields only");
  const auto& h = remote.header;
  // The view may still be of the field watched before: it is coloured as that field's.
  const auto named = std::find_if(d.fields.begin(), d.fields.end(), [&](const auto& f) { return f.name == h.field; });
  if (named == d.fields.end()) return {};
  unshowable_.clear();
  RenderedFrame out = colour(std::move(remote.view), static_cast<int>(named - d.fields.begin()), view);
  out.dtype = parse_dtype(named->dtype).value_or(DType::float32);
  out.slice = slice_of(d, view);  // the plane watched (ViewerWorker::render_remote)
  out.layout = layout_of(d, view);
  out.info.seq = h.seq, out.info.step = h.step, out.info.sim_time = h.sim_time, out.info.stamp_ns = h.stamp_ns;
  out.link = RemoteLink{QString::fromStdString(h.encoding), h.error_bound, h.link_bytes_per_s};
  return {std::move(out), {}};
}

RenderedFrame ViewRenderer::colour(SampledView&& sampled, int field, const ViewRequest& view,
                                   const std::optional<Slice>& slice) {
  const ViewRegion& r = sampled.region;
  float lo = INFINITY, hi = -INFINITY;
  for (float v : sampled.values) {
    if (std::isnan(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const bool drawn = lo <= hi;
  const auto [range_lo, range_hi] = range_for(view, field, drawn, lo, hi);

  RenderedFrame out;
  out.image = QImage(r.view_w, r.view_h, QImage::Format_ARGB32);
  const auto lut = make_lut(view.colormap);
  colour_values(sampled.values.data(), std::min(sampled.values.size(), static_cast<std::size_t>(r.view_w) * r.view_h),
                lut.data(), range_lo, range_hi, reinterpret_cast<std::uint32_t*>(out.image.bits()));
  // The picture's columns and rows: x and y of a grid or a z-plane; x and z of a y-plane; y and z
  // of an x-plane (the components of a 3-vector in that order).
  const int across = slice && slice->axis == SliceAxis::x ? 1 : 0;
  const int down = slice && slice->axis != SliceAxis::z ? 2 : 1;
  draw_arrows(out.image, sampled, across, down);
  out.values = std::make_shared<const std::vector<float>>(std::move(sampled.values));
  if (!sampled.exact.empty()) out.exact = std::make_shared<const std::vector<double>>(std::move(sampled.exact));
  out.components = sampled.components;
  out.lo = range_lo, out.hi = range_hi;
  out.data_lo = drawn ? lo : 0.0f, out.data_hi = drawn ? hi : 0.0f;
  out.field = field;
  out.colormap = view.colormap;
  out.center_x = r.center_x, out.center_y = r.center_y, out.pixels_per_cell = r.pixels_per_cell;
  out.field_w = r.field_w, out.field_h = r.field_h;
  return out;
}

}  // namespace cuview::gui
