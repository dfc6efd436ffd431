// The figures every fault scenario measures (campaign.hpp).
#include "campaign.hpp"

#include <sstream>
#include <thread>
#ifdef CUVIEW_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

using namespace cuview::test;

namespace cuview::faults {

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::string fmt(double v, int digits) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << v;
  return s.str();
}

ChildProcess daemon_for(const Config& c, const std::string& name) { return start_daemon(name, c.backend, {}, c.size); }

double step_rate(const std::string& name, std::chrono::seconds window) {
  const auto a = stats(name);
  const auto t = Clock::now();
  std::this_thread::sleep_for(window);
  const auto b = stats(name);
  return static_cast<double>(b.step - a.step) / (ms_since(t) / 1000.0);
}

double device_used_mib(const Config& c) {
#ifdef CUVIEW_HAVE_CUDA
  if (c.backend == Backend::cuda) {
    std::size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) == cudaSuccess) return static_cast<double>(total - free) / (1 << 20);
  }
#endif
  (void)c;
  return -1;
}

}  // namespace cuview::faults
