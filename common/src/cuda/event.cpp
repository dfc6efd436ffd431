#include "cuview/cuda/event.hpp"

#include <string>

#include "cuview/cuda/check.hpp"

namespace cuview::cuda {

Event::Event(EventKind kind) {
  const unsigned flags = kind == EventKind::interprocess    ? (cudaEventDisableTiming | cudaEventInterprocess)
                         : kind == EventKind::blocking_sync ? (cudaEventDisableTiming | cudaEventBlockingSync)
                                                            : cudaEventDefault;
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, flags), "cudaEventCreateWithFlags");
  owner_.reset(e);
}

Event Event::from_ipc_handle(const cudaIpcEventHandle_t& handle) {
  cudaEvent_t e = nullptr;
  check(cudaIpcOpenEventHandle(&e, handle), "cudaIpcOpenEventHandle (the daemon's frame event)");
  Event event;
  event.owner_.reset(e);
  return event;
}

cudaIpcEventHandle_t Event::ipc_handle() const {
  cudaIpcEventHandle_t h{};
  check(cudaIpcGetEventHandle(&h, get()), "cudaIpcGetEventHandle");
  return h;
}

}  // namespace cuview::cuda
