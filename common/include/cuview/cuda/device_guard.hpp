// Working on a GPU without moving the caller: every cuview call that touches GPU N makes that
// GPU's primary context current for the call (cuCtxPushCurrent) and pops it after. The CUDA
// runtime's current device of the calling thread is never set, so a program (PyTorch, CuPy, a
// simulation embedding the publisher) that made GPU 1 current finds GPU 1 current after every
// call, and no thread or process gets a context on a GPU it does not use. Only built with CUDA
// (CUVIEW_HAVE_CUDA).
#pragma once

namespace cuview::cuda {

/// Makes `device`'s primary context — the one the CUDA runtime itself uses for that device, so
/// runtime calls inside the scope work on it — current on this thread for the guard's lifetime,
/// then restores whatever was current before (a context, or none). The primary context is
/// retained once per device for the life of the process. Not movable; one per scope. Throws
/// Error(cuda) naming the device, or Error(unsupported) where the driver lacks the calls.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard();
};

}  // namespace cuview::cuda
