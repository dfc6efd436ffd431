// A frame a client holds: one published step of one publisher's fields, readable until released,
// and the frames of one step from every part of a run (FrameGroup). Locally a Frame is the
// publisher's own slot, zero-copy; from a remote client it is the frame's fields fetched into host
// memory at full resolution (RemoteClient::next_frame): the same calls read both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cuview/assembly.hpp"
#include "cuview/cuda/stream_ref.hpp"
#include "cuview/frame_layout.hpp"
#include "cuview/protocol.hpp"
#include "cuview/ring.hpp"

namespace cuview {

namespace detail {
struct Imports;
struct GroupLayout;
struct FrameAccess;  ///< how the client library makes Frames and FrameGroups
}  // namespace detail

/// Every call on a Client or Frame leaves the calling thread's current CUDA device as it found
/// it: GPU work runs in the frame's GPU's primary context, pushed for the call and popped after.
///
/// One frame held by this client: the daemon will not overwrite its slot until the Frame is
/// destroyed (or the client process dies). Move-only; a moved-from Frame releases nothing.
/// On CUDA, destroy it only after the GPU work that reads device_slot() has completed
/// (synchronize that stream first): releasing the slot lets the daemon write it again.
class Frame {
 public:
  Frame(Frame&& other) noexcept;
  Frame& operator=(Frame&& other) noexcept;
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
  ~Frame();  // releases the slot; never throws

  [[nodiscard]] const FrameInfo& info() const noexcept { return info_; }
  /// Whether the frame holds block `block` (a field's index; particle attributes follow the
  /// fields): it holds what some reader read when it was published (Client::read_fields); the
  /// bytes of a block it does not hold are nobody's.
  [[nodiscard]] bool holds(std::size_t block) const noexcept { return has_block(info_.fields, block); }
  /// 1: every field holds every cell. k >= 2: the frame was written for readers that take every
  /// k-th cell (Client::read_every): each field of the 3-D grid holds only the cells at multiples
  /// of k along each axis, packed from its offset — a grid of ceil(n/k) cells per axis, x fastest
  /// (packed_field()); BrickSampler reads it as such.
  [[nodiscard]] std::uint32_t every() const noexcept { return info_.every; }
  /// Host backend: the field's data in shared memory (row-major, `description().fields`);
  /// nullptr when the frame does not hold it (holds()). CUDA backend: nullptr (use device_slot()).
  [[nodiscard]] const float* host_field(std::size_t field) const noexcept;
  /// CUDA backend: the slot's device pointer in this process (fields at their offsets); the data
  /// is complete once work on a stream made to wait with wait_on() runs. Host backend: nullptr.
  [[nodiscard]] const void* device_slot() const noexcept;
  /// CUDA backend: the ordinal, in this process, of the GPU the frame is on. Host backend: -1.
  [[nodiscard]] int device() const noexcept;
  /// The slot's first byte in this process: device memory on CUDA, shared memory on the host.
  [[nodiscard]] const void* slot_data() const noexcept;
  /// CUDA backend: makes `stream` (a cudaStream_t converts) wait for the daemon's interprocess event of
  /// this frame, without blocking the host. Host backend: nothing to wait for. Costly to the
  /// publisher: a stream of another context waiting on its event makes the GPU switch contexts
  /// (~2 % of a simulation at 60 Hz on an H100 without MPS); prefer wait() and copies.
  void wait_on(cuda::StreamRef stream) const;
  /// Blocks the calling thread until the frame's data is complete (CUDA: waits on the daemon's
  /// interprocess event from the host, no GPU work in this process). Host backend: returns at once.
  void wait() const;
  /// Whether wait() would return at once: the frame's data is complete (CUDA: the interprocess
  /// event queried from the host, no GPU work in this process). Host backend: true. A viewer that
  /// must stay responsive (redraw what it holds while the frame is still being written) asks this
  /// instead of blocking in wait().
  [[nodiscard]] bool ready() const;
  /// The slot's trailer (seq, step, checksum, done_ns), after wait(). On CUDA this copies 32
  /// bytes from the device.
  [[nodiscard]] SlotTrailer trailer() const;
  /// Copies the whole slot (fields and trailer) to `dst`, which must hold slot_bytes. On CUDA it
  /// waits for the frame's interprocess event on the host first, then copies with the copy engine. Throws Error(cuda |
  /// bad_value).
  void copy_to_host(std::span<std::byte> dst) const;
  /// Copies dst.size() bytes of the slot from byte `offset` (a field, an attribute) to `dst`, as
  /// above. Throws Error(out_of_range) when the range leaves the slot.
  void copy_to_host(std::size_t offset, std::span<std::byte> dst) const;
  /// CUDA backend: waits until all GPU work this process queued on the frame's GPU is done (call
  /// it before releasing a frame your kernels read). Host backend: returns at once.
  void synchronize_device() const;
  /// Checks the frame is intact: trailer sequence and step match, and the checksum over every
  /// field it holds matches the publisher's (no simulation's value range is assumed). Summed where
  /// the frame lies: on CUDA by a kernel on the frame's GPU (queued on this process's stream for
  /// the frame; the caller's current GPU stays as it was), so a 26 GB slot takes milliseconds.
  /// Empty when good, otherwise a sentence saying what is wrong. Throws Error(cuda) when the GPU
  /// fails the sum.
  [[nodiscard]] std::optional<std::string> verify() const;

 private:
  friend struct detail::FrameAccess;
  Frame(std::shared_ptr<const detail::Imports> imports, const FrameInfo& info) noexcept;
  std::shared_ptr<const detail::Imports> imports_;
  FrameInfo info_;
};

/// The frames of one step from every part of a publisher decomposed into parts (Group::next):
/// part k's Frame is its block of the global grid, which starts at part_desc(k)'s offset. Every
/// frame is held until the FrameGroup is destroyed, then all are released together. Move-only;
/// one thread at a time. It stays readable after its Group is gone (as a Frame after its Client).
class FrameGroup {
 public:
  FrameGroup(FrameGroup&&) noexcept;
  FrameGroup& operator=(FrameGroup&&) noexcept;
  ~FrameGroup();  // releases every part's slot; never throws

  /// The step every part's frame shows.
  [[nodiscard]] std::uint64_t step() const noexcept { return step_; }
  /// Parts, one frame each.
  [[nodiscard]] std::size_t size() const noexcept { return frames_.size(); }
  /// Part k's frame (its FrameInfo, its block's data). Throws Error(out_of_range).
  [[nodiscard]] const Frame& part(std::size_t k) const;
  [[nodiscard]] const std::vector<Frame>& frames() const noexcept { return frames_; }
  /// Where part k's block lies in the global grid. Throws Error(out_of_range).
  [[nodiscard]] const proto::PartDesc& part_desc(std::size_t k) const;
  /// The global grid's extent (cells), and part k's block in it. Throws Error(out_of_range).
  [[nodiscard]] Extent extent() const;
  [[nodiscard]] Block block(std::size_t k) const;
  /// Bytes of field `field` over the whole global grid: its cells (extent()) × the bytes of one
  /// cell (components × the dtype's size). Throws Error(out_of_range).
  [[nodiscard]] std::size_t global_field_bytes(std::size_t field) const;
  /// Copies field `field` of every part into `dst` (global_field_bytes(field) bytes) as one
  /// row-major global grid, each part's block at its offset; cells no part covers are left as
  /// they were. On CUDA it waits for each frame first, as Frame::copy_to_host does. Throws
  /// Error(out_of_range) for a field that does not exist, Error(bad_value) for a `dst` of another
  /// size or a field some part's frame does not hold (Frame::holds: read it with read_fields()).
  void copy_field_to_host(std::size_t field, std::span<std::byte> dst) const;
  /// The same into `dst`, device memory of any GPU of this process (`bytes` =
  /// global_field_bytes(field)): each frame is waited for on the host, then the copy engine moves
  /// its block into place (a peer copy when the GPUs differ). No kernel runs. Returns when the
  /// copies are done. Throws Error(unsupported) for frames on the host backend (use
  /// copy_field_to_host), Error(cuda) naming the part, and what copy_field_to_host throws.
  void copy_field_to_device(std::size_t field, void* dst, std::size_t bytes) const;
  /// Whether every part's frame holds field `field` (Frame::holds).
  [[nodiscard]] bool holds(std::size_t field) const noexcept;
  /// Each part's Frame::verify(); empty when all are intact, otherwise the first problem, naming
  /// the part.
  [[nodiscard]] std::optional<std::string> verify() const;

 private:
  friend struct detail::FrameAccess;
  FrameGroup(std::shared_ptr<const detail::GroupLayout> layout, std::vector<Frame> frames, std::uint64_t step) noexcept;
  /// Throws Error(bad_value) unless `bytes` is global_field_bytes(field).
  void check_field_buffer(std::size_t field, std::size_t bytes) const;
  std::shared_ptr<const detail::GroupLayout> layout_;
  std::vector<Frame> frames_;
  std::uint64_t step_ = 0;
};

}  // namespace cuview
