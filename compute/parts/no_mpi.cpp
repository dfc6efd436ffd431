// cuview-compute built without MPI: a launch by mpirun is refused with what to do.
#include "cuview/error.hpp"
#include "parts/comm.hpp"

namespace cuview::parts {
std::unique_ptr<Comm> init_mpi(int*, char***) {
  throw Error(Errc::unsupported,
              "this cuview-compute was built without MPI, so it cannot run as one of several ranks; install "
              "Open MPI's development files (Debian: libopenmpi-dev) and rebuild");
}
}  // namespace cuview::parts
