#include "sims/host_array.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace cuview::sim {

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
}

HostArray::HostArray(std::size_t count) {
  const std::size_t bytes = (count * sizeof(float) + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, bytes > 0 ? bytes : kHugePage);
  if (!p) throw std::bad_alloc();
  // Advice only: where the kernel has no transparent huge pages this changes nothing.
  if (bytes >= kHugePage) (void)madvise(p, bytes, MADV_HUGEPAGE);
  std::memset(p, 0, bytes);
  data_.reset(static_cast<float*>(p));
}

void HostArray::Free::operator()(float* p) const { std::free(p); }

}  // namespace cuview::sim
