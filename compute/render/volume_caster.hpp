// Full-resolution volume pictures cast on the GPU that holds the field (issue 55): every cell of
// a device brick, one thread per pixel running cuview/volume_ray.hpp's cast_ray (the CPU caster's
// own code), on a stream the caller gives — the publisher's low-priority one, never the
// simulation's. The publisher's renders are built on it; cuview-bench measures it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cuview/cuda/stream_ref.hpp"
#include "cuview/volume_ray.hpp"

namespace cuview {

/// A picture: ARGB32 pixels, row-major, and per pixel what it shows (VolumeImage's meaning).
struct VolumePicture {
  int width = 0, height = 0;
  std::vector<std::uint32_t> argb;
  std::vector<float> values;
};

/// Casts pictures of bricks in device memory on the current CUDA device. Keeps its device
/// buffers (the tables, the picture) between pictures; one caster per thread.
class VolumeCaster {
 public:
  VolumeCaster();
  ~VolumeCaster();
  VolumeCaster(const VolumeCaster&) = delete;
  VolumeCaster& operator=(const VolumeCaster&) = delete;
  /// Casts `brick` (its data a device pointer) into `out` (resized) on `stream` and returns once
  /// the picture is on the host. Throws Error(cuda) naming the failing step; Error(unsupported)
  /// in a build without CUDA.
  void cast(const VolumeBrick& brick, const VolumeCamera& camera, VolumeMode mode, const VolumeStyle& style,
            int width, int height, cuda::StreamRef stream, VolumePicture& out);
  /// The same into device memory only (`argb` and `values` device pointers of width × height
  /// each), queued on `stream` without waiting: what a benchmark times, and what a composite of
  /// parts reads on the GPU.
  void cast_on_device(const VolumeBrick& brick, const VolumeCamera& camera, VolumeMode mode, const VolumeStyle& style,
                      int width, int height, cuda::StreamRef stream, std::uint32_t* argb, float* values);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuview
