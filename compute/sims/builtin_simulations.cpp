// The simulations cuview-compute runs without a plugin.
#include "sims/simulation.hpp"

namespace cuview::sim {

namespace grayscott {
std::unique_ptr<Simulation> make(Executor& executor, const SimulationConfig& config);
}
namespace grayscott3d {
std::unique_ptr<Simulation> make(Executor& executor, const SimulationConfig& config);
}
namespace lbm {
std::unique_ptr<Simulation> make(Executor& executor, const SimulationConfig& config);
}
namespace lbm3d {
std::unique_ptr<Simulation> make(Executor& executor, const SimulationConfig& config);
}
namespace nbody {
std::unique_ptr<Simulation> make(Executor& executor, const SimulationConfig& config);
}

const std::vector<SimulationFactory>& builtin_simulations() {
  static const std::vector<SimulationFactory> list{
      {"grayscott", "Gray–Scott reaction–diffusion: two chemicals u and v on a periodic grid", &grayscott::make, false},
      {"lbm", "lattice-Boltzmann flow (D2Q9, BGK) past a cylinder in a channel: a Kármán vortex street", &lbm::make, true},
      {"nbody", "N-body gravity (all pairs, softened, leapfrog): a rotating disc, or two galaxies colliding",
       &nbody::make, false},
      {"grayscott3d", "Gray–Scott reaction–diffusion in a periodic volume (7-point stencil): --size WxHxD",
       &grayscott3d::make, false, 3},
      {"lbm3d", "lattice-Boltzmann flow (D3Q19, BGK) past a sphere in a duct: --size WxHxD, flow along x",
       &lbm3d::make, true, 3},
  };
  return list;
}

}  // namespace cuview::sim
