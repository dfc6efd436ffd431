#include <cstdlib>
#include <string>

#include "parts/comm.hpp"

namespace cuview::parts {

int launched_ranks() noexcept {
  // Open MPI's mpirun, then PMIx launchers, then MPICH's and Slurm's PMI.
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') return std::atoi(v);
  }
  return 0;
}

}  // namespace cuview::parts
