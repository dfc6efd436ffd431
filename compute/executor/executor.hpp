// Where a simulation runs: the host CPU, or one CUDA device with its stream. The executor also
// seals a frame (checksum and trailer) where the slot lives, so the publisher never touches
// slot memory itself.
//
// Threading: used from the publisher's loop thread only. The CUDA executor makes its device
// current only inside its own calls (a guard restores the caller's device), so a program that
// embeds the publisher keeps its own current device.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cuview/frame_layout.hpp"

namespace cuview {

class Executor {
 public:
  enum class Kind { host, cuda };
  virtual ~Executor() = default;
  [[nodiscard]] virtual Kind kind() const = 0;
  [[nodiscard]] std::string name() const { return kind() == Kind::cuda ? "cuda" : "host"; }
  /// The CPU or GPU, in words ("NVIDIA H100 80GB HBM3 (PCI 0000:19:00.0)").
  [[nodiscard]] virtual std::string device() const = 0;
  /// CUDA: the device ordinal and the stream (a cudaStream_t) every operation is queued on, in
  /// order: steps, field writes, seal, the slot's event. Host: -1 and null.
  [[nodiscard]] virtual int device_id() const { return -1; }
  [[nodiscard]] virtual void* stream() const { return nullptr; }
  /// Ends a batch of steps. CUDA: blocks while two earlier batches are still queued, so the loop
  /// stays responsive and never runs far ahead of the GPU. Host: nothing to do.
  virtual void end_batch() {}
  /// Writes the trailer of a slot whose fields are written (queued after them on CUDA): the frame
  /// checksum over the fields, `seq`, `step` and the time it was complete.
  virtual void seal(void* slot, const SlotLayout& layout, std::uint64_t seq, std::uint64_t step) = 0;
  /// Blocks until everything queued has run.
  virtual void finish() {}
};

/// The host CPU: everything runs inline on the calling thread.
std::unique_ptr<Executor> make_host_executor();
#ifdef CUVIEW_HAVE_CUDA
/// The first usable CUDA device. Throws Error(cuda) saying why when there is none.
std::unique_ptr<Executor> make_cuda_executor();
#endif

}  // namespace cuview
