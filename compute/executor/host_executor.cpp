// The host executor: the simulation runs on the calling thread; a frame is sealed by a CPU loop.
#include <cstring>
#include <thread>
#include <utility>

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
  void begin_frame(void* slot, const SlotLayout& layout, cuda::StreamRef, std::uint64_t held) override {
    open_frame(slot, layout, held);
    sum_ = 0;
    begun_ns_ = monotonic_ns();
  }
  void copy(void* dst, const void* src, std::size_t bytes, cuda::StreamRef) override {
    const int f = held_field(dst, bytes);
    if (f < 0) {
      std::memcpy(dst, src, bytes);
      return;
    }
    // One pass: each word is read once, stored and summed.
    const auto first = frame_.layout->fields[static_cast<std::size_t>(f)].offset / 4;
    const auto* in = static_cast<const unsigned char*>(src);
    auto* out = static_cast<unsigned char*>(dst);
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < bytes / 4; ++i) {
      std::uint32_t w;
      std::memcpy(&w, in + 4 * i, 4);
      std::memcpy(out + 4 * i, &w, 4);
      sum += checksum_term(w, first + i);
    }
    sum_ += sum;
    frame_.summed[static_cast<std::size_t>(f)] = 1;
  }
  void copy_section(void* dst, const void* src, const Section& s, cuda::StreamRef) override {
    // Row by row; seal() sums the field (a second pass, over memory the copy just touched).
    auto* out = static_cast<unsigned char*>(dst);
    const auto* in = static_cast<const unsigned char*>(src);
    for (std::size_t z = 0; z < s.layers; ++z)
      for (std::size_t y = 0; y < s.rows; ++y, out += s.row_bytes)
        std::memcpy(out, in + z * s.layer_pitch + y * s.row_pitch, s.row_bytes);
  }
  void seal(std::uint64_t seq, std::uint64_t step, cuda::StreamRef) override {
    const auto& layout = *frame_.layout;
    for (std::size_t i = 0; i < layout.fields.size(); ++i)
      if (!frame_.summed[i]) sum_ += field_checksum(frame_.base, layout.fields[i]);
    const SlotTrailer t{seq, step, sum_, static_cast<std::uint64_t>(realtime_ns())};
    std::memcpy(frame_.base + layout.trailer_offset, &t, sizeof t);
    const double steps = frame_.steps * step_s_;
    frame_ = {};
    costs_.push_back(std::max(0.0, static_cast<double>(monotonic_ns() - begun_ns_) * 1e-9 - steps));
  }
  void frame_step_begins(std::uint32_t steps, cuda::StreamRef) override {
    frame_.steps = steps;
    begun_ns_ = monotonic_ns();
  }
  void timed_steps(std::uint32_t n, const std::function<void()>& steps) override {
    const auto t0 = monotonic_ns();
    steps();
    if (n > 0) step_s_ = static_cast<double>(monotonic_ns() - t0) * 1e-9 / n;
  }
  std::vector<double> frame_costs() override { return std::exchange(costs_, {}); }

 private:
  std::uint64_t* checksum_sink() override { return frame_.layout != nullptr ? &sum_ : &scratch_; }
  std::uint64_t* checksum_sink_for_nothing() override { return &scratch_; }
  std::uint64_t scratch_ = 0;
  std::uint64_t sum_ = 0;
  std::int64_t begun_ns_ = 0;
  std::vector<double> costs_;  // sealed frames' costs, not yet taken
  double step_s_ = 0;          // the latest timed time per step (timed_steps)
};

}  // namespace

std::unique_ptr<Executor> make_host_executor() { return std::make_unique<HostExecutor>(); }

}  // namespace cuview
