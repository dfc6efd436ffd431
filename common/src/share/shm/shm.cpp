// shm's entry in the registry.
#include "share/shm/shm.hpp"

namespace cuview::share::shm {

const Mechanism kMechanism{"shm", Backend::host, "POSIX shared memory", nullptr, &export_, &import};

}  // namespace cuview::share::shm
