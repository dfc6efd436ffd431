// N-body gravity: all pairs, Plummer softening ε, G = 1, integrated with kick–drift–kick leapfrog
// (symplectic: energy oscillates instead of drifting). Bodies live in 3D (discs are thin), the
// viewer looks down the z axis. The pair interaction below is the only copy of the physics: the
// CUDA kernel (tiled through shared memory) and the host loop both call it. Counted as 20
// floating-point operations per interaction, the convention of GPU Gems 3, ch. 31.
#pragma once

#include <cmath>
#include <cstdint>

#include "cuview/host_device.hpp"

namespace cuview::sim::nbody {

struct NbodyParams {
  float dt = 0.001f;        ///< time step
  float softening = 0.02f;  ///< ε: forces as if each body were a Plummer sphere of that radius
};

/// Adds body j's pull on body i to (ax, ay, az): m_j (r_j − r_i) / (|r_j − r_i|² + ε²)^{3/2}.
/// A body's pull on itself is zero (its distance is zero), so loops need not skip it.
CUVIEW_HD inline void interact(float xi, float yi, float zi, float xj, float yj, float zj, float mj, float eps2,
                               float& ax, float& ay, float& az) {
  const float dx = xj - xi, dy = yj - yi, dz = zj - zi;
  const float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, eps2)));
#ifdef __CUDA_ARCH__
  const float inv = rsqrtf(r2);
#else
  const float inv = 1.0f / std::sqrt(r2);
#endif
  const float s = mj * inv * inv * inv;
  ax = fmaf(dx, s, ax);
  ay = fmaf(dy, s, ay);
  az = fmaf(dz, s, az);
}

inline constexpr double kFlopsPerInteraction = 20.0;

}  // namespace cuview::sim::nbody
