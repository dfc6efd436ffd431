// The host's casting and compositing (volume_cast.cpp, volume_composite.cpp): a loop's items
// spread over threads, one pool per call. Internal to the client library.
#pragma once

#include <algorithm>
#include <thread>
#include <vector>

namespace cuview::detail {

/// `threads` (0: every hardware thread), at most 64 and at most the hardware's.
inline int cores(int threads) {
  const int all = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 64u));
  return threads > 0 ? std::min(threads, all) : all;
}

/// body(i) for every i in [0, count), item i on thread i % threads; returns when all are done.
template <class Body>
void on_every_core(int threads, int count, Body body) {
  threads = std::clamp(threads, 1, std::max(count, 1));
  if (threads == 1) {
    for (int i = 0; i < count; ++i) body(i);
    return;
  }
  std::vector<std::thread> pool;
  for (int k = 0; k < threads; ++k)
    pool.emplace_back([&, k] {
      for (int i = k; i < count; i += threads) body(i);
    });
  for (auto& t : pool) t.join();
}

}  // namespace cuview::detail
