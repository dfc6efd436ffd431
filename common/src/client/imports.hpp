// What a frame needs to stay readable, shared by a connection and its Frames (so that a Frame
// outliving its connection keeps the memory valid): the slots as a sharing mechanism imported them
// and the ring holding them (a local Client), or one slot of host memory a RemoteClient filled
// with fetched fields.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuview/frame.hpp"
#include "cuview/frame_layout.hpp"
#include "cuview/protocol.hpp"
#include "cuview/ring.hpp"
#include "cuview/share/imported_slots.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include "cuview/cuda/device_buffer.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "cuview/cuda/event.hpp"
#include "cuview/cuda/stream.hpp"
#endif

namespace cuview {
namespace detail {
/// Everything a frame needs to stay readable: shared by the Client and its Frames, so that a
/// Frame outliving its Client keeps the mappings valid.
struct Imports {
  std::string backend;  ///< "host" or "cuda"; "host" for a fetched frame
  SlotLayout layout;
  /// The publisher's fields (description): a packed frame's checksum covers their packed bytes
  /// (Frame::every, proto::packed_field).
  std::vector<proto::FieldDesc> fields;
  RingReader ring;  ///< maps nothing for a fetched frame (releasing a slot then does nothing)
  // The slots' memory as the sharing mechanism imported it (share/registry.hpp).
  std::unique_ptr<share::ImportedSlots> slots;
#ifdef CUVIEW_HAVE_CUDA
  // Every CUDA call on the imports runs under a cuda::DeviceGuard of this device: its primary
  // context pushed for the call, the caller's current device never set.
  int device = -1;
  cuda::Stream stream;
  /// Slot `slot`'s interprocess event, opened the first time it is asked for (with the slot's
  /// memory: a client that takes one frame opens one). Throws Error(cuda).
  const cuda::Event& event(std::uint32_t slot) const {
    const std::lock_guard lock(events_mutex);
    if (!events[slot]) {
      cuda::DeviceGuard guard(device);
      events[slot] = cuda::Event::from_ipc_handle(event_handles[slot]);
    }
    return events[slot];
  }
  std::vector<cudaIpcEventHandle_t> event_handles;  ///< one per slot
  mutable std::vector<cuda::Event> events;           ///< opened on demand (event())
  mutable std::mutex events_mutex;
  /// The word Frame::verify sums a frame into on the GPU: made by the first verify, used under
  /// verify_mutex (one verify at a time shares the stream and the word).
  mutable cuda::DeviceBuffer verify_sum;
  mutable std::mutex verify_mutex;
#endif
  [[nodiscard]] bool is_cuda() const { return backend == "cuda"; }
  /// Maps slot `slot`'s memory (and, on CUDA, opens its event) if not yet. Throws Error.
  void map(std::uint32_t slot) const {
    (void)slots->slot(slot);
#ifdef CUVIEW_HAVE_CUDA
    if (is_cuda()) (void)event(slot);
#endif
  }

  Imports() = default;
  Imports(const Imports&) = delete;
  Imports& operator=(const Imports&) = delete;
  ~Imports() {
#ifdef CUVIEW_HAVE_CUDA
    if (device < 0) return;
    // Unmapped and destroyed in their own context, so that a thread that never used the GPU
    // (a Python finaliser, the viewer's UI thread) neither needs nor makes a current context.
    try {
      cuda::DeviceGuard guard(device);
      release_cuda();
    } catch (...) {
      release_cuda();
    }
#endif
  }

#ifdef CUVIEW_HAVE_CUDA
  void release_cuda() noexcept {
    events.clear();
    verify_sum = cuda::DeviceBuffer();
    slots.reset();
    stream = cuda::Stream();
  }
#endif
};

/// Makes Frames and FrameGroups (their constructors are private to the client library).
struct FrameAccess {
  static Frame frame(std::shared_ptr<const Imports> imports, const FrameInfo& info) noexcept {
    return Frame(std::move(imports), info);
  }
  static FrameGroup group(std::shared_ptr<const GroupLayout> layout, std::vector<Frame> frames, std::uint64_t step) noexcept {
    return FrameGroup(std::move(layout), std::move(frames), step);
  }
};

/// The slot layout a description states, checked before anything is mapped: fields in order,
/// aligned, whole words, inside the slot and before the trailer. Throws Error(bad_message).
SlotLayout layout_of(const proto::DescribeResult& d);

/// A frame of host memory laid out as `d`'s slot (fields at their offsets, then the trailer):
/// what a remote client fills with fetched fields. Its Frame reads it as a host-backend slot.
struct FetchedFrame {
  std::shared_ptr<Imports> imports;
  std::byte* data = nullptr;  ///< the slot's first byte, zeroed
};
FetchedFrame make_fetched_frame(const proto::DescribeResult& d);
/// The Frame of a filled FetchedFrame: writes its trailer (seq, step and the checksum of what
/// arrived) first.
Frame finish_fetched_frame(FetchedFrame f, const FrameInfo& info);
}  // namespace detail
}  // namespace cuview
