// What the two flows (lbm_cuda.cu, lbm3d_cuda.cu) share when their last step before a frame writes
// it (Simulation::step_and_write): which of the frame's fields — velocity, speed, vorticity,
// density, in that order — the step writes, and where their checksum terms go. Included by .cu
// files only.
#pragma once

#include <vector>

#include "cuview/cuda/checksum.cuh"
#include "executor/executor.hpp"

namespace cuview::sim {

/// Where a flow's frame step writes density, speed and velocity from its collision (null: not
/// read). Velocity is written when the frame holds it or vorticity, whose kernel reads it there.
struct FlowFrameOut {
  float *velocity, *speed, *density;
  std::uint64_t w_velocity, w_speed, w_density;  // first words in the slot
  std::uint64_t* sums;                           // kChecksumSlots words (add_checksum_spread)
  unsigned held;                                 // bits: velocity, speed, vorticity, density
};

struct FlowFrame {
  FlowFrameOut out;
  FieldChecksum vorticity;  ///< where the vorticity kernel adds its terms
  std::uint64_t* sum;       ///< the frame's checksum: a held field's sink (slots.add_into)
};

/// The frame step's outputs for `targets` (the four fields), its checksum words cleared on
/// `stream`; every target is marked as summed as it is written (Executor::sum_into).
inline FlowFrame flow_frame(Executor& executor, const std::vector<FieldTarget>& t, ChecksumSlots& slots,
                            cudaStream_t stream) {
  const FieldChecksum v = executor.sum_into(t[0]), s = executor.sum_into(t[1]), w = executor.sum_into(t[2]),
                      d = executor.sum_into(t[3]);
  FlowFrameOut out{t[0].read || t[2].read ? static_cast<float*>(t[0].data) : nullptr,
                   t[1].read ? static_cast<float*>(t[1].data) : nullptr,
                   t[3].read ? static_cast<float*>(t[3].data) : nullptr,
                   v.first_word,
                   s.first_word,
                   d.first_word,
                   slots.clear(stream),
                   (t[0].read ? 1u : 0u) | (t[1].read ? 2u : 0u) | (t[2].read ? 4u : 0u) | (t[3].read ? 8u : 0u)};
  return {out, w, t[0].read ? v.sum : t[1].read ? s.sum : t[2].read ? w.sum : d.sum};
}

}  // namespace cuview::sim
