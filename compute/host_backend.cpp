// The host backend: the same simulation on the CPU, slots in one POSIX shared-memory segment.
// Its "event" is the ring's publish counter: data is complete before the frame is published.
#if defined(__SSE2__)
#include <pmmintrin.h>
#include <xmmintrin.h>
#endif

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "backend.hpp"
#include "cuview/posix.hpp"
#include "sim/params.hpp"

namespace cuview {
namespace {

class HostBackend final : public SimBackend {
 public:
  explicit HostBackend(const BackendConfig& cfg)
      : w_(static_cast<int>(cfg.width)), h_(static_cast<int>(cfg.height)), slots_(cfg.slots) {
    layout_ = SlotLayout::make(cfg.width, cfg.height, sim::kFieldCount);
    const std::size_t cells = layout_.cells;
    u_.resize(cells), v_.resize(cells), u2_.resize(cells), v2_.resize(cells);
    data_ = SharedMemory::create(layout_.slot_bytes * slots_);
  }

  std::string kind() const override { return "host"; }
  std::string device() const override {
    return "CPU (" + std::to_string(std::thread::hardware_concurrency()) + " hardware threads)";
  }

  void reset(std::uint64_t seed) override { sim::initial_state(w_, h_, seed, u_.data(), v_.data()); }

  void advance(std::uint32_t steps, const sim::GrayScottParams& p) override {
#if defined(__SSE2__)
    // A fresh field diffuses ever tinier v into its zero background; x86 computes on such
    // subnormal floats several times slower (found by the fault campaign: a daemon with no viewer
    // stepped 5x slower than one with 16). GPUs flush them anyway; so do we.
    _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
    _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
#endif
    for (std::uint32_t s = 0; s < steps; ++s) {
      for (int y = 0; y < h_; ++y)
        for (int x = 0; x < w_; ++x) sim::grayscott_cell(u_.data(), v_.data(), u2_.data(), v2_.data(), x, y, w_, h_, p);
      std::swap(u_, u2_);
      std::swap(v_, v2_);
    }
  }

  void publish(std::uint32_t slot, std::uint64_t seq, std::uint64_t step) override {
    auto* base = static_cast<std::byte*>(data_.data()) + slot * layout_.slot_bytes;
    const float* fields[sim::kFieldCount] = {u_.data(), v_.data()};
    std::uint64_t sum = 0;
    for (std::size_t f = 0; f < sim::kFieldCount; ++f) {
      auto* dst = reinterpret_cast<std::uint32_t*>(base + f * layout_.field_stride);
      const auto* src = reinterpret_cast<const std::uint32_t*>(fields[f]);
      for (std::size_t i = 0; i < layout_.cells; ++i) {
        dst[i] = src[i];
        sum += checksum_term(src[i], f * layout_.cells + i);
      }
    }
    const SlotTrailer t{seq, step, sum, static_cast<std::uint64_t>(realtime_ns())};
    std::memcpy(base + layout_.trailer_offset, &t, sizeof t);
  }

  void finish() override {}

  void fill_handles(proto::HandlesResult& h) const override {
    h.data_shm = data_.name();
    h.slots.clear();
    for (std::uint32_t s = 0; s < slots_; ++s) h.slots.push_back({{}, {}, s * layout_.slot_bytes});
  }

  std::vector<std::string> segments() const override { return {data_.name()}; }

 private:
  int w_, h_;
  std::uint32_t slots_;
  std::vector<float> u_, v_, u2_, v2_;
  SharedMemory data_;
};

}  // namespace

std::unique_ptr<SimBackend> make_host_backend(const BackendConfig& cfg) { return std::make_unique<HostBackend>(cfg); }

}  // namespace cuview
