// A particle set's points over a view of the grid, as per-pixel values like a field's: only the
// pixels a body lands on carry one.
#pragma once

#include <vector>

#include "cuview/client.hpp"
#include "cuview/view_sampler.hpp"

namespace cuview::gui {

/// Per pixel of `region` the value of the body drawn there (`colour`'s value, a vector's
/// magnitude; 0 without `colour`), NaN where there is none. Positions (x, y) map onto the grid by
/// the set's bounds; a set without bounds uses `half_extent`, the half-width of the space shown,
/// which is fitted to the bodies (and set) when it is 0. The attributes come to this process in
/// place on the host, one copy each from the GPU (host wait, copy engine). Throws Error(cuda).
std::vector<float> sample_particles(const Frame& frame, const proto::ParticleSetDesc& set,
                                    const proto::FieldDesc& position, const proto::FieldDesc* colour,
                                    const ViewRegion& region, double& half_extent);

}  // namespace cuview::gui
