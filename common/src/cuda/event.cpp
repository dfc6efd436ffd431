#include "cuview/cuda/event.hpp"

#include <cstring>
#include <string>

#include "cuview/cuda/check.hpp"
#include "cuview/error.hpp"

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

std::vector<char> to_bytes(const cudaIpcEventHandle_t& h) { return {h.reserved, h.reserved + sizeof h.reserved}; }

cudaIpcEventHandle_t event_handle_from(const std::vector<char>& bytes) {
  cudaIpcEventHandle_t h{};
  if (bytes.size() != sizeof h.reserved)
    throw Error(Errc::bad_message, "CUDA IPC event handle has " + std::to_string(bytes.size()) + " bytes, expected " +
                                       std::to_string(sizeof h.reserved));
  std::memcpy(h.reserved, bytes.data(), bytes.size());
  return h;
}

}  // namespace cuview::cuda
