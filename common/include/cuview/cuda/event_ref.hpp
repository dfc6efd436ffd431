// A CUDA event someone else owns, passed by value (NVIDIA CCCL's cuda::event_ref). Needs no CUDA
// header; a cudaEvent_t converts to it.
#pragma once

#include <cstddef>

struct CUevent_st;  // cudaEvent_t is CUevent_st*

namespace cuview::cuda {

class EventRef {
 public:
  /// Refers to `event` (a cudaEvent_t); not owned.
  constexpr EventRef(CUevent_st* event) noexcept : event_(event) {}  // NOLINT: implicit, as CCCL's
  EventRef(int) = delete;
  EventRef(std::nullptr_t) = delete;

  [[nodiscard]] constexpr CUevent_st* get() const noexcept { return event_; }
  friend constexpr bool operator==(EventRef, EventRef) noexcept = default;

 private:
  CUevent_st* event_;
};

}  // namespace cuview::cuda
