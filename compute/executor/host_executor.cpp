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
  BufferLocation locate(const void*) const override { return {}; }
  void copy(void* dst, const void* src, std::size_t bytes, cuda::StreamRef) override { std::memcpy(dst, src, bytes); }
  void seal(void* slot, const SlotLayout& layout, std::uint64_t seq, std::uint64_t step, cuda::StreamRef) override {
    auto* base = static_cast<std::byte*>(slot);
    const std::uint64_t sum = slot_checksum(slot, layout);
    const SlotTrailer t{seq, step, sum, static_cast<std::uint64_t>(realtime_ns())};
    std::memcpy(base + layout.trailer_offset, &t, sizeof t);
  }
};

}  // namespace

std::unique_ptr<Executor> make_host_executor() { return std::make_unique<HostExecutor>(); }

}  // namespace cuview
