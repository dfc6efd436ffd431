#include "cuview/assembly.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "cuview/error.hpp"

namespace cuview {
using namespace std::chrono_literals;

std::vector<PlaneBlock> picture_blocks(const Block& block, const PictureLayout& layout) {
  const auto& o = block.offset;
  const auto& n = block.dims;
  if (o.size() != n.size() || n.empty() || n.size() > 3)
    throw Error(Errc::bad_value, "a block of " + std::to_string(n.size()) + " axes (offset of " +
                                     std::to_string(o.size()) + ") has no place in a picture: pictures are of grids " +
                                     "of 1 or 2 axes and of planes of volumes");
  const auto i = [](std::uint32_t v) { return static_cast<int>(v); };
  if (n.size() < 3) {  // a line is a picture one cell high
    if (!layout.panels.empty())
      throw Error(Errc::bad_value, "a block of a grid of " + std::to_string(n.size()) +
                                       " axes has no planes: a view of it takes no axis or index");
    return {PlaneBlock{{i(axis_from_fastest(o, 0, 0)), i(axis_from_fastest(o, 1, 0)), i(axis_from_fastest(n, 0)),
                        i(axis_from_fastest(n, 1))},
                       std::nullopt,
                       false}};
  }
  if (layout.panels.empty())
    throw Error(Errc::bad_value, "a block of a volume shows a plane at a time: name the axis and index of one");
  std::vector<PlaneBlock> out;
  for (const auto& p : layout.panels) {
    const auto cut = static_cast<std::size_t>(p.slice.axis);
    if (p.slice.index < o[cut] || p.slice.index - o[cut] >= n[cut]) continue;  // the plane misses the block
    // The plane's rows and columns are the two axes not cut, slowest first (plane_dims).
    const std::size_t row = cut == 0 ? 1 : 0, col = cut == 2 ? 1 : 2;
    const auto [across, down] = p.transposed ? std::pair{row, col} : std::pair{col, row};
    out.push_back(PlaneBlock{{p.x + i(o[across]), p.y + i(o[down]), i(n[across]), i(n[down])},
                             Slice{p.slice.axis, p.slice.index - o[cut]}, p.transposed});
  }
  return out;
}

PictureLayout picture_named(const Axes& whole, const std::optional<std::string>& axis,
                            const std::optional<std::uint32_t>& index,
                            const std::optional<std::vector<std::uint32_t>>& through, const std::string& what) {
  const bool plane = axis.has_value() || index.has_value();
  if (whole.size() != 3) {
    if (plane || through)
      throw Error(Errc::bad_value, what + " is a plane: a view of it takes no axis, index or through");
    return PictureLayout::of_grid(proto::wire_size(whole, 0), Extent{whole}.height());
  }
  if (through) {
    if (plane)
      throw Error(Errc::bad_value, "a view of " + what +
                                       " names a plane (axis, index) and three planes (through): name one or the other");
    if (through->size() != 3)
      throw Error(Errc::bad_value, "'through' of a view of " + what + " has " + std::to_string(through->size()) +
                                       " values; it is a cell: [x, y, z]");
    return PictureLayout::of_three_planes(whole, {(*through)[0], (*through)[1], (*through)[2]});
  }
  if (!axis || !index)
    throw Error(Errc::bad_value, what + " is a volume of " + Extent{whole}.text() +
                                     " cells: a view of it names a plane (axis x, y or z and its index), or three "
                                     "planes through a cell (through [x, y, z])");
  const Slice slice{slice_axis_named(*axis), *index};
  const auto cut = static_cast<std::size_t>(slice.axis);
  if (slice.index >= whole[cut])
    throw Error(Errc::out_of_range, std::string(to_string(slice.axis)) + "-plane " + std::to_string(slice.index) +
                                        " of " + what + " does not exist: " + to_string(slice.axis) +
                                        " runs from 0 to " + std::to_string(whole[cut] - 1));
  return PictureLayout::of_plane(whole, slice);
}

Block own_block(const proto::DescribeResult& d) { return Block{Axes(d.dims.size(), 0), d.dims}; }

proto::GridDesc whole_grid(const proto::DescribeResult& d, std::size_t field) {
  proto::GridDesc g = field < d.fields.size() ? d.grid_of(d.fields[field])
                      : d.fields.empty()      ? d.grid_of(proto::FieldDesc{})
                                              : d.grid_of(d.fields[0]);
  if (!d.part || (!d.grids.empty() && g.name != d.grids[0].name)) return g;
  const auto start = d.part->offset;
  const auto global = d.part->global_dims;
  if (start.size() != g.dims.size() || global.size() != g.dims.size()) return g;
  for (std::size_t k = 0; k < g.dims.size(); ++k) g.origin[k] -= double(start[k]) * g.spacing[k];
  g.dims = global;
  return g;
}

proto::FieldDesc block_field(const proto::FieldDesc& field, const PlaneBlock& share) {
  if (!share.local) return field;
  auto f = plane_of(field, *share.local);
  if (share.transposed && f.shape.size() >= 2 && f.strides.size() >= 2) {
    std::swap(f.shape[0], f.shape[1]);
    std::swap(f.strides[0], f.strides[1]);
  }
  return f;
}

std::vector<Copy2D> block_copies(const Block& block, const Axes& global, std::size_t cell_bytes) {
  const std::size_t rank = global.size();
  if (block.dims.size() != rank || block.offset.size() != rank)
    throw Error(Errc::bad_value, "a block of " + std::to_string(block.dims.size()) + " axes (offset of " +
                                     std::to_string(block.offset.size()) + ") cannot be placed in a grid of " +
                                     std::to_string(rank) + " axes; give the block as many axes as the grid");
  if (!block.inside(global)) {
    Axes end = block.offset;
    for (std::size_t b = 0; b < rank; ++b) end[b] += block.dims[b];
    throw Error(Errc::bad_value, "the block of " + axes_text(block.dims) + " cells at " + axes_text(block.offset) +
                                     " ends at " + axes_text(end) + ", outside the grid of " + axes_text(global) +
                                     " cells (sizes and positions fastest axis first)");
  }
  if (Extent{block.dims}.cells() == 0) return {};
  if (rank == 0) return {Copy2D{0, cell_bytes, 0, cell_bytes, cell_bytes, 1}};
  // Byte strides, slowest axis first, of the grid and of the block.
  std::vector<std::size_t> gs(rank, cell_bytes), bs(rank, cell_bytes);
  for (std::size_t a = rank - 1; a > 0; --a) {
    gs[a - 1] = gs[a] * global[a];
    bs[a - 1] = bs[a] * block.dims[a];
  }
  // A plane is the two fastest axes; the slower ones (a 3-D block's layers) are walked like an odometer.
  Copy2D plane;
  plane.width = std::size_t{block.dims[rank - 1]} * cell_bytes;
  plane.height = rank >= 2 ? block.dims[rank - 2] : 1;
  plane.dst_pitch = rank >= 2 ? gs[rank - 2] : plane.width;
  plane.src_pitch = rank >= 2 ? bs[rank - 2] : plane.width;
  const std::size_t outer = rank > 2 ? rank - 2 : 0;
  std::vector<Copy2D> copies;
  Axes at(outer, 0);
  for (std::size_t p = 0, planes = Extent{Axes(block.dims.begin(), block.dims.begin() + outer)}.cells(); p < planes;
       ++p) {
    Copy2D c = plane;
    c.src = p * (rank > 2 ? bs[rank - 3] : 0);
    for (std::size_t a = 0; a < rank; ++a) c.dst += (std::size_t{block.offset[a]} + (a < outer ? at[a] : 0)) * gs[a];
    copies.push_back(c);
    for (std::size_t a = outer; a-- > 0;) {
      if (++at[a] < block.dims[a]) break;
      at[a] = 0;
    }
  }
  return copies;
}

void place_block(const Block& block, std::span<const std::byte> src, const Axes& global, std::span<std::byte> dst,
                 std::size_t cell_bytes) {
  const auto copies = block_copies(block, global, cell_bytes);
  const std::size_t block_bytes = Extent{block.dims}.cells() * cell_bytes, global_bytes = Extent{global}.cells() * cell_bytes;
  if (src.size() != block_bytes || dst.size() != global_bytes)
    throw Error(Errc::bad_value, "placing a block of " + axes_text(block.dims) + " cells of " +
                                     std::to_string(cell_bytes) + " bytes needs " + std::to_string(block_bytes) +
                                     " bytes in and " + std::to_string(global_bytes) + " out; got " +
                                     std::to_string(src.size()) + " and " + std::to_string(dst.size()));
  for (const Copy2D& c : copies)
    for (std::size_t row = 0; row < c.height; ++row)
      std::memcpy(dst.data() + c.dst + row * c.dst_pitch, src.data() + c.src + row * c.src_pitch, c.width);
}

StepChoice choose_common_step(const std::vector<std::vector<std::uint64_t>>& offered) {
  StepChoice out;
  std::vector<std::uint64_t> common;
  bool lagging = false;  // a part offers nothing new: it is the one to wait for
  std::uint64_t slowest = 0;
  for (std::size_t k = 0; k < offered.size(); ++k) {
    std::vector<std::uint64_t> steps = offered[k];
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
    if (steps.empty()) {
      if (!lagging) out.laggard = k;
      lagging = true;
    } else if (!lagging && (k == 0 || steps.back() < slowest)) {
      slowest = steps.back();
      out.laggard = k;
    }
    if (k == 0) {
      common = std::move(steps);
    } else {
      std::vector<std::uint64_t> both;
      std::set_intersection(common.begin(), common.end(), steps.begin(), steps.end(), std::back_inserter(both));
      common = std::move(both);
    }
  }
  if (!common.empty()) out.step = common.back();
  return out;
}

// ---------------------------------------------------------------- ViewMatcher

ViewMatcher::ViewMatcher(std::size_t parts, Clock::time_point now)
    : views_(parts), asked_(parts, now), asked_step_(parts) {}

void ViewMatcher::arrived(std::size_t k, std::uint64_t step, std::uint64_t latest_step) {
  views_.at(k) = Held{step, latest_step};
}

std::size_t ViewMatcher::waiting_on() const noexcept {
  std::size_t k = 0;
  while (k + 1 < views_.size() && views_[k]) ++k;
  return k;
}

void ViewMatcher::ask(std::size_t k, std::optional<std::uint64_t> from_step, Clock::time_point now,
                      std::vector<Ask>& asks) {
  views_[k].reset();
  asked_[k] = now;
  asked_step_[k] = from_step;
  asks.push_back({k, from_step});
}

ViewMatcher::Decision ViewMatcher::decide(Clock::time_point now) {
  Decision d;
  const std::size_t n = views_.size();
  if (n > 0 && std::all_of(views_.begin(), views_.end(), [](const auto& v) { return v.has_value(); })) {
    std::uint64_t lo = views_[0]->step, hi = lo, latest = 0;
    for (const auto& v : views_) lo = std::min(lo, v->step), hi = std::max(hi, v->step), latest = std::max(latest, v->latest);
    if (lo == hi && (!shown_ || hi != *shown_)) {
      // One step from every part: the picture; then every part is asked for the newest step.
      d.picture = true;
      d.step = hi;
      shown_ = hi;
      for (std::size_t k = 0; k < n; ++k) ask(k, std::max(latest, hi + 1), now, d.asks);
      return d;
    }
    // Parts at different steps (or all at the step already shown): the ones behind catch up.
    const std::uint64_t target = lo == hi ? hi + 1 : hi;
    for (std::size_t k = 0; k < n; ++k)
      if (views_[k]->step < target) ask(k, target, now, d.asks);
  }
  // A step that never comes (the run was reset to an earlier step; a part skipped it and then
  // paused): after a second, ask for the newest frame instead; a view lost on the way (dropped by a
  // full queue): ask again every few seconds (the gateway caps a client's credits at 8).
  for (std::size_t k = 0; k < n; ++k)
    if (!views_[k] && now - asked_[k] > (asked_step_[k] ? 1s : 3s)) ask(k, std::nullopt, now, d.asks);
  return d;
}

// ---------------------------------------------------------------- views

bool shows_watch(const remote::ViewHeader& h, const ViewWatch& w) {
  if (w.brick || h.brick) return h.field == w.field && w.brick.has_value() && h.brick.has_value();  // its size is the gateway's
  const auto& r = w.region;
  // Compared in place, without optional temporaries (GCC 12 warns of those falsely).
  const bool same_slice = w.slice ? h.axis == to_string(w.slice->axis) && h.index == w.slice->index
                                  : !h.axis.has_value() && !h.index.has_value();
  const bool same_through = w.through ? h.through.has_value() && std::equal(h.through->begin(), h.through->end(),
                                                                            w.through->begin(), w.through->end())
                                      : !h.through.has_value();
  return h.field == w.field && h.view_w == static_cast<std::uint32_t>(r.view_w) &&
         h.view_h == static_cast<std::uint32_t>(r.view_h) && h.center_x == r.center_x && h.center_y == r.center_y &&
         h.pixels_per_cell == r.pixels_per_cell && same_slice && same_through;
}

void assemble_view(std::span<const RemoteView* const> parts, RemoteView& out) {
  if (parts.empty()) throw Error(Errc::bad_value, "assembling a view needs the view of at least one part");
  const auto& first = parts.front()->header;
  const std::uint32_t vw = first.view_w, vh = first.view_h;
  std::vector<float> values(std::size_t{vw} * vh, std::numeric_limits<float>::quiet_NaN());
  remote::ViewHeader o = first;
  o.rect.reset();
  o.raw_bytes = 0;
  bool any_range = false;
  for (const RemoteView* p : parts) {
    const auto& h = p->header;
    if (!h.rect || h.view_w != vw || h.view_h != vh)
      throw Error(Errc::bad_message, "a part's view of " + h.field + " is not a block of the " + std::to_string(vw) +
                                         "x" + std::to_string(vh) + " view being assembled (step " +
                                         std::to_string(h.step) + "); the gateway is of another version?");
    const auto& rect = *h.rect;
    (void)remote::payload_samples(h, "a part's view of " + h.field);
    if (p->view.values.size() != std::size_t{rect.w} * rect.h)
      throw Error(Errc::bad_message, "a view's block of " + std::to_string(rect.w) + "x" + std::to_string(rect.h) +
                                         " samples came with " + std::to_string(p->view.values.size()) + " values");
    if (std::uint64_t{rect.x} + rect.w > vw || std::uint64_t{rect.y} + rect.h > vh)
      throw Error(Errc::bad_message, "a part's block of " + std::to_string(rect.w) + "x" + std::to_string(rect.h) +
                                         " samples at (" + std::to_string(rect.x) + ", " + std::to_string(rect.y) +
                                         ") lies outside the grid of " + std::to_string(vw) + "x" + std::to_string(vh));
    // Only the samples the part has: its rectangle may span panels of other parts (three planes
    // of a volume), where it sends NaN.
    for (std::uint32_t y = 0; y < rect.h; ++y)
      for (std::uint32_t x = 0; x < rect.w; ++x)
        if (const float v = p->view.values[std::size_t{y} * rect.w + x]; !std::isnan(v))
          values[std::size_t{rect.y + y} * vw + rect.x + x] = v;
    if (p == parts.front()) continue;
    o.raw_bytes += h.raw_bytes;
    o.sent_ns = std::max(o.sent_ns, h.sent_ns);
    o.stamp_ns = std::max(o.stamp_ns, h.stamp_ns);
    o.latest_step = std::max(o.latest_step, h.latest_step);
    o.error_bound = std::max(o.error_bound, h.error_bound);
    if (h.link_bytes_per_s > 0 && (o.link_bytes_per_s <= 0 || h.link_bytes_per_s < o.link_bytes_per_s))
      o.link_bytes_per_s = h.link_bytes_per_s;
    // The coarsest encoding any part used.
    if (remote::value_bytes(remote::encoding_named(h.encoding)) < remote::value_bytes(remote::encoding_named(o.encoding)))
      o.encoding = h.encoding;
  }
  o.raw_bytes += first.raw_bytes;
  for (const RemoteView* p : parts) {
    const auto& h = p->header;
    if (h.rect->w == 0 || h.rect->h == 0) continue;  // out of sight: its range means nothing
    o.lo = any_range ? std::min(o.lo, h.lo) : h.lo;
    o.hi = any_range ? std::max(o.hi, h.hi) : h.hi;
    any_range = true;
  }
  out.view.region = parts.front()->view.region;
  out.view.components = 1;
  out.view.vectors.clear();
  out.view.values = std::move(values);
  out.header = std::move(o);
}

}  // namespace cuview
