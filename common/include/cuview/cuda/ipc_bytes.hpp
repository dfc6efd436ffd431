// CUDA's interprocess handles (cudaIpcMemHandle_t, cudaIpcEventHandle_t: 64 opaque bytes) as the
// bytes the `handles` reply carries, and back. Only built with CUDA (CUVIEW_HAVE_CUDA).
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "cuview/error.hpp"

namespace cuview::cuda {

template <class IpcHandle>
std::vector<char> to_bytes(const IpcHandle& h) {
  return {h.reserved, h.reserved + sizeof h.reserved};
}

/// The handle in `bytes`; Error(bad_message) naming `what` ("CUDA IPC event handle") when they
/// are not exactly one handle's size.
template <class IpcHandle>
IpcHandle from_bytes(const std::vector<char>& bytes, const char* what) {
  IpcHandle h{};
  if (bytes.size() != sizeof h.reserved)
    throw Error(Errc::bad_message, std::string(what) + " has " + std::to_string(bytes.size()) + " bytes, expected " +
                                       std::to_string(sizeof h.reserved));
  std::memcpy(h.reserved, bytes.data(), bytes.size());
  return h;
}

}  // namespace cuview::cuda
