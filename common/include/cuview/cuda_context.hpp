// Working on a GPU without moving the caller: a client library call that imports or reads a
// frame of GPU N makes that GPU's primary context current for the call (cuCtxPushCurrent) and
// pops it after. The CUDA runtime's current device of the calling thread is never set, so a
// program (PyTorch, CuPy) that made GPU 1 current finds GPU 1 current after every call, and a
// process that never used GPU 0 gets no context there. Only built with CUDA (CUVIEW_HAVE_CUDA).
#pragma once

#include <utility>

struct CUctx_st;

namespace cuview::cuda {

/// A retained reference to `device`'s primary context — the context the CUDA runtime itself
/// uses for that device, so runtime calls made while it is current work on it. Move-only; the
/// reference is released on destruction (the context lives on while the runtime uses it).
class PrimaryContext {
 public:
  PrimaryContext() noexcept = default;
  /// Throws Error(cuda) naming the device, or Error(unsupported) where the driver lacks the calls.
  static PrimaryContext retain(int device);
  PrimaryContext(PrimaryContext&& o) noexcept { swap(o); }
  PrimaryContext& operator=(PrimaryContext&& o) noexcept {
    PrimaryContext(std::move(o)).swap(*this);
    return *this;
  }
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;
  ~PrimaryContext();
  [[nodiscard]] CUctx_st* get() const noexcept { return context_; }
  [[nodiscard]] int device() const noexcept { return device_; }
  explicit operator bool() const noexcept { return context_ != nullptr; }

 private:
  void swap(PrimaryContext& o) noexcept { std::swap(context_, o.context_), std::swap(device_, o.device_); }
  CUctx_st* context_ = nullptr;
  int device_ = -1;
};

/// Makes `context` current on this thread for the scope and restores whatever was current before
/// (a context, or none). Not movable; use one per call. Throws Error(cuda) if the push fails.
class ContextScope {
 public:
  explicit ContextScope(const PrimaryContext& context);
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
  ~ContextScope();
};

}  // namespace cuview::cuda
