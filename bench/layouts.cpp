// Section "layouts": what publishing a field costs per frame in the layouts real codes hold — a
// contiguous float32 volume, the same cells in float64, and float64 arrays with a halo of ghost
// cells read in place (the publisher copies their interior into the ring: a strided kernel on the
// GPU, row copies on the host) — against the contiguous float32 field of the same cells.
//
// A publisher in this process, one reader (`cuview-bench viewer --render wait`, another process)
// holding a lease, frames published back to back. CUDA: each frame's work (copy, checksum, trailer,
// event) bracketed by events on the publishing stream, so the figure is the GPU time the run pays
// per frame; host: the wall time of publish(), which copies before it returns.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <memory>
#include <sstream>
#include <thread>

#include "bench.hpp"
#include "cuview/publisher.hpp"
#include "process.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace cuview::bench {
namespace {
using Clock = std::chrono::steady_clock;

struct Case {
  std::string label;
  DType dtype;
  std::uint32_t halo;  ///< 0: contiguous
  bool host_memory;    ///< CUDA: the program's array in pinned host memory
};

/// The program's array: n³ cells plus the halo, on the device (CUDA) or in host memory.
class Array {
 public:
  Array(std::size_t bytes, bool device, bool pinned) : bytes_(bytes) {
#ifdef CUVIEW_HAVE_CUDA
    if (device) {
      if (cudaMalloc(&p_, bytes) != cudaSuccess) throw Error(Errc::cuda, "cudaMalloc of " + std::to_string(bytes) + " bytes");
      (void)cudaMemset(p_, 0, bytes);
      kind_ = 1;
      return;
    }
    if (pinned) {
      if (cudaMallocHost(&p_, bytes) != cudaSuccess)
        throw Error(Errc::cuda, "cudaMallocHost of " + std::to_string(bytes) + " bytes");
      std::memset(p_, 0, bytes);
      kind_ = 2;
      return;
    }
#else
    (void)device, (void)pinned;
#endif
    host_ = std::make_unique<std::byte[]>(bytes);
    p_ = host_.get();
  }
  ~Array() {
#ifdef CUVIEW_HAVE_CUDA
    if (kind_ == 1) (void)cudaFree(p_);
    if (kind_ == 2) (void)cudaFreeHost(p_);
#endif
  }
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  [[nodiscard]] std::byte* data() const { return static_cast<std::byte*>(p_); }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_;
  void* p_ = nullptr;
  int kind_ = 0;
  std::unique_ptr<std::byte[]> host_;
};

/// Milliseconds per published frame (median of `frames`), the publisher reading `f`.
double frame_ms(Publisher& pub, bool cuda, int frames) {
  std::vector<double> ms;
  std::uint64_t step = 0;
  const auto give_up = Clock::now() + std::chrono::seconds(60);
#ifdef CUVIEW_HAVE_CUDA
  cudaStream_t stream = nullptr;
  cudaEvent_t begin = nullptr, end = nullptr;
  if (cuda) {
    (void)cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    (void)cudaEventCreate(&begin);
    (void)cudaEventCreate(&end);
  }
#endif
  int warm = 5;
  while (static_cast<int>(ms.size()) < frames && Clock::now() < give_up) {
    ++step;
#ifdef CUVIEW_HAVE_CUDA
    if (cuda) {
      (void)cudaEventRecord(begin, stream);
      const bool published = pub.publish(step, double(step), cuda::StreamRef(stream));
      (void)cudaEventRecord(end, stream);
      (void)cudaEventSynchronize(end);
      float t = 0;
      (void)cudaEventElapsedTime(&t, begin, end);
      if (published && warm-- <= 0) ms.push_back(t);
      if (!published) std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
#endif
    const auto t0 = Clock::now();
    const bool published = pub.publish(step, double(step));
    const double t = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (published && warm-- <= 0) ms.push_back(t);
    if (!published) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
#ifdef CUVIEW_HAVE_CUDA
  if (cuda) {
    (void)cudaEventDestroy(begin);
    (void)cudaEventDestroy(end);
    (void)cudaStreamDestroy(stream);
  }
#endif
  if (ms.empty()) throw Error(Errc::timeout, "no frame was published in a minute: the reader never took a lease");
  return latency_dist(ms).median;
}
}  // namespace

std::string layouts_section(const Options& o, const std::string& backend) {
  const bool cuda = backend == "cuda";
  test::RuntimeDir rt;  // the publishers' own runtime directory (an earlier section's may be gone)
  const std::uint32_t n = static_cast<std::uint32_t>(cuda ? o.layout_size : o.host_layout_size);
  std::vector<Case> cases{{"float32, contiguous", DType::float32, 0, false},
                          {"float64, contiguous", DType::float64, 0, false},
                          {"float64, halo of 1, in place", DType::float64, 1, false},
                          {"float64, halo of 2, in place", DType::float64, 2, false}};
  if (cuda) cases.push_back({"float64, halo of 1, in place, pinned host memory", DType::float64, 1, true});
  std::ostringstream md;
  md << "\n### Publishing what codes hold — " << (cuda ? "CUDA" : "host backend") << ", " << n << "³ cells\n\n";
  Table t{{"field", "bytes per frame", "per frame (median)", "read + write rate", "vs float32 contiguous",
           "share of the run at 60 frames/s"},
          {}};
  double base_ms = 0;
  int k = 0;
  for (const auto& c : cases) {
    const std::size_t cell = size_of(c.dtype), m = n + 2 * c.halo;
    Array array(std::size_t{m} * m * m * cell, cuda && !c.host_memory, c.host_memory);
    const std::string name = "bench-layouts-" + std::to_string(::getpid()) + "-" + std::to_string(k++);
    Publisher pub({.name = name, .backend = backend, .title = "layouts", .max_fps = 0, .max_cost = 1});
    pub.add_grid({.name = "volume", .dims = {n, n, n}});
    FieldDecl f{.name = "u", .data = array.data() + ((std::size_t{c.halo} * m + c.halo) * m + c.halo) * cell};
    f.dtype = c.dtype;
    f.memory = cuda && !c.host_memory ? Memory::device : Memory::host;
    f.grid = "volume";
    if (c.halo > 0) f.strides = {std::int64_t(m * m * cell), std::int64_t(m * cell), std::int64_t(cell)};
    else f.bytes = std::size_t{n} * n * n * cell;
    pub.add_field(f);
    pub.start();
    auto reader = spawn_viewer(name, 0, 120, "wait");
    const double ms = frame_ms(pub, cuda, o.reps * 2);
    reader.signal(SIGTERM);
    const double bytes = double(n) * n * n * cell;
    if (base_ms == 0) base_ms = ms;
    t.rows.push_back({c.label, fmt(bytes / 1e6, "%.0f") + " MB", fmt(ms, "%.3g") + " ms",
                      fmt(2 * bytes / (ms * 1e-3) / 1e9, "%.0f") + " GB/s", fmt(ms / base_ms, "%.2f") + "×",
                      fmt(ms * 60 / 10, "%.2g") + " %"});
  }
  md << t.markdown()
     << "\nBytes: the field's cells (a halo is not copied). The rate counts each byte read once and written "
        "once; the checksum is summed as the copy goes on the GPU. The share is 60 frames' time in a second: "
        "the cost budget (1 % by default) lowers the frame rate until the share fits.\n";
  return md.str();
}

}  // namespace cuview::bench
