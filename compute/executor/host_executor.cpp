// The host executor: the simulation runs on the calling thread; a frame is sealed by a CPU loop.
#include <cstring>
#include <thread>

#include "cuview/posix.hpp"
#include "executor/executor.hpp"

namespace cuview {
namespace {

class HostExecutor final : public Executor {
 public:
  Kind kind() const override { return Kind::host; }
  std::string device() const override {
    return "CPU (" + std::to_string(std::thread::hardware_concurrency()) + " hardware threads)";
  }
  void seal(void* slot, const SlotLayout& layout, std::uint64_t seq, std::uint64_t step) override {
    auto* base = static_cast<std::byte*>(slot);
    std::uint64_t sum = 0;
    for (const auto& f : layout.fields) {
      const std::size_t words = f.bytes / 4;
      for (std::size_t i = 0; i < words; ++i) {
        std::uint32_t bits;
        std::memcpy(&bits, base + f.offset + 4 * i, sizeof bits);
        sum += checksum_term(bits, f.offset / 4 + i);
      }
    }
    const SlotTrailer t{seq, step, sum, static_cast<std::uint64_t>(realtime_ns())};
    std::memcpy(base + layout.trailer_offset, &t, sizeof t);
  }
};

}  // namespace

std::unique_ptr<Executor> make_host_executor() { return std::make_unique<HostExecutor>(); }

}  // namespace cuview
