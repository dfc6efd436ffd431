// The host backend's loops on every core: a range of rows (or bodies) split into one band per
// thread, the threads started once with the simulation and kept, so that a step costs a wake-up,
// not a thread start. Each band runs with the calling thread's floating-point mode (x86 MXCSR:
// flush-to-zero, rounding), and every cell is computed by the same code from the same inputs as
// on one thread, so the results are the same bits whatever the thread count.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace cuview::sim {

class RowPool {
 public:
  /// `threads` 0: $CUVIEW_HOST_THREADS if set, else every hardware thread.
  explicit RowPool(unsigned threads = 0);
  ~RowPool();
  RowPool(const RowPool&) = delete;
  RowPool& operator=(const RowPool&) = delete;

  /// Calls band(b, e) over [begin, end) split into contiguous bands, one per thread (the caller
  /// takes one), and returns when all are done; the first exception a band threw is rethrown.
  /// Work of fewer than `min_items` items runs on the calling thread alone.
  void run(std::int64_t begin, std::int64_t end, const std::function<void(std::int64_t, std::int64_t)>& band,
           std::int64_t min_items = 64);
  [[nodiscard]] unsigned threads() const noexcept { return static_cast<unsigned>(workers_.size()) + 1; }

 private:
  void work(unsigned index);
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::uint64_t generation_ = 0;
  unsigned pending_ = 0;
  bool stop_ = false;
  // The job of the current generation.
  const std::function<void(std::int64_t, std::int64_t)>* band_ = nullptr;
  std::int64_t begin_ = 0, end_ = 0;
  unsigned csr_ = 0;
  std::exception_ptr failed_;
};

/// The threads a host simulation uses: 1 for a part of an MPI run (its ranks are the parallelism),
/// otherwise 0 (RowPool's default).
inline unsigned host_threads(bool part_of_run) { return part_of_run ? 1u : 0u; }

}  // namespace cuview::sim
