// A CUDA stream someone else owns, passed by value (NVIDIA CCCL's cuda::stream_ref): the type every
// cuview interface takes where work is queued. Needs no CUDA header, so the publisher's and the
// client's public headers use it in builds without the toolkit; a cudaStream_t converts to it.
#pragma once

#include <cstddef>

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace cuview::cuda {

class StreamRef {
 public:
  /// The legacy default stream (what a null cudaStream_t means).
  constexpr StreamRef() noexcept = default;
  /// Refers to `stream` (a cudaStream_t); not owned, so it must outlive the work queued through it.
  constexpr StreamRef(CUstream_st* stream) noexcept : stream_(stream) {}  // NOLINT: implicit, as CCCL's
  /// `0` and `nullptr` say nothing about which stream was meant: write StreamRef{} for the default.
  StreamRef(int) = delete;
  StreamRef(std::nullptr_t) = delete;

  [[nodiscard]] constexpr CUstream_st* get() const noexcept { return stream_; }
  [[nodiscard]] constexpr bool is_default() const noexcept { return stream_ == nullptr; }
  friend constexpr bool operator==(StreamRef, StreamRef) noexcept = default;

 private:
  CUstream_st* stream_ = nullptr;
};

}  // namespace cuview::cuda
