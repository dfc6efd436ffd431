// The viewer's previous CUDA render path, kept to measure against the current one: the viewer's
// stream waits on the frame's interprocess event, a kernel runs render_pixel for every screen
// pixel in the viewer's own context, only the screen-sized result is copied back. Both the
// cross-context stream wait and the kernel make the GPU switch contexts under the simulation.
#pragma once

#include <cstdint>
#include <memory>

#include "cuview/cuda/stream_ref.hpp"
#include "render/render.hpp"

namespace cuview::bench {

class KernelRenderer {
 public:
  KernelRenderer();
  ~KernelRenderer();
  KernelRenderer(const KernelRenderer&) = delete;
  KernelRenderer& operator=(const KernelRenderer&) = delete;
  /// The renderer's stream: make it wait on the frame's event before render().
  [[nodiscard]] cuda::StreamRef stream() const;
  /// Renders the device field into host `rgba`/`values` and returns when they are filled.
  /// Throws Error(cuda) naming the failing step.
  void render(const float* device_field, const std::uint32_t* lut, const gui::ViewTransform& t, std::uint32_t* rgba,
              float* values);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuview::bench
