// The helpers both halves of the CUDA mechanisms use (the client library): device attributes and
// the descriptor of a mechanism that travels as one.
#include "share/cuda_slots.hpp"

#include "cuview/cuda/check.hpp"
#include "cuview/error.hpp"

namespace cuview::share {

int device_attribute(cudaDeviceAttr attribute, int device) {
  int v = 0;
  cuda::check(cudaDeviceGetAttribute(&v, attribute, device), "cudaDeviceGetAttribute");
  return v;
}

UniqueFd single_fd(const ImportSource& source) {
  auto fds = source.fetch_fds();
  if (fds.size() != 1)
    throw Error(Errc::bad_message, source.who + " sent " + std::to_string(fds.size()) + " descriptors for '" +
                                       source.handles.sharing + "' sharing, which needs exactly 1");
  return std::move(fds[0]);
}

}  // namespace cuview::share
