// Gray–Scott as cuview-compute runs it (its default parameters, seed 1), for the kernel and
// copy-path measurements: the same executor, simulation and parameters as the daemon's.
#pragma once

#include <memory>

#include "executor/executor.hpp"
#include "publisher/parameter_set.hpp"
#include "sims/grayscott/grayscott_setup.hpp"
#include "sims/simulation.hpp"

namespace cuview::bench {

struct BenchSimulation {
  std::unique_ptr<Executor> executor;
  std::unique_ptr<sim::Simulation> sim;
};

/// Built-in simulation `name` at w × h (× depth for a 3-D one) with `options`, its default
/// parameters, seed 1.
inline BenchSimulation make_builtin(const std::string& name, Executor::Kind kind, std::uint32_t w, std::uint32_t h,
                                    const std::map<std::string, std::string>& options = {}, std::uint32_t depth = 1) {
  BenchSimulation b;
#ifdef CUVIEW_HAVE_CUDA
  if (kind == Executor::Kind::cuda) b.executor = make_cuda_executor();
#endif
  if (!b.executor) b.executor = make_host_executor();
  for (const auto& f : sim::builtin_simulations())
    if (f.name == name) {
      sim::SimulationConfig config{w, h, options};
      config.depth = depth;
      b.sim = f.make(*b.executor, config);
    }
  const ParameterSet params(with_publisher_params(b.sim->params()), b.sim->presets());
  b.sim->set_params(params.values());
  b.sim->reset(1);
  return b;
}

inline BenchSimulation make_grayscott(Executor::Kind kind, std::uint32_t n,
                                      std::uint32_t steps_per_launch = sim::grayscott::kDefaultStepsPerLaunch) {
  BenchSimulation b;
#ifdef CUVIEW_HAVE_CUDA
  if (kind == Executor::Kind::cuda) b.executor = make_cuda_executor();
#endif
  if (!b.executor) b.executor = make_host_executor();
  const sim::SimulationConfig config{n, n, {{"steps_per_launch", std::to_string(steps_per_launch)}}};
  for (const auto& f : sim::builtin_simulations())
    if (f.name == "grayscott") b.sim = f.make(*b.executor, config);
  const ParameterSet params(with_publisher_params(b.sim->params()), b.sim->presets());
  b.sim->set_params(params.values());
  b.sim->reset(1);
  return b;
}

}  // namespace cuview::bench
