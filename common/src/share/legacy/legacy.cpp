// legacy's entry in the registry (its name stays known in builds without CUDA).
#include "share/legacy/legacy.hpp"

namespace cuview::share::legacy {

#ifdef CUVIEW_HAVE_CUDA
const Mechanism kMechanism{"legacy", Backend::cuda, "cudaIpcGetMemHandle", &unsupported, &export_, &import};
#else
const Mechanism kMechanism{"legacy", Backend::cuda, "cudaIpcGetMemHandle", nullptr, nullptr, nullptr};
#endif

}  // namespace cuview::share::legacy
