#include "render/frame_renderer.hpp"

#include "cuview/error.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include "cuview/cuda/check.hpp"
#include "cuview/cuda/stream.hpp"
#endif

namespace cuview::gui {

struct FrameRenderer::Staging {
#ifdef CUVIEW_HAVE_CUDA
  // The render thread is the viewer's own: it makes the frame's GPU current for itself (the
  // client library never moves a thread's device), and its stream and pinned rows belong there.
  explicit Staging(int gpu) : device(gpu) {}
  int device;
  cuda::Stream stream = cuda::Stream::create();
  float* pinned = nullptr;
  std::size_t capacity = 0;  // floats
  ~Staging() {
    if (pinned != nullptr) cudaFreeHost(pinned);
  }
  float* reserve(std::size_t floats) {
    if (floats > capacity) {
      if (pinned != nullptr) cudaFreeHost(pinned);
      pinned = nullptr;
      capacity = 0;
      cuda::check(cudaHostAlloc(reinterpret_cast<void**>(&pinned), floats * sizeof(float), cudaHostAllocDefault),
                  "cudaHostAlloc of " + std::to_string(floats * sizeof(float)) + " bytes for the view's rows");
      capacity = floats;
    }
    return pinned;
  }
#endif
};

FrameRenderer::FrameRenderer() = default;
FrameRenderer::~FrameRenderer() = default;

void FrameRenderer::render(const Frame& frame, std::size_t field, [[maybe_unused]] std::uint64_t offset,
                           const ViewTransform& t, const std::uint32_t* lut, std::uint32_t* rgba, float* values,
                           float* vectors) {
  bytes_copied_ = 0;
  if (const float* host = frame.host_field(field)) {
    render_cpu(host, lut, t, rgba, values, vectors);
    return;
  }
#ifdef CUVIEW_HAVE_CUDA
  const auto s = ViewSampling::of(t);
  rows_.assign(s.rows.size(), nullptr);
  if (s.col_count > 0 && !s.distinct_rows.empty()) {
    if (!staging_ || staging_->device != frame.device()) {
      staging_.reset();
      cuda::check(cudaSetDevice(frame.device()),
                  "cudaSetDevice(" + std::to_string(frame.device()) + ") for the viewer's render thread");
      staging_ = std::make_unique<Staging>(frame.device());
    }
    const auto span = static_cast<std::size_t>(s.col_count) * t.components;  // floats per copied row
    float* dst = staging_->reserve(s.distinct_rows.size() * span);
    const auto* src = reinterpret_cast<const float*>(static_cast<const std::byte*>(frame.device_slot()) + offset);
    const auto pitch = static_cast<std::size_t>(t.field_w) * t.components * sizeof(float);
    frame.wait();  // on the host: the frame is complete, and the GPU never switches to us for it
    // The distinct rows, as runs of equal spacing: one strided 2D copy per run (a zoomed-in view
    // is one run of consecutive rows; a zoomed-out one, runs of every k-th row).
    const auto& r = s.distinct_rows;
    for (std::size_t i = 0; i < r.size();) {
      std::size_t n = 1;
      const int stride = i + 1 < r.size() ? r[i + 1] - r[i] : 1;
      while (i + n < r.size() && r[i + n] - r[i + n - 1] == stride) ++n;
      cuda::check(cudaMemcpy2DAsync(dst + i * span, span * sizeof(float),
                                    src + (static_cast<std::size_t>(r[i]) * t.field_w + s.col_lo) * t.components,
                                    pitch * static_cast<std::size_t>(stride), span * sizeof(float), n,
                                    cudaMemcpyDeviceToHost, staging_->stream.get()),
                  "copying " + std::to_string(n) + " rows of the view from frame " + std::to_string(frame.info().seq));
      i += n;
    }
    cuda::check(cudaStreamSynchronize(staging_->stream.get()),
                "waiting for the view's rows of frame " + std::to_string(frame.info().seq));
    bytes_copied_ = r.size() * span * sizeof(float);
    for (std::size_t py = 0, k = 0; py < s.rows.size(); ++py) {
      if (s.rows[py] < 0) continue;
      while (r[k] != s.rows[py]) ++k;
      rows_[py] = dst + k * span;
    }
  }
  render_rows(rows_, s, t, lut, rgba, values, vectors);
#else
  throw Error(Errc::cuda, "frame " + std::to_string(frame.info().seq) +
                              " is in GPU memory, but this viewer was built without CUDA");
#endif
}

}  // namespace cuview::gui
