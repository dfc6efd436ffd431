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
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cuview/cuda/stream_ref.hpp"
#include "cuview/error.hpp"
#include "cuview/frame_layout.hpp"
#include "cuview/schema.hpp"

namespace cuview {

/// What the executor can tell about a pointer a program declared.
struct BufferLocation {
  bool host_accessible = true;     ///< the CPU can read it (host memory, pinned or managed)
  bool device_accessible = false;  ///< the executor's GPU can read it (device or managed memory)
  int device = -1;                 ///< for device memory: the GPU it is on
};

/// Where a kernel writing a whole field of a frame adds its words' checksum terms (see
/// Executor::sum_into): device memory on CUDA, host memory on the host backend.
struct FieldChecksum {
  std::uint64_t* sum = nullptr;  ///< the frame's running checksum
  std::uint64_t first_word = 0;  ///< the field's first word: its byte offset in the slot / 4
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
  /// Begins writing the frame in `slot` (queued on `stream`, before its fields): its checksum
  /// starts at zero and no field is summed yet. Then copy(), a writer's own kernels (sum_into())
  /// and seal() write the frame. `held`: the blocks the frame holds (has_block); the others are
  /// left out of its checksum, whatever is written there.
  virtual void begin_frame(void* slot, const SlotLayout& layout, cuda::StreamRef stream,
                           std::uint64_t held = kAllBlocks) = 0;
  /// Copies `bytes` from `src` (host or device memory) to `dst` (slot memory), queued on `stream`.
  /// A copy of one whole field of the frame begun, from memory this executor reads directly (its
  /// GPU's memory on CUDA), adds the field's checksum terms as it goes: the field costs one read
  /// and one write, and seal() does not read it again.
  virtual void copy(void* dst, const void* src, std::size_t bytes, cuda::StreamRef stream) = 0;
  /// For a writer whose own kernel writes the whole field `target` of the frame begun: where
  /// that kernel adds checksum_term(bits, first_word + i) of every 32-bit word i it writes, each
  /// exactly once (add_checksum() in cuview/cuda/checksum.cuh sums a block's terms with one atomic).
  /// seal() then leaves that field alone. Throws Error(bad_value) when `target` is not a field of
  /// the frame begun; with no frame begun (fields written elsewhere, as tests do) the terms go to
  /// a scratch word.
  FieldChecksum sum_into(const FieldTarget& target);
  /// Finishes the frame begun, queued on `stream` after its fields: the checksum over every field
  /// not summed while it was written, then the trailer (seq, step, the time it was complete).
  virtual void seal(std::uint64_t seq, std::uint64_t step, cuda::StreamRef stream) = 0;
  /// What each frame sealed since the last call cost, in seconds, oldest first, for the frames
  /// whose work has finished (the cost budget, publisher/pacer.hpp): the time from begin_frame()
  /// to the end of seal()'s work where it ran, timed by events on the frame's stream on CUDA and
  /// by the calling thread's clock on the host. Never waits. NaN for a frame that could not be
  /// timed (more than kTimedFrames in flight).
  [[nodiscard]] virtual std::vector<double> frame_costs() = 0;
  static constexpr std::size_t kTimedFrames = 16;
  /// Runs `steps`, which queues `n` plain steps of the simulation on the executor's stream, timed
  /// where they run (two timing events on CUDA, read later and never waited on; the clock on the
  /// host): the simulation's own time per step, which a frame written inside its steps does not
  /// count as publishing (frame_holds_steps). While the previous timing is unread, runs untimed.
  virtual void timed_steps(std::uint32_t n, const std::function<void()>& steps) {
    (void)n;
    steps();
  }
  /// The frame begun holds `steps` of the simulation's own steps (Simulation::step_and_write):
  /// frame_costs() counts its time less that many steps at the latest timed rate (all of it until
  /// steps have been timed: the budget errs on the side of the run).
  void frame_holds_steps(std::uint32_t steps) { frame_.steps = steps; }
  /// For a simulation writing the frame begun in its own launch: the frame's time starts here, at
  /// the launch that writes it, which holds `steps` of its steps (the batch's steps before it are
  /// not the frame's; narrower than frame_holds_steps, so less rides on the timed rate). Queued on
  /// `stream` (the frame's).
  virtual void frame_step_begins(std::uint32_t steps, cuda::StreamRef stream) {
    (void)stream;
    frame_.steps = steps;
  }
  /// Blocks until everything queued on the executor's stream has run.
  virtual void finish() {}
  /// The bytes free on its GPU (cudaMemGetInfo), or 0 on the host backend, whose memory is the
  /// system's.
  [[nodiscard]] virtual std::size_t free_device_memory() const { return 0; }
  /// Host memory the executor copies to and from at full speed: pinned on CUDA.
  [[nodiscard]] virtual std::shared_ptr<std::byte> host_memory(std::size_t bytes) const {
    return {new std::byte[bytes], std::default_delete<std::byte[]>()};
  }

 protected:
  /// The frame being written, between begin_frame() and seal().
  struct Frame {
    std::byte* base = nullptr;
    const SlotLayout* layout = nullptr;
    /// Per field: nothing more to sum — its terms were added as it was written, or the frame
    /// does not hold it (`held`).
    std::vector<char> summed;
    std::uint64_t held = kAllBlocks;
    std::uint32_t steps = 0;  ///< the simulation's own steps inside it (frame_holds_steps)
  };
  void open_frame(void* slot, const SlotLayout& layout, std::uint64_t held) {
    frame_.base = static_cast<std::byte*>(slot);
    frame_.layout = &layout;
    frame_.held = held;
    frame_.steps = 0;
    frame_.summed.resize(layout.fields.size());
    for (std::size_t i = 0; i < layout.fields.size(); ++i) frame_.summed[i] = has_block(held, i) ? 0 : 1;
  }
  /// The field of the open frame that [dst, dst + bytes) is exactly, when the frame holds it; else -1
  /// (a field it does not hold is copied without summing).
  [[nodiscard]] int held_field(const void* dst, std::size_t bytes) const {
    const int f = whole_field(dst, bytes);
    return f >= 0 && has_block(frame_.held, static_cast<std::size_t>(f)) ? f : -1;
  }
  /// The field of the open frame that [dst, dst + bytes) is exactly, or -1.
  [[nodiscard]] int whole_field(const void* dst, std::size_t bytes) const {
    if (frame_.layout == nullptr) return -1;
    const auto* d = static_cast<const std::byte*>(dst);
    for (std::size_t i = 0; i < frame_.layout->fields.size(); ++i) {
      const auto& f = frame_.layout->fields[i];
      if (d == frame_.base + f.offset && bytes == f.bytes) return static_cast<int>(i);
    }
    return -1;
  }
  /// The open frame's running checksum (where sum_into() points kernels); with no frame open, a
  /// scratch word nobody reads.
  [[nodiscard]] virtual std::uint64_t* checksum_sink() = 0;
  /// A word nobody reads, where the terms of a field the frame does not hold go.
  [[nodiscard]] virtual std::uint64_t* checksum_sink_for_nothing() = 0;
  Frame frame_;

 public:
  // Virtual functions added since plugin ABI 7 go here, after all of 7's: a plugin built against
  // ABI 7 (still loaded, sims/plugin.hpp) calls the ones above by their places in the vtable.
  /// Copies a section of a program's buffer (`section`: the field's cells among others, such as
  /// the interior of an array with ghost cells) to `dst`, packed, queued on `stream`. A section of
  /// this executor's own memory that makes a whole field of the frame begun adds its checksum
  /// terms as it goes, as copy() does.
  virtual void copy_section(void* dst, const void* src, const Section& section, cuda::StreamRef stream) = 0;
};

inline FieldChecksum Executor::sum_into(const FieldTarget& target) {
  if (frame_.layout == nullptr) return {checksum_sink(), 0};  // fields written outside a frame: summed into nothing
  const int i = whole_field(target.data, (target.bytes + 3) / 4 * 4);
  if (i >= 0 && !has_block(frame_.held, static_cast<std::size_t>(i)))
    return {checksum_sink_for_nothing(), 0};  // a field the frame does not hold: its terms go nowhere
  if (i < 0)
    throw Error(Errc::bad_value, "sum_into: the target of " + std::to_string(target.bytes) +
                                     " bytes is not a whole field of the frame being written; call it from "
                                     "write_fields() with one of its targets");
  frame_.summed[static_cast<std::size_t>(i)] = 1;
  return {checksum_sink(), frame_.layout->fields[static_cast<std::size_t>(i)].offset / 4};
}

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
