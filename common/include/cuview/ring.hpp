// The frame ring's shared control block: which slot holds which frame, who is reading what,
// and whether the daemon is alive. It lives in a POSIX shared-memory segment on both backends
// (on CUDA only the slots' data is on the GPU). See docs/architecture.md, "Slot reuse".
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cuview/frame_layout.hpp"
#include "cuview/posix.hpp"

namespace cuview {

inline constexpr std::uint32_t kMaxSlots = 16;
inline constexpr std::uint32_t kMaxLeases = 64;
inline constexpr std::uint64_t kControlMagic = 0x31424b4c43574556ull;  // "VEWCLKB1"
inline constexpr std::uint32_t kControlLayout = 3;
/// The layout of protocol 7 (proto::kFirstStable): later layouts only append words after it.
inline constexpr std::uint32_t kFirstStableControlLayout = 3;
/// The slot half of ControlBlock::latest when no frame is offered.
inline constexpr std::uint32_t kNoSlot = 0xff;

enum class DaemonState : std::uint32_t { starting = 0, running = 1, shut_down = 2 };

/// Per-slot state word: (seq << 1) | writing. Unique per frame, so no ABA.
struct SlotMeta {
  std::atomic<std::uint64_t> state;
  /// Atomic (same size and layout as a plain word) so that offered() can read it without a hold:
  /// it is only trusted when `state` reads the same frame before and after.
  std::atomic<std::uint64_t> step;
  double sim_time;
  std::int64_t stamp_ns;  ///< CLOCK_REALTIME when the frame was published
  /// The blocks the frame holds (the union of what its readers read when it was published); the
  /// others were not written and are not in its checksum. Atomic for offered(), as `step`.
  std::atomic<std::uint64_t> fields;
};

/// One reader's row. The daemon assigns `pid` and `generation`; the reader only counts holds.
struct Lease {
  std::atomic<std::int32_t> pid;  ///< 0 = free
  std::atomic<std::uint32_t> generation;
  std::atomic<std::uint32_t> holds[kMaxSlots];
  /// The blocks this reader reads (a set as kAllBlocks; 0: every block), written by the reader at
  /// any time: the publisher copies the union of its readers' sets.
  std::atomic<std::uint64_t> reads;
};

struct ControlBlock {
  std::uint64_t magic;
  std::uint32_t layout;
  std::uint32_t slot_count;
  char session[48];
  std::int32_t daemon_pid;
  std::atomic<std::uint32_t> state;          ///< DaemonState
  std::atomic<std::int64_t> heartbeat_ns;    ///< monotonic_ns() of the daemon's last loop turn
  /// (seq << 8) | slot of the newest frame; seq 0 = none yet; slot kNoSlot = withdrawn (see
  /// RingWriter::open_lease): frame seq is no longer offered, the next one will be.
  std::atomic<std::uint64_t> latest;
  std::atomic<std::uint32_t> notify;         ///< futex word: bumped on every publish and on shutdown
  std::atomic<std::uint64_t> frames_skipped; ///< frames not published because every slot was held
  SlotMeta slots[kMaxSlots];
  Lease leases[kMaxLeases];
  /// Bumped by a reader that changed its `reads`: the publisher publishes at its next call (the
  /// frame period aside, the budget not), so that a newly asked-for field shows at once.
  std::atomic<std::uint64_t> reads_changed;
  /// Per slot (layout 3): 0 or 1, the frame's fields hold every cell; k >= 2, each field holds
  /// only the cells at multiples of k along each of the grid's 3 axes, packed (a grid of ceil(n/k)
  /// cells per axis from the field's offset): a frame for volume viewers that asked for it
  /// (`lease_every`). Written before `state` publishes the frame, as `fields`.
  std::atomic<std::uint32_t> slot_every[kMaxSlots];
  /// Per lease (layout 3): 0 or 1, this reader takes whole frames only; k >= 2, it also takes
  /// frames of every k-th cell. The publisher writes such frames when every open lease asks the
  /// same k (and its writer can).
  std::atomic<std::uint32_t> lease_every[kMaxLeases];
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "the ring needs lock-free 64-bit atomics");
static_assert(std::atomic<std::int64_t>::is_always_lock_free);

/// The two halves of ControlBlock::latest.
inline std::uint64_t latest_seq_of(std::uint64_t latest) { return latest >> 8; }
inline std::uint32_t latest_slot_of(std::uint64_t latest) { return static_cast<std::uint32_t>(latest & 0xff); }

/// Metadata of a published frame, as the reader sees it.
struct FrameInfo {
  std::uint64_t seq = 0;
  std::uint32_t slot = 0;
  std::uint64_t step = 0;
  double sim_time = 0;
  std::int64_t stamp_ns = 0;
  std::uint64_t fields = kAllBlocks;  ///< the blocks the frame holds (SlotMeta::fields)
  /// 1: its fields hold every cell; k >= 2: every k-th along each axis, packed
  /// (ControlBlock::slot_every).
  std::uint32_t every = 1;
};

/// The publisher's side of the ring: owns the control-block segment. begin_write, end_write and
/// abort_write belong to one publishing thread; the lease calls may run on another thread.
class RingWriter {
 public:
  /// Creates the control block (shared memory, 0600). Throws Error(system).
  RingWriter(std::uint32_t slot_count, const std::string& session);
  [[nodiscard]] const std::string& shm_name() const noexcept { return shm_.name(); }
  [[nodiscard]] ControlBlock& block() const noexcept { return *static_cast<ControlBlock*>(shm_.data()); }

  /// Picks a slot nobody holds (never the newest frame's, when there is a choice) and marks it
  /// being written. Empty when every slot is held: the daemon skips this frame and never waits.
  [[nodiscard]] std::optional<std::uint32_t> begin_write();
  /// Counts one frame that was due but not published because every slot was held.
  void count_skipped() noexcept { block().frames_skipped.fetch_add(1); }
  /// Frames published so far in this session: the newest frame's seq, as readers see it (a
  /// reader holding frame N finds published() >= N). Any thread.
  [[nodiscard]] std::uint64_t published() const noexcept { return latest_seq_of(block().latest.load()); }
  /// Publishes the slot begun by begin_write as frame `seq`, wakes every waiting reader.
  void end_write(std::uint32_t slot, const FrameInfo& info);
  /// Gives back a slot begun by begin_write whose frame could not be written.
  void abort_write(std::uint32_t slot) noexcept;
  [[nodiscard]] std::uint64_t last_seq() const noexcept { return last_seq_; }  ///< the publishing thread's

  /// Assigns a free lease row to reader `pid`; empty when all kMaxLeases rows are in use. The
  /// first reader after a time with none withdraws the newest frame (it shows the run as it was
  /// when the last reader left, since nothing is published while nobody reads) and counts an
  /// arrival: the publisher publishes at its next call.
  [[nodiscard]] std::optional<std::uint32_t> open_lease(std::int32_t pid);
  /// Frees a lease and drops every hold it had (the reader detached or died).
  void close_lease(std::uint32_t lease);
  /// Leases open now. Any thread.
  [[nodiscard]] std::uint32_t readers() const noexcept { return readers_.load(); }
  /// Times a reader arrived while none was reading. Any thread.
  [[nodiscard]] std::uint64_t arrivals() const noexcept { return arrivals_.load(); }
  /// Number of slots some lease holds now.
  [[nodiscard]] std::uint32_t held_slots() const;
  /// The blocks the open leases read: the union of their sets (kAllBlocks when one reads all).
  [[nodiscard]] std::uint64_t reads() const;
  /// Whether the open leases read a block the newest frame does not hold (or no frame is
  /// offered): a reader then waits for a frame that a publish would give it. Any thread.
  [[nodiscard]] bool reads_beyond_newest() const;
  /// Times a reader changed what it reads (or a lease opened). Any thread.
  [[nodiscard]] std::uint64_t reads_changed() const noexcept { return block().reads_changed.load(); }
  /// The k every open lease takes frames of every k-th cell at (ControlBlock::lease_every); 1
  /// when none is open, one takes whole frames only, or two ask for different k.
  [[nodiscard]] std::uint32_t every() const;

  void heartbeat() noexcept;
  void set_state(DaemonState s) noexcept;

 private:
  [[nodiscard]] bool held(std::uint32_t slot) const;
  SharedMemory shm_;
  std::uint32_t slot_count_;
  std::uint64_t last_seq_ = 0;
  std::atomic<std::uint32_t> readers_{0};
  std::atomic<std::uint64_t> arrivals_{0};
};

/// A reader's view of a control block it mapped. Thread-safe: every operation is atomic.
class RingReader {
 public:
  RingReader() = default;
  /// Maps the segment and checks magic, layout and session. Throws Error(stale_session) when
  /// the block belongs to another daemon run, Error(no_daemon) when it is gone.
  RingReader(const std::string& shm_name, const std::string& session, std::uint32_t lease);

  /// Newest frame after `after_seq`, held for this lease until release(); empty when no newer
  /// frame is published (or it was overwritten while being acquired, then call again).
  [[nodiscard]] std::optional<FrameInfo> acquire_newer(std::uint64_t after_seq) const;
  /// The newest published frame of exactly `step` with seq > after_seq, held for this lease until
  /// release(); empty when no slot offers one (or it was overwritten while being acquired). For
  /// readers that combine the rings of several parts (cuview::Group), which need one step from
  /// every part rather than each ring's newest. Lock-free; the writer never waits.
  [[nodiscard]] std::optional<FrameInfo> acquire_step(std::uint64_t step, std::uint64_t after_seq) const;
  /// The frames the ring offers now (seq, slot and step; sim_time and stamp_ns are not read),
  /// oldest first, without holding any: a snapshot that may be stale as soon as it returns, to
  /// choose a step that acquire_step() then holds. Frames withdrawn for a new reader
  /// (RingWriter::open_lease) are not offered.
  [[nodiscard]] std::vector<FrameInfo> offered() const;
  void release(std::uint32_t slot) const noexcept;
  /// Says which blocks this reader reads from now on (0: every block); the publisher copies those
  /// in its next frame (docs/protocol.md "Only what is read is copied").
  void set_reads(std::uint64_t blocks) const noexcept;
  /// Says that this reader also takes frames of every k-th cell (k >= 2; 0 or 1: whole frames
  /// only, the default). Counts as a change of reads.
  void set_every(std::uint32_t k) const noexcept;
  /// Blocks until the ring's notify word moves past `seen` or `timeout` passes.
  void wait_notify(std::uint32_t seen, std::chrono::nanoseconds timeout) const noexcept;
  [[nodiscard]] std::uint32_t notify_value() const noexcept;
  [[nodiscard]] DaemonState state() const noexcept;
  [[nodiscard]] std::int64_t heartbeat_ns() const noexcept;
  [[nodiscard]] std::uint64_t latest_seq() const noexcept;
  [[nodiscard]] const ControlBlock& block() const noexcept { return *static_cast<const ControlBlock*>(shm_.data()); }

 private:
  [[nodiscard]] ControlBlock& mut() const noexcept { return *static_cast<ControlBlock*>(shm_.data()); }
  SharedMemory shm_;
  std::uint32_t lease_ = 0;
  std::uint32_t generation_ = 0;  ///< of our lease row: holds are only dropped while it is still ours
};


}  // namespace cuview
