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
  [[nodiscard]] std::size_t size() const { return count_; }

 private:
  struct Free {
    void operator()(float* p) const;
  };
  std::unique_ptr<float[], Free> data_;
  std::size_t count_ = 0;
};

}  // namespace cuview::sim
