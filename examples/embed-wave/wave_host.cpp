// The wave on the CPU: the same per-cell functions as the CUDA kernels, in plain loops.
#include <vector>

#include "wave.hpp"

namespace wave {
namespace {

class HostWave final : public Wave {
 public:
  HostWave(int w, int h) : w_(w), h_(h), u_(std::size_t(w) * h), v_(std::size_t(w) * h) {}
  const float* u() const override { return u_.data(); }
  const float* v() const override { return v_.data(); }
  void reset() override {
    std::fill(u_.begin(), u_.end(), 0.0f);
    std::fill(v_.begin(), v_.end(), 0.0f);
    drop(w_ / 2.0f, h_ / 2.0f, w_ / 24.0f + 2.0f, 1.0f);
  }
  void step(int n, Params p) override {
    for (int s = 0; s < n; ++s) {
      for (int y = 0; y < h_; ++y)
        for (int x = 0; x < w_; ++x) v_[y * w_ + x] = velocity_cell(u_.data(), v_.data(), x, y, w_, h_, p);
      for (std::size_t i = 0; i < u_.size(); ++i) u_[i] += v_[i];
    }
  }
  void drop(float cx, float cy, float r, float amp) override {
    for (int y = 1; y < h_ - 1; ++y)
      for (int x = 1; x < w_ - 1; ++x) u_[y * w_ + x] += drop_cell(x, y, cx, cy, r, amp);
  }

 private:
  int w_, h_;
  std::vector<float> u_, v_;
};

}  // namespace

std::unique_ptr<Wave> make_host(int w, int h) { return std::make_unique<HostWave>(w, h); }

}  // namespace wave
