// Full-resolution volume pictures cast on the GPU that holds the field (issue 55): every cell of
// a device brick, one thread per pixel running cuview/volume_ray.hpp's cast_ray (the CPU caster's
// own code), on a stream the caller gives — the publisher's low-priority one, never the
// simulation's. The publisher's renders are built on it; cuview-bench measures it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "cuview/cuda/stream_ref.hpp"
#include "cuview/plane_picture.hpp"
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
  /// Allocates what a picture of a brick of `brick`'s size needs (its blocks' ranges), so that
  /// casting it allocates nothing: call before recording an event that times the picture.
  void reserve(const VolumeBrick& brick);
  /// The same into device memory only (`argb` and `values` device pointers of width × height
  /// each), queued on `stream` without waiting: what a benchmark times, and what a composite of
  /// parts reads on the GPU.
  void cast_on_device(const VolumeBrick& brick, const VolumeCamera& camera, VolumeMode mode, const VolumeStyle& style,
                      int width, int height, cuda::StreamRef stream, std::uint32_t* argb, float* values);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// One view's pictures, cast on a stream of their own at the device's lowest priority after the
/// frame they read is written, and collected later without waiting (the publisher's `render`):
/// the simulation's stream never waits for a picture, and the program's thread never does. One
/// picture in flight at a time. All calls make `device` current and restore the caller's.
class AsyncPicture {
 public:
  /// Throws Error(cuda) when the stream or events cannot be made; Error(unsupported) without CUDA.
  explicit AsyncPicture(int device);
  ~AsyncPicture();
  AsyncPicture(const AsyncPicture&) = delete;
  AsyncPicture& operator=(const AsyncPicture&) = delete;
  /// Queues a picture of `brick` (device memory that work queued on `after` so far writes) on the
  /// picture's stream, into pinned host memory. `alone`: on `after` itself instead, after its work
  /// and before what follows, so that its time is the GPU's for it alone (beside other streams its
  /// time includes waiting for them). Call only when !busy().
  void queue(const VolumeBrick& brick, const VolumeCamera& camera, VolumeMode mode, const VolumeStyle& style,
             int width, int height, cuda::StreamRef after, bool alone = false);
  /// The same for a picture of a plane (`cells.data` in device memory; `lut` 256 colours on the
  /// host, over [lo, hi]): `render` mode "plane".
  void queue_plane(const PlaneCells& cells, const std::uint32_t* lut, float lo, float hi, int width, int height,
                   cuda::StreamRef after, bool alone = false);
  /// A picture is queued and not collected.
  [[nodiscard]] bool busy() const noexcept;
  /// The queued picture once its work is done (never waits; nullopt while it runs): its pixels
  /// in `out` and the seconds its GPU work took, from its start on its stream to its end.
  [[nodiscard]] std::optional<double> collect(VolumePicture& out);
  /// Makes `stream` wait until the queued picture has read its brick: call before work on
  /// `stream` rewrites that memory. Nothing when none is queued.
  void hold(cuda::StreamRef stream) const;

 private:
  /// Sizes the outputs (before the start event: an allocation between the events would count as
  /// the picture's cost); false when the picture is empty and nothing is queued on the GPU.
  bool begin(int width, int height, bool has_data);
  /// The picture's stream, after the frame; records the start event.
  cuda::StreamRef start(cuda::StreamRef after, bool alone);
  /// Brings the pixels to the host and records the end event.
  void finish(cuda::StreamRef s);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuview
