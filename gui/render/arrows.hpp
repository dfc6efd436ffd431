// Arrows over a vector field's picture.
#pragma once

#include <QImage>

#include "cuview/view_sampler.hpp"

namespace cuview::gui {

/// White arrows over `image`, from the vector components `sampled` carries: component
/// `across` along the picture's columns (right), `down` along its rows — the first two (x, y) for
/// a grid, the plane's own two for a plane of a volume; one arrow per 24 pixels, the longest
/// visible vector spanning that.
void draw_arrows(QImage& image, const SampledView& sampled, int across = 0, int down = 1);

}  // namespace cuview::gui
