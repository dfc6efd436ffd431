// Arrows over a vector field's picture.
#pragma once

#include <QImage>

#include "cuview/view_sampler.hpp"

namespace cuview::gui {

/// White arrows over `image`, from the vector components `sampled` carries (its first two: x
/// right, y down, as the grid): one per 24 pixels, the longest visible vector spanning that.
void draw_arrows(QImage& image, const SampledView& sampled);

}  // namespace cuview::gui
