// A simulation decomposed over parts (MPI ranks): the rows of the global grid this part owns,
// and how its ghost rows are refreshed from the neighbouring parts. Built-in simulations only
// (plugins never see it); cuview-compute makes one per rank (compute/parts/).
//
// Decomposition: 1-D slabs along the slowest axis: rows (y) of a plane, layers (z) of a volume,
// which the members below call rows either way. Part k of N owns global rows [first_row,
// first_row + rows); part k-1 ("up") owns the rows just before, part k+1 ("down") the rows just after.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuview/cuda/stream_ref.hpp"

namespace cuview::sim {

/// Exchanges boundary rows with the neighbouring parts. A collective: every part calls it in the
/// same order, the same number of times.
class Halo {
 public:
  virtual ~Halo() = default;
  /// Sends `to_up` to the part above (index − 1) and `to_down` to the part below (index + 1), and
  /// receives what they send into `from_up` / `from_down`; each buffer is `bytes` long. A missing
  /// neighbour (the first or the last part) is skipped: its receive buffer is left as it is.
  /// `device`: the buffers are device memory of this part's GPU and the exchange is queued on
  /// `stream` (it has finished when work queued after it on `stream` runs); otherwise they are
  /// host memory and the exchange has finished when the call returns.
  virtual void exchange(const void* to_up, void* from_up, const void* to_down, void* from_down, std::size_t bytes,
                        bool device, cuda::StreamRef stream) = 0;
  [[nodiscard]] virtual bool has_up() const = 0;
  [[nodiscard]] virtual bool has_down() const = 0;
};

/// The rows of the global grid a part owns. The whole grid is {0, height, height, nullptr}.
struct Slab {
  std::uint32_t first_row = 0;      ///< global row of this part's first row
  std::uint32_t rows = 0;           ///< rows owned (the part's height)
  std::uint32_t global_height = 0;  ///< rows of the whole grid
  Halo* halo = nullptr;             ///< null for the whole grid (nothing to exchange)
};

/// Rows of part k of n for a grid of `height` rows: contiguous, sizes differing by at most one.
struct RowRange {
  std::uint32_t first, count;
};
[[nodiscard]] inline RowRange slab_rows(std::uint32_t height, std::uint32_t k, std::uint32_t n) {
  const auto first = static_cast<std::uint32_t>(std::uint64_t{k} * height / n);
  const auto next = static_cast<std::uint32_t>(std::uint64_t{k + 1} * height / n);
  return {first, next - first};
}

}  // namespace cuview::sim
