// cuview-sims-manifest FILE: writes, as C++ source, the built-in simulations' declarations as JSON
// (what `cuview-ctl sims` prints), each made on the host at a small grid just to read what it
// declares: fields, parameters with ranges, presets. Run at build time (compute/CMakeLists.txt), so
// that cuview-ctl lists the simulations without linking them.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "executor/executor.hpp"
#include "publisher/parameter_set.hpp"
#include "sims/simulation.hpp"

using namespace cuview;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: cuview-sims-manifest OUTPUT.cpp\n");
    return 2;
  }
  try {
    nlohmann::json out = nlohmann::json::array();
    auto host = make_host_executor();
    for (const auto& f : sim::builtin_simulations()) {
      const auto s = f.make(*host, sim::SimulationConfig{16, 16, {}});
      const ParameterSet params(with_publisher_params(s->params()), s->presets());
      nlohmann::json j{{"name", f.name}, {"help", f.help}, {"axes", f.axes}};
      for (const auto& field : s->fields())
        j["fields"].push_back({{"name", field.name},
                               {"dtype", sim::to_string(field.dtype)},
                               {"components", field.components},
                               {"help", field.help}});
      for (const auto& p : params.describe())
        j["params"].push_back({{"name", p.name},
                               {"default", p.value},
                               {"min", p.min},
                               {"max", p.max},
                               {"integer", p.integer},
                               {"help", p.help}});
      for (const auto& p : params.presets()) j["presets"].push_back(p.name);
      out.push_back(j);
    }
    std::ofstream file(argv[1]);
    file << "// Made by cuview-sims-manifest (compute/tools/sims_manifest.cpp) when cuview was built.\n"
         << "#include \"builtin_simulations.hpp\"\n"
         << "const char* const cuview::ctl::kBuiltinSimulationsJson = R\"json(" << out.dump(2) << ")json\";\n";
    if (!file.flush()) {
      std::fprintf(stderr, "cuview-sims-manifest: cannot write %s\n", argv[1]);
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuview-sims-manifest: %s\n", e.what());
    return 1;
  }
  return 0;
}
