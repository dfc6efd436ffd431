// The CUDA render path, in the viewer's own context: waits on the frame's interprocess event,
// runs render_pixel for every screen pixel on the GPU, copies only the screen-sized result back.
#pragma once

#include <cstdint>
#include <memory>

#include "render/render.hpp"

namespace cuview::gui {

class CudaRenderer {
 public:
  CudaRenderer();
  ~CudaRenderer();
  CudaRenderer(const CudaRenderer&) = delete;
  CudaRenderer& operator=(const CudaRenderer&) = delete;
  /// The renderer's stream (a cudaStream_t): make it wait on the frame's event before render().
  [[nodiscard]] void* stream() const;
  /// Renders the device field into host `rgba`/`values` and returns when they are filled.
  /// Throws Error(cuda) naming the failing step.
  void render(const float* device_field, const std::uint32_t* lut, const ViewTransform& t, std::uint32_t* rgba,
              float* values);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuview::gui
