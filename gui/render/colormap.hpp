// Colormaps as 256-entry lookup tables. viridis and magma use the published polynomial fits of
// matplotlib's maps (mattz, CC0); "diverging" is a blue–white–red map for signed data.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cuview::gui {

enum class Colormap { viridis, magma, grayscale, diverging };
inline constexpr std::array<std::string_view, 4> kColormapNames{"viridis", "magma", "grayscale", "diverging"};

/// 0xAARRGGBB, the layout of QImage::Format_ARGB32.
using Lut = std::array<std::uint32_t, 256>;
Lut make_lut(Colormap map);
/// The colormap kColormapNames calls `name`, or nothing.
std::optional<Colormap> parse_colormap(std::string_view name);

}  // namespace cuview::gui
