// vmm's entry in the registry (its name stays known in builds without CUDA).
#include "share/vmm/vmm.hpp"

namespace cuview::share::vmm {

#ifdef CUVIEW_HAVE_CUDA
const Mechanism kMechanism{"vmm", Backend::cuda, "cuMemCreate and a file descriptor", &unsupported, &export_, &import};
#else
const Mechanism kMechanism{"vmm", Backend::cuda, "cuMemCreate and a file descriptor", nullptr, nullptr, nullptr};
#endif

}  // namespace cuview::share::vmm
