// pool's entry in the registry (its name stays known in builds without CUDA).
#include "share/pool/pool.hpp"

namespace cuview::share::pool {

#ifdef CUVIEW_HAVE_CUDA
const Mechanism kMechanism{"pool", Backend::cuda, "an IPC memory pool", &unsupported, &export_, &import};
#else
const Mechanism kMechanism{"pool", Backend::cuda, "an IPC memory pool", nullptr, nullptr, nullptr};
#endif

}  // namespace cuview::share::pool
