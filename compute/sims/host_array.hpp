// A zeroed array of floats for a host simulation's state: aligned to 2 MiB and, when it is at
// least that large, offered to the kernel for transparent huge pages (madvise). The flow reads
// 27 and writes 9 streams at once, far apart: on 4 KiB pages their TLB misses cost it more
// than on 2 MiB ones, and a kernel whose THP mode is "madvise" (as CI's) gives huge pages only
// to those who ask.
#pragma once

#include <cstddef>
#include <memory>

namespace cuview::sim {

class HostArray {
 public:
  HostArray() = default;
  /// `count` floats, all 0.0f; throws std::bad_alloc when memory runs out.
  explicit HostArray(std::size_t count);
  [[nodiscard]] float* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(float* p) const;
  };
  std::unique_ptr<float[], Free> data_;
};

/// The distance, in floats, at which to lay arrays of `count` floats one after another in one
/// HostArray so that their element k falls at distinct offsets modulo 4 KiB: `count` rounded up
/// to 4 KiB, plus `shift` floats. Arrays at one page offset make a loop's loads wait on
/// unrelated stores to the others (4K aliasing) and share L1 sets.
[[nodiscard]] constexpr std::size_t staggered_stride(std::size_t count, std::size_t shift) {
  return (count + 1023) / 1024 * 1024 + shift;
}

}  // namespace cuview::sim
