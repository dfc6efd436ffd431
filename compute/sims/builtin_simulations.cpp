// The simulations cuview-compute runs without a plugin, and the dtype helpers.
#include "sims/simulation.hpp"

namespace cuview::sim {

namespace grayscott {
std::unique_ptr<Simulation> make(Executor& executor, const SimulationConfig& config);
}

const char* to_string(DType t) {
  switch (t) {
    case DType::float32:
      return "float32";
    case DType::float16:
      return "float16";
    case DType::int32:
      return "int32";
    case DType::uint8:
      return "uint8";
  }
  return "?";
}

std::size_t size_of(DType t) {
  switch (t) {
    case DType::float32:
    case DType::int32:
      return 4;
    case DType::float16:
      return 2;
    case DType::uint8:
      return 1;
  }
  return 0;
}

const std::vector<SimulationFactory>& builtin_simulations() {
  static const std::vector<SimulationFactory> list{
      {"grayscott", "Gray–Scott reaction–diffusion: two chemicals u and v on a periodic grid", &grayscott::make},
  };
  return list;
}

}  // namespace cuview::sim
