// A volume seen whole needs every cell of it, not one plane: a brick is the volume's cells taken
// every `stride`-th along each axis, as float32 on the host (a vector field's magnitude; any dtype's
// values converted to float). As the ViewSampler does for planes, no kernel runs in the reader's
// CUDA context: a CUDA frame is waited for on the host, then the copy engine brings the brick's
// rows (every stride-th row of every stride-th plane, whole) into pinned memory, and the host keeps
// every stride-th cell of them. A run
// of parts fills one brick of the whole grid, each part its cells: the brick's cell (i, j, k) is
// the grid's cell (i·s, j·s, k·s) whichever part holds it, so a brick assembled from parts equals
// the whole run's.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "cuview/assembly.hpp"

namespace cuview {

class Frame;
namespace proto {
struct FieldDesc;
}

/// A volume's cells every `stride`-th along each axis, x fastest.
struct HostBrick {
  int width = 0, height = 0, depth = 0;  ///< the brick's cells
  int stride = 1;                        ///< brick cell (i, j, k) is grid cell (i, j, k)·stride
  std::array<std::uint32_t, 3> grid{};   ///< the whole grid's {depth, height, width}
  std::vector<float> values;             ///< NaN where no part has filled a cell
  float lo = 0, hi = 0;                  ///< the smallest and largest value (finish()); equal when none
};

/// Fills bricks from frames. Keeps its pinned rows and copy stream per GPU from call to call.
/// Every CUDA call runs under a DeviceGuard of the frame's GPU. Move-only; one thread at a time.
class BrickSampler {
 public:
  BrickSampler();
  ~BrickSampler();
  BrickSampler(BrickSampler&&) noexcept;
  BrickSampler& operator=(BrickSampler&&) noexcept;
  BrickSampler(const BrickSampler&) = delete;
  BrickSampler& operator=(const BrickSampler&) = delete;

  /// The smallest stride at which no axis of `grid` ({d, h, w}) has more than `max_cells` brick cells.
  [[nodiscard]] static int stride_for(const std::array<std::uint32_t, 3>& grid, int max_cells);
  /// Sizes `out` for `grid` at `stride` and fills it with NaN: the start of a brick made of parts.
  static void begin(HostBrick& out, const std::array<std::uint32_t, 3>& grid, int stride);
  /// Writes the brick cells that lie in `block` (a part's cells of the whole grid, {z, y, x};
  /// own_block for a whole publisher) from `field` of `frame`, which holds that block. A frame of
  /// every k-th cell (Frame::every: the publisher wrote only those, packed) gives a brick whose
  /// stride is a multiple of k, copied whole when it is k. Throws Error(bad_value) for a field
  /// that is not a volume (of a known dtype) of the block's size or a stride the frame cannot give,
  /// Error(cuda) naming a failing copy.
  void sample(const Frame& frame, const proto::FieldDesc& field, const Block& block, HostBrick& out);
  /// The range of the values written (lo, hi).
  static void finish(HostBrick& out);
  /// Bytes the copy engine brought for the last sample() (0 on the host backend).
  [[nodiscard]] std::size_t bytes_copied() const noexcept { return bytes_copied_; }

 private:
  /// sample() from `field` as the frame holds it, `block` in its cells, every `stride`-th.
  void sample_cells(const Frame& frame, const proto::FieldDesc& field, const Block& block, int stride, HostBrick& out);
  struct Staging;
  std::vector<std::unique_ptr<Staging>> staging_;
  std::size_t bytes_copied_ = 0;
};

}  // namespace cuview
