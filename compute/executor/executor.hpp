// Where a simulation runs and where frames are written: the host CPU, or one CUDA device. The
// executor also copies a program's buffers into a slot and seals a frame (checksum and trailer)
// where the slot lives, so the publisher never touches slot memory itself.
//
// Streams: every operation that takes a `stream` (a cuda::StreamRef; ignored on the host) is queued
// on it in order after the work already there. The CUDA executor makes its device current only
// inside its own calls (a guard restores the caller's device), so a program that embeds the
// publisher keeps its own current device.
// Threading: one thread at a time (the publisher's loop, or the program's thread that publishes).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cuview/cuda/stream_ref.hpp"
#include "cuview/frame_layout.hpp"
#include "cuview/schema.hpp"

namespace cuview {

/// What the executor can tell about a pointer a program declared.
struct BufferLocation {
  bool host_accessible = true;     ///< the CPU can read it (host memory, pinned or managed)
  bool device_accessible = false;  ///< the executor's GPU can read it (device or managed memory)
  int device = -1;                 ///< for device memory: the GPU it is on
};

class Executor {
 public:
  enum class Kind { host, cuda };
  virtual ~Executor() = default;
  [[nodiscard]] virtual Kind kind() const = 0;
  [[nodiscard]] std::string name() const { return kind() == Kind::cuda ? "cuda" : "host"; }
  /// The CPU or GPU, in words ("NVIDIA H100 80GB HBM3 (PCI 0000:19:00.0)").
  [[nodiscard]] virtual std::string device() const = 0;
  /// CUDA: the device ordinal and the executor's own stream, on which a simulation queues its
  /// steps and field writes (`stream().get()` is its cudaStream_t). Host: -1 and the default
  /// stream, which nothing uses.
  [[nodiscard]] virtual int device_id() const { return -1; }
  [[nodiscard]] virtual cuda::StreamRef stream() const { return {}; }
  /// Ends a batch of steps. CUDA: blocks while two earlier batches are still queued, so the loop
  /// stays responsive and never runs far ahead of the GPU. Host: nothing to do.
  virtual void end_batch() {}
  /// Where `data` lives. Throws Error(cuda) when the CUDA runtime cannot say.
  [[nodiscard]] virtual BufferLocation locate(const void* data) const = 0;
  /// Copies `bytes` from `src` (host or device memory) to `dst` (slot memory), queued on `stream`.
  virtual void copy(void* dst, const void* src, std::size_t bytes, cuda::StreamRef stream) = 0;
  /// Writes the trailer of a slot whose fields are written (queued after them on `stream`): the
  /// frame checksum over the fields, `seq`, `step` and the time it was complete.
  virtual void seal(void* slot, const SlotLayout& layout, std::uint64_t seq, std::uint64_t step,
                    cuda::StreamRef stream) = 0;
  /// Blocks until everything queued on the executor's stream has run.
  virtual void finish() {}
  /// Host memory the executor copies to and from at full speed: pinned on CUDA.
  [[nodiscard]] virtual std::shared_ptr<std::byte> host_memory(std::size_t bytes) const {
    return {new std::byte[bytes], std::default_delete<std::byte[]>()};
  }
};

/// The host CPU: everything runs inline on the calling thread.
std::unique_ptr<Executor> make_host_executor();
#ifdef CUVIEW_HAVE_CUDA
/// The GPU used when none is named: the calling thread's current device if it is usable, else
/// the first usable one (else the current device, whose probe then says what is wrong).
int default_device() noexcept;
/// CUDA device `device` (-1: default_device()). Throws Error(cuda) saying why it cannot be used;
/// a device that does not exist is refused naming the ones that do.
std::unique_ptr<Executor> make_cuda_executor(int device = -1);
#endif
/// `backend` "host", "cuda" or "auto" (CUDA where a device is usable, else the host; the choice
/// and its reason are logged) on `device` (-1: default_device()). Throws Error(cuda) for "cuda",
/// or for a device named by number, where it cannot run, saying why; Error(bad_value) for a
/// device named with the host backend.
std::unique_ptr<Executor> make_executor(const std::string& backend, int device = -1);

}  // namespace cuview
