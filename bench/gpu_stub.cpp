// Without the CUDA toolkit the bench measures the host backend only.
#include "bench.hpp"

namespace cuview::bench {
std::optional<Clocks> calibrate_gpu_clock() { return std::nullopt; }
std::vector<double> copy_bandwidth(int) { return {}; }
std::vector<double> fma_rate(int) { return {}; }
std::string cast_section(const Options&) { return {}; }
}  // namespace cuview::bench
