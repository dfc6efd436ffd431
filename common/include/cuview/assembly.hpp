// Putting the parts of a run together, as values: the extent of a grid and of a part's block in
// it, which step a group of parts shows (local frames, remote views), where each part's block goes
// in the global grid and each part's samples in a view. No I/O and no clock of its own: the local
// group, the remote group, a single remote client and the C API (hence Python) all use it, and its
// unit tests pin torn groups, missing parts, parts a frame apart and parts out of sight.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cuview/extent.hpp"
#include "cuview/remote_protocol.hpp"
#include "cuview/view_sampler.hpp"

namespace cuview {

/// Where a part's block shows in a picture of the whole grid (PictureLayout): a rectangle of the
/// picture's cells, and the plane of the part's own grid that fills it (a volume's; empty for a
/// 2-D block), its rows and columns swapped when the panel's are.
struct PlaneBlock {
  ViewSampler::Block rect;     ///< in the picture's cells
  std::optional<Slice> local;  ///< the plane in the part's indices
  bool transposed = false;
  bool operator==(const PlaneBlock& o) const {
    return rect.x == o.rect.x && rect.y == o.rect.y && rect.w == o.rect.w && rect.h == o.rect.h &&
           local == o.local && transposed == o.transposed;
  }
};
/// Part `block`'s shares of `layout`'s picture: the own rectangle of a block of 1 or 2 axes (a
/// line: one cell high); of a volume's block,
/// one per panel whose plane crosses it (none for a z-plane of another slab). Throws
/// Error(bad_value) for a volume's block in a 2-D picture or a flat block in a volume's, and for a
/// block of no axes or more than 3.
[[nodiscard]] std::vector<PlaneBlock> picture_blocks(const Block& block, const PictureLayout& layout);
/// The field of a part's frame that fills `share` of a picture: a 2-D field as it is, else its
/// plane (plane_of), transposed when the panel is: what ViewSampler::sample_block reads.
[[nodiscard]] proto::FieldDesc block_field(const proto::FieldDesc& field, const PlaneBlock& share);

/// The picture a view names of a grid of `whole` dims (the whole run's; docs/remote.md "Pushed
/// by the gateway" and "Three planes through a cell"): a 2-D grid's own; of a volume, plane
/// (`axis`, `index`) or the three planes `through` a cell {x, y, z}. What the gateway makes of a
/// `view` and a client of the view header echoing it. Throws Error(bad_value) naming `what` (the
/// field and its publisher) for planes of a 2-D grid, a volume with neither or both forms, a
/// `through` that is not three values; Error(out_of_range) for an index past its axis.
[[nodiscard]] PictureLayout picture_named(const Axes& whole, const std::optional<std::string>& axis,
                                          const std::optional<std::uint32_t>& index,
                                          const std::optional<std::vector<std::uint32_t>>& through,
                                          const std::string& what);
/// A publisher's own grid (`dims`) as a block at offset 0: what one frame
/// holds, whether or not it is a part of a larger run.
[[nodiscard]] Block own_block(const proto::DescribeResult& d);
/// The grid of the whole run `d` is a publisher of (a part's: the global grid, its origin moved
/// back from the part's first cell to the global grid's), with its coordinates: what a viewer
/// shows positions in; of the grid field `field` lies on (a field of another grid than a part's
/// first is whole in every part). A publisher that declared none: origin 0, spacing 1.
[[nodiscard]] proto::GridDesc whole_grid(const proto::DescribeResult& d, std::size_t field = 0);

/// One rectangle of bytes to copy (what cudaMemcpy2D takes): `height` rows of `width` bytes, from
/// byte `src` of the block (rows `src_pitch` apart) to byte `dst` of the grid (`dst_pitch` apart).
struct Copy2D {
  std::size_t dst = 0, dst_pitch = 0, src = 0, src_pitch = 0, width = 0, height = 0;
  bool operator==(const Copy2D&) const = default;
};

/// How a block's cells (row-major over block.dims, `cell_bytes` each) go into a row-major grid of
/// `global` dims at the block's offset: one Copy2D per plane (one for 1- and 2-D blocks, one per
/// layer of a 3-D block), none for an empty block. Throws Error(bad_value) naming what does not
/// fit: a block of another rank than the grid's, or one leaving it.
[[nodiscard]] std::vector<Copy2D> block_copies(const Block& block, const Axes& global, std::size_t cell_bytes);

/// Copies a block's cells (row-major over block.dims, `cell_bytes` each, in `src`) into `dst`, a
/// row-major grid of `global` dims, at the block's offset (block_copies' plan); every other cell of
/// `dst` is left as it was. Any rank (1-, 2-, 3-D). Throws Error(bad_value) naming what does not
/// fit: a block of another rank or leaving the grid, a `src` or `dst` of the wrong size.
void place_block(const Block& block, std::span<const std::byte> src, const Axes& global, std::span<std::byte> dst,
                 std::size_t cell_bytes);

/// Which step a group of parts takes now: the newest step every part offers. `offered[k]` lists
/// the steps part k offers that are newer than what the group took last (any order). Without such
/// a step, `step` is empty and `laggard` is the part to wait for: the first that offers nothing
/// new, else the one whose newest step is oldest. A step only some parts offer (a torn group, a
/// part a frame behind) is never chosen.
struct StepChoice {
  std::optional<std::uint64_t> step;
  std::size_t laggard = 0;
};
[[nodiscard]] StepChoice choose_common_step(const std::vector<std::vector<std::uint64_t>>& offered);

/// The remote group's matching of views: each part's gateway sends one view per credit, of its
/// newest frame or of the first at or after a step the group asks for. The matcher keeps which step
/// each part's view is of, says when every part has a view of one step not shown yet (a picture),
/// and which parts to ask for which step: the parts behind, for the step of the part furthest
/// ahead; after a picture, every part, for the newest step any part had. A part whose asked-for
/// step does not come within a second (the run was reset, a part skipped it) is asked for its
/// newest; one whose view was lost, every 3 s. Parts publish the same steps, so this meets within a
/// view or two; never are two steps' blocks put side by side. The caller owns the views; the clock
/// is the caller's.
class ViewMatcher {
 public:
  using Clock = std::chrono::steady_clock;
  /// Ask part `part` for one more view: of the first frame at or after `from_step`, or of its
  /// newest when empty. The part's held view is dropped (the caller returns its credit).
  struct Ask {
    std::size_t part = 0;
    std::optional<std::uint64_t> from_step;
    bool operator==(const Ask&) const = default;
  };
  struct Decision {
    /// Every part holds a view of step `step`: assemble them before carrying out `asks`.
    bool picture = false;
    std::uint64_t step = 0;
    std::vector<Ask> asks;
  };

  ViewMatcher() = default;
  /// `parts` parts, none of which holds a view; each counts as asked at `now`.
  ViewMatcher(std::size_t parts, Clock::time_point now);
  [[nodiscard]] std::size_t parts() const noexcept { return views_.size(); }
  /// Part k's view arrived: the step it shows and the newest step its publisher offered then.
  void arrived(std::size_t k, std::uint64_t step, std::uint64_t latest_step);
  /// Whether part k holds a view.
  [[nodiscard]] bool holds(std::size_t k) const { return views_.at(k).has_value(); }
  /// The first part holding no view (parts() - 1 when all hold one): the one to wait on.
  [[nodiscard]] std::size_t waiting_on() const noexcept;
  /// What to do now; the asks are already recorded (the parts asked hold no view after it).
  [[nodiscard]] Decision decide(Clock::time_point now);

 private:
  struct Held {
    std::uint64_t step = 0, latest = 0;
  };
  void ask(std::size_t k, std::optional<std::uint64_t> from_step, Clock::time_point now, std::vector<Ask>& asks);
  std::vector<std::optional<Held>> views_;
  std::vector<Clock::time_point> asked_;
  std::vector<std::optional<std::uint64_t>> asked_step_;
  std::optional<std::uint64_t> shown_;
};

/// What a remote client asks to see: one field over a region, at the region's output size.
struct ViewWatch {
  std::string field;
  ViewRegion region;  ///< field_w, field_h: the grid's; view_w, view_h: the output's
  std::string encoding = "auto";  ///< "auto" (fitted to the link), or pinned: u8, u16, f32
  /// A volume's field: the plane viewed (region's field_w, field_h: the plane's columns and rows),
  /// or three planes side by side through cell `through` {x, y, z} (PictureLayout::of_three_planes;
  /// the region is in that picture's cells). One of the two for a volume, neither for a 2-D grid.
  std::optional<Slice> slice{};
  std::optional<std::array<std::uint32_t, 3>> through{};
  /// A volume seen whole: a brick of at most this many cells along the longest axis, fitted to the
  /// link by the gateway (region, slice and through unused).
  std::optional<std::uint32_t> brick{};
};

/// Whether a view (its header) shows what `w` asks for: its field, region and picture (a volume's
/// plane, or three planes through a cell). A view of an earlier watch still on its way does not.
[[nodiscard]] bool shows_watch(const remote::ViewHeader& h, const ViewWatch& w);

/// A view of a remote frame: its values (NaN outside the grid) and how exact they are.
struct RemoteView {
  remote::ViewHeader header;  ///< seq, step, encoding, error bound, range, the gateway's link estimate
  SampledView view;           ///< the region and its values
};

/// One picture from parts' views of one step (each view's `values` hold its header.rect's samples;
/// a part out of sight has an empty rect): every part's samples placed in a view of the whole
/// region, NaN (no value) where no part has one. The header is part 0's, with the largest error
/// bound, the range over the parts that had samples, the slowest gateway's link estimate and the
/// coarsest encoding any part used; raw_bytes is the sum. A single view with a rect (one part
/// through a gateway) is placed the same way. Throws Error(bad_message) for a rect outside its view.
void assemble_view(std::span<const RemoteView* const> parts, RemoteView& out);

}  // namespace cuview
