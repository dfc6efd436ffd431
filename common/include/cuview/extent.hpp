// The extent of a grid and of a block of it, as values: the one description of "how many cells,
// along which axes" that the protocol, the publisher, the client library, the gateway and the
// viewer share. Axes are listed slowest first (row-major), as NumPy's shape and the protocol's
// `dims` are; a user writes a size fastest first ("512x256x64"), as text() does. No axis is
// special: a line, a plane and a volume are the same value with 1, 2 or 3 axes.
// Stands alone (the standard library only), so that the protocol and its fuzzer can use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace cuview {

/// Sizes of, or positions along, a grid's axes, slowest first (row-major): {height, width} for a
/// 2-D grid, {depth, height, width} for a volume, {width} for a line.
using Axes = std::vector<std::uint32_t>;

/// The most axes a grid has. Code that handles a grid of any rank checks against this; code that
/// needs a volume (ray casting, three planes through a cell) says so where it does.
inline constexpr std::size_t kMaxAxes = 3;

/// Axis `k` of `axes` counted from the fastest (0: the width's, 1: the height's, 2: the depth's);
/// `past` for an axis the grid does not have (1 for sizes, so that a 2-D grid has depth 1; 0 for
/// positions).
[[nodiscard]] inline std::uint32_t axis_from_fastest(const Axes& axes, std::size_t k, std::uint32_t past = 1) noexcept {
  return k < axes.size() ? axes[axes.size() - 1 - k] : past;
}

/// The name a grid of `rank` axes gives axis `k` (slowest first) when its publisher named none:
/// "x" for the fastest, then "y", "z".
[[nodiscard]] inline std::string default_axis_name(std::size_t rank, std::size_t k) {
  const std::size_t from_fastest = rank - 1 - k;
  return from_fastest < 3 ? std::string(1, "xyz"[from_fastest]) : "axis" + std::to_string(k);
}

/// "512x256x64": sizes as a user writes them, fastest axis first ("a point" for none).
[[nodiscard]] inline std::string axes_text(const Axes& a) {
  std::string s;
  for (auto it = a.rbegin(); it != a.rend(); ++it) s += (s.empty() ? "" : "x") + std::to_string(*it);
  return s.empty() ? "a point" : s;
}

/// A cell's position as a user writes it, fastest axis first: "(x, y)" or "(x, y, z)".
[[nodiscard]] inline std::string position_text(const Axes& at) {
  std::string s;
  for (auto it = at.rbegin(); it != at.rend(); ++it) s += (s.empty() ? "" : ", ") + std::to_string(*it);
  return "(" + s + ")";
}

/// The extent of a grid: its axes and the components of each cell (1: a scalar; 2, 3: a vector).
struct Extent {
  Axes dims;
  std::uint32_t components = 1;

  /// A 2-D grid of `width` × `height` cells (tests and pictures, which are 2-D by nature).
  [[nodiscard]] static Extent grid(std::uint32_t width, std::uint32_t height, std::uint32_t components = 1) {
    return Extent{{height, width}, components};
  }
  [[nodiscard]] std::size_t rank() const noexcept { return dims.size(); }
  /// The number of cells (1 for a grid of no axes).
  [[nodiscard]] std::size_t cells() const noexcept {
    return std::accumulate(dims.begin(), dims.end(), std::size_t{1},
                           [](std::size_t a, std::uint32_t d) { return a * d; });
  }
  /// The size of axis `k` counted from the fastest; 1 past the grid's rank.
  [[nodiscard]] std::uint32_t from_fastest(std::size_t k) const noexcept { return axis_from_fastest(dims, k); }
  [[nodiscard]] std::uint32_t width() const noexcept { return from_fastest(0); }
  [[nodiscard]] std::uint32_t height() const noexcept { return from_fastest(1); }
  [[nodiscard]] std::uint32_t depth() const noexcept { return from_fastest(2); }
  /// "512x256" (fastest axis first, as a user writes a size), with components appended as
  /// " of 3-vectors".
  [[nodiscard]] std::string text() const {
    return axes_text(dims) + (components > 1 ? " of " + std::to_string(components) + "-vectors" : "");
  }
  bool operator==(const Extent&) const = default;
};

/// A block of a grid: where it starts and its size, both slowest axis first (a part's block of
/// the global grid, a box a client fetches).
struct Block {
  Axes offset;
  Axes dims;
  /// A 2-D block of `width` × `height` cells starting at cell (x, y).
  [[nodiscard]] static Block grid(std::uint32_t x, std::uint32_t y, std::uint32_t width, std::uint32_t height) {
    return Block{{y, x}, {height, width}};
  }
  /// Whether the block lies inside a grid of `grid` dims: as many axes, none leaving it.
  [[nodiscard]] bool inside(const Axes& grid) const noexcept {
    if (dims.size() != grid.size() || offset.size() != grid.size()) return false;
    for (std::size_t a = 0; a < grid.size(); ++a)
      if (std::uint64_t{offset[a]} + dims[a] > grid[a]) return false;
    return true;
  }
  bool operator==(const Block&) const = default;
};

}  // namespace cuview
