// One field of a held frame into a view's pixels and values, the same way on both backends:
// host frames are read in place from shared memory; CUDA frames are waited for on the host
// (Frame::wait, a cudaEventSynchronize on the publisher's interprocess event), then only the
// sampled rows of the visible columns are copied to pinned host memory by the copy engine, and
// coloured on the CPU. No kernel runs in the viewer's CUDA context and no stream of it waits on
// the publisher's event: either would make the GPU switch contexts under the simulation
// (docs/benchmarks.md, "Viewers that cost nothing").
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cuview/client.hpp"
#include "render/render.hpp"

namespace cuview::gui {

class FrameRenderer {
 public:
  FrameRenderer();
  ~FrameRenderer();
  FrameRenderer(const FrameRenderer&) = delete;
  FrameRenderer& operator=(const FrameRenderer&) = delete;

  /// Renders field `field` (float32, t.components per cell, at `offset` in the slot) of `frame` under `t` into
  /// `rgba` and `values` (view_w × view_h each). Returns when they are filled. Throws
  /// Error(cuda) naming the failing copy.
  void render(const Frame& frame, std::size_t field, std::uint64_t offset, const ViewTransform& t,
              const std::uint32_t* lut, std::uint32_t* rgba, float* values, float* vectors = nullptr);
  /// Bytes the last CUDA render copied to the host (0 on the host backend).
  [[nodiscard]] std::size_t bytes_copied() const noexcept { return bytes_copied_; }

 private:
  struct Staging;  // pinned memory and a stream, on CUDA
  std::unique_ptr<Staging> staging_;
  std::vector<const float*> rows_;
  std::size_t bytes_copied_ = 0;
};

}  // namespace cuview::gui
