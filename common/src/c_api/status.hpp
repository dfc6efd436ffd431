// The C APIs' one way of failing (client: c_api.cpp; publisher: compute/publisher/c_api): what a
// C++ call throws becomes a cuview_status and the thread's last error message.
#pragma once

#include <exception>
#include <string>

#include "cuview/error.hpp"
#include "cuview/status.h"

namespace cuview::capi {
/// The calling thread's last error (cuview_last_error). One per process: it lives in
/// libcuview.so, which exports it to libcuview-publisher.so (both APIs' errors read the same way).
std::string& thread_error();

inline cuview_status status_of(cuview::Errc code) { return static_cast<cuview_status>(static_cast<int>(code) + 1); }

/// Runs `f`, turning what it throws into a status and the thread's last error.
template <class F>
inline cuview_status guarded(F&& f) {
  try {
    f();
    thread_error().clear();
    return CUVIEW_OK;
  } catch (const cuview::Error& e) {
    thread_error() = e.what();
    return status_of(e.code());
  } catch (const std::exception& e) {
    thread_error() = std::string("internal error: ") + e.what();
    return CUVIEW_INTERNAL;
  }
}

inline cuview_status null_argument(const char* call) {
  thread_error() = std::string(call) + ": a required argument is NULL";
  return CUVIEW_BAD_VALUE;
}
}  // namespace cuview::capi
