#include "sims/row_pool.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

namespace cuview::sim {
namespace {
unsigned default_threads() {
  if (const char* env = std::getenv("CUVIEW_HOST_THREADS"); env != nullptr && *env != '\0') {
    try {
      const unsigned long n = std::stoul(env);
      if (n >= 1 && n <= 1024) return static_cast<unsigned>(n);
    } catch (const std::exception&) {
      // not a number: the default below
    }
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

unsigned get_csr() {
#if defined(__SSE2__)
  return _mm_getcsr();
#else
  return 0;
#endif
}

void set_csr([[maybe_unused]] unsigned csr) {
#if defined(__SSE2__)
  _mm_setcsr(csr);
#endif
}

/// Band k of n over [begin, end): contiguous, sizes differing by at most one.
std::pair<std::int64_t, std::int64_t> band_of(std::int64_t begin, std::int64_t end, unsigned k, unsigned n) {
  const std::int64_t len = end - begin;
  return {begin + len * k / n, begin + len * (k + 1) / n};
}
}  // namespace

RowPool::RowPool(unsigned threads) {
  const unsigned n = threads == 0 ? default_threads() : threads;
  for (unsigned i = 1; i < n; ++i) workers_.emplace_back([this, i] { work(i); });
}

RowPool::~RowPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void RowPool::run(std::int64_t begin, std::int64_t end, const std::function<void(std::int64_t, std::int64_t)>& band,
                  std::int64_t min_items) {
  if (end <= begin) return;
  if (workers_.empty() || end - begin < std::max<std::int64_t>(min_items, threads())) {
    band(begin, end);
    return;
  }
  {
    std::lock_guard lock(mu_);
    band_ = &band;
    begin_ = begin, end_ = end;
    csr_ = get_csr();
    failed_ = nullptr;
    pending_ = static_cast<unsigned>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  std::exception_ptr mine;
  try {
    const auto [b, e] = band_of(begin, end, 0, threads());
    band(b, e);
  } catch (...) {
    mine = std::current_exception();
  }
  std::unique_lock lock(mu_);
  done_.wait(lock, [&] { return pending_ == 0; });
  band_ = nullptr;
  if (mine) std::rethrow_exception(mine);
  if (failed_) std::rethrow_exception(failed_);
}

void RowPool::work(unsigned index) {
  std::uint64_t seen = 0;
  for (;;) {
    const std::function<void(std::int64_t, std::int64_t)>* band = nullptr;
    std::int64_t begin = 0, end = 0;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      band = band_;
      begin = begin_, end = end_;
      set_csr(csr_);
    }
    std::exception_ptr failed;
    try {
      const auto [b, e] = band_of(begin, end, index, threads());
      (*band)(b, e);
    } catch (...) {
      failed = std::current_exception();
    }
    std::lock_guard lock(mu_);
    if (failed && !failed_) failed_ = failed;
    if (--pending_ == 0) done_.notify_one();
  }
}

}  // namespace cuview::sim
