#include "cuview/ring.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "cuview/error.hpp"

namespace cuview {

// Slot reuse is a Dekker-style handshake, with every access sequentially consistent:
//   writer: state[s] |= writing;  then read every lease's holds[s]
//   reader: holds[s] += 1;        then read state[s]
// At least one side sees the other's store. If the reader sees `writing` (or another seq) it
// drops its hold and retries on a newer frame; if the writer sees a hold it puts the state back
// and tries another slot. So a held slot is never written, and the writer never waits.

namespace {
/// A held (or peeked) slot's ControlBlock::slot_every, 0 read as 1.
std::uint32_t every_of(const ControlBlock& cb, std::uint32_t slot) {
  return std::max<std::uint32_t>(cb.slot_every[slot].load(), 1);
}
}  // namespace

RingWriter::RingWriter(std::uint32_t slot_count, const std::string& session)
    : shm_(SharedMemory::create(sizeof(ControlBlock))), slot_count_(slot_count) {
  if (slot_count == 0 || slot_count > kMaxSlots)
    throw Error(Errc::out_of_range,
                "--slots " + std::to_string(slot_count) + " is out of range: use 1 to " + std::to_string(kMaxSlots));
  auto* cb = new (shm_.data()) ControlBlock{};
  cb->magic = kControlMagic;
  cb->layout = kControlLayout;
  cb->slot_count = slot_count;
  std::strncpy(cb->session, session.c_str(), sizeof cb->session - 1);
  cb->daemon_pid = static_cast<std::int32_t>(::getpid());
  cb->heartbeat_ns.store(monotonic_ns());
}

bool RingWriter::held(std::uint32_t slot) const {
  for (const auto& lease : block().leases) {
    if (lease.holds[slot].load() != 0) return true;
  }
  return false;
}

std::optional<std::uint32_t> RingWriter::begin_write() {
  auto& cb = block();
  const std::uint32_t newest = latest_slot_of(cb.latest.load());
  // Oldest first, so that a reader that just acquired the newest frame keeps it longest.
  std::uint32_t order[kMaxSlots];
  std::uint32_t n = 0;
  for (std::uint32_t s = 0; s < slot_count_; ++s) {
    if (s != newest || last_seq_ == 0) order[n++] = s;
  }
  std::sort(order, order + n, [&](std::uint32_t a, std::uint32_t b) {
    return cb.slots[a].state.load(std::memory_order_relaxed) < cb.slots[b].state.load(std::memory_order_relaxed);
  });
  if (n < slot_count_) order[n++] = newest;  // the newest slot only as the last resort
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t s = order[i];
    const std::uint64_t before = cb.slots[s].state.load();
    cb.slots[s].state.store(before | 1u);
    if (!held(s)) return s;
    cb.slots[s].state.store(before);
  }
  return std::nullopt;
}

void RingWriter::end_write(std::uint32_t slot, const FrameInfo& info) {
  auto& cb = block();
  auto& meta = cb.slots[slot];
  meta.step = info.step;
  meta.sim_time = info.sim_time;
  meta.stamp_ns = info.stamp_ns;
  meta.fields.store(info.fields);
  cb.slot_every[slot].store(info.every);
  meta.state.store(info.seq << 1);
  cb.latest.store((info.seq << 8) | slot);
  last_seq_ = info.seq;
  cb.notify.fetch_add(1);
  futex_wake_all(&cb.notify);
}

void RingWriter::abort_write(std::uint32_t slot) noexcept {
  auto& state = block().slots[slot].state;
  state.store(state.load() & ~std::uint64_t{1});
}

std::optional<std::uint32_t> RingWriter::open_lease(std::int32_t pid) {
  auto& cb = block();
  for (std::uint32_t i = 0; i < kMaxLeases; ++i) {
    auto& lease = cb.leases[i];
    if (lease.pid.load() != 0) continue;
    for (auto& h : lease.holds) h.store(0);
    lease.reads.store(0);
    cb.lease_every[i].store(0);
    lease.generation.fetch_add(1);
    lease.pid.store(pid);
    cb.reads_changed.fetch_add(1);  // a reader of every field: the next frame may need to hold more
    if (readers_.fetch_add(1) == 0) {
      // Whatever the ring offers is from before the last reader left: withdraw it (seq stays, so
      // the next frame is newer for every reader) and have the publisher publish now.
      cb.latest.fetch_or(kNoSlot);
      arrivals_.fetch_add(1);
    }
    return i;
  }
  return std::nullopt;
}

void RingWriter::close_lease(std::uint32_t i) {
  if (i >= kMaxLeases) return;
  auto& lease = block().leases[i];
  for (auto& h : lease.holds) h.store(0);
  if (lease.pid.exchange(0) != 0) readers_.fetch_sub(1);
}

std::uint64_t RingWriter::reads() const {
  std::uint64_t all = 0;
  for (const auto& lease : block().leases) {
    if (lease.pid.load() == 0) continue;
    const std::uint64_t r = lease.reads.load();
    if (r == 0) return kAllBlocks;
    all |= r;
  }
  return all == 0 ? kAllBlocks : all;
}

bool RingWriter::reads_beyond_newest() const {
  const auto& cb = block();
  const std::uint64_t latest = cb.latest.load();
  const std::uint32_t slot = latest_slot_of(latest);
  if (latest_seq_of(latest) == 0 || slot >= slot_count_) return true;
  if (!holds_all(cb.slots[slot].fields.load(), reads())) return true;
  // A frame of every k-th cell that some reader does not take, or a whole one where every reader
  // asked for (cheaper) frames of every k-th cell.
  return every_of(cb, slot) != every();
}

std::uint32_t RingWriter::every() const {
  const auto& cb = block();
  std::uint32_t k = 0;
  for (std::uint32_t i = 0; i < kMaxLeases; ++i) {
    if (cb.leases[i].pid.load() == 0) continue;
    const std::uint32_t e = std::max<std::uint32_t>(cb.lease_every[i].load(), 1);
    if (k != 0 && e != k) return 1;
    k = e;
  }
  return std::max<std::uint32_t>(k, 1);
}

std::uint32_t RingWriter::held_slots() const {
  std::uint32_t n = 0;
  for (std::uint32_t s = 0; s < slot_count_; ++s) n += held(s) ? 1 : 0;
  return n;
}

void RingWriter::heartbeat() noexcept { block().heartbeat_ns.store(monotonic_ns(), std::memory_order_relaxed); }

void RingWriter::set_state(DaemonState s) noexcept {
  auto& cb = block();
  cb.state.store(static_cast<std::uint32_t>(s));
  cb.notify.fetch_add(1);
  futex_wake_all(&cb.notify);
}

RingReader::RingReader(const std::string& shm_name, const std::string& session, std::uint32_t lease)
    : shm_(SharedMemory::open(shm_name, sizeof(ControlBlock), Access::read_write)), lease_(lease) {
  const auto& cb = block();
  // Layouts from 3 (protocol 7) on only append words: a reader maps what it knows of a later one.
  if (cb.magic != kControlMagic || cb.layout < kFirstStableControlLayout)
    throw Error(Errc::bad_message, "shared-memory segment " + shm_name + " is not a cuview control block of layout " +
                                       std::to_string(kFirstStableControlLayout) +
                                       " or later; the daemon predates protocol 7: update it");
  if (session != cb.session)
    throw Error(Errc::stale_session, "control block " + shm_name + " belongs to daemon session " + cb.session +
                                         ", not " + session + "; the daemon restarted: attach again");
  if (lease >= kMaxLeases) throw Error(Errc::bad_value, "lease " + std::to_string(lease) + " is out of range");
  generation_ = cb.leases[lease].generation.load();
}

std::optional<FrameInfo> RingReader::acquire_newer(std::uint64_t after_seq) const {
  auto& cb = mut();
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::uint64_t latest = cb.latest.load();
    const std::uint64_t seq = latest_seq_of(latest);
    const std::uint32_t slot = latest_slot_of(latest);
    if (seq == 0 || seq <= after_seq || slot >= cb.slot_count) return std::nullopt;
    auto& hold = cb.leases[lease_].holds[slot];
    hold.fetch_add(1);
    if (cb.slots[slot].state.load() == (seq << 1)) {
      const auto& meta = cb.slots[slot];
      return FrameInfo{seq, slot, meta.step, meta.sim_time, meta.stamp_ns, meta.fields.load(), every_of(cb, slot)};
    }
    hold.fetch_sub(1);  // overwritten meanwhile: a newer frame exists, take that one
  }
  return std::nullopt;
}

namespace {
/// Frames with a seq at or below this are not offered: while the newest is withdrawn for a new
/// reader (RingWriter::open_lease), every frame published before it is from an old state.
std::uint64_t withdrawn_through(const ControlBlock& cb) {
  const std::uint64_t latest = cb.latest.load();
  return latest_slot_of(latest) == kNoSlot ? latest_seq_of(latest) : 0;
}

/// The frame slot `s` holds now, read without a hold: empty while it is being written, empty or
/// withdrawn, or when it changed under the read (its step then belongs to another frame).
std::optional<FrameInfo> peek(const ControlBlock& cb, std::uint32_t s, std::uint64_t floor) {
  const auto& meta = cb.slots[s];
  const std::uint64_t before = meta.state.load();
  if ((before & 1u) != 0 || (before >> 1) <= floor) return std::nullopt;
  const std::uint64_t step = meta.step.load();
  const std::uint64_t fields = meta.fields.load();
  const std::uint32_t every = every_of(cb, s);
  if (meta.state.load() != before) return std::nullopt;
  return FrameInfo{before >> 1, s, step, 0, 0, fields, every};
}
}  // namespace

std::optional<FrameInfo> RingReader::acquire_step(std::uint64_t step, std::uint64_t after_seq) const {
  auto& cb = mut();
  const std::uint32_t slots = std::min(cb.slot_count, kMaxSlots);
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::uint64_t floor = std::max(after_seq, withdrawn_through(cb));
    std::optional<FrameInfo> pick;
    for (std::uint32_t s = 0; s < slots; ++s) {
      const auto f = peek(cb, s, floor);
      if (f && f->step == step && (!pick || f->seq > pick->seq)) pick = f;
    }
    if (!pick) return std::nullopt;
    // Hold, then recheck (the handshake above): a writer that marked the slot before our hold
    // changed its state; one that marks it after sees the hold and backs off.
    auto& hold = cb.leases[lease_].holds[pick->slot];
    hold.fetch_add(1);
    const auto& meta = cb.slots[pick->slot];
    if (meta.state.load() == (pick->seq << 1))
      return FrameInfo{pick->seq,     pick->slot,          meta.step.load(), meta.sim_time,
                       meta.stamp_ns, meta.fields.load(), every_of(cb, pick->slot)};
    hold.fetch_sub(1);  // overwritten meanwhile: look again (another slot may hold that step)
  }
  return std::nullopt;
}

std::vector<FrameInfo> RingReader::offered() const {
  const auto& cb = block();
  const std::uint64_t floor = withdrawn_through(cb);
  std::vector<FrameInfo> out;
  for (std::uint32_t s = 0; s < std::min(cb.slot_count, kMaxSlots); ++s)
    if (auto f = peek(cb, s, floor)) out.push_back(*f);
  std::sort(out.begin(), out.end(), [](const FrameInfo& a, const FrameInfo& b) { return a.seq < b.seq; });
  return out;
}

void RingReader::release(std::uint32_t slot) const noexcept {
  if (slot >= kMaxSlots || shm_.data() == nullptr) return;  // a fetched frame holds no slot
  auto& lease = mut().leases[lease_];
  // After a detach the daemon may have given our row to another reader: leave its holds alone.
  if (lease.generation.load() != generation_) return;
  auto& hold = lease.holds[slot];
  // The daemon zeroes holds when it reclaims a lease; never wrap below zero.
  std::uint32_t v = hold.load();
  while (v != 0 && !hold.compare_exchange_weak(v, v - 1)) {
  }
}

void RingReader::set_reads(std::uint64_t blocks) const noexcept {
  if (shm_.data() == nullptr) return;
  auto& cb = mut();
  auto& lease = cb.leases[lease_];
  if (lease.generation.load() != generation_) return;  // no longer our row
  if (lease.reads.exchange(blocks) != blocks) cb.reads_changed.fetch_add(1);
}

void RingReader::set_every(std::uint32_t k) const noexcept {
  if (shm_.data() == nullptr) return;
  auto& cb = mut();
  if (cb.leases[lease_].generation.load() != generation_) return;  // no longer our row
  if (cb.lease_every[lease_].exchange(k) != k) cb.reads_changed.fetch_add(1);
}

void RingReader::wait_notify(std::uint32_t seen, std::chrono::nanoseconds timeout) const noexcept {
  futex_wait(&block().notify, seen, timeout);
}
std::uint32_t RingReader::notify_value() const noexcept { return block().notify.load(); }
DaemonState RingReader::state() const noexcept { return static_cast<DaemonState>(block().state.load()); }
std::int64_t RingReader::heartbeat_ns() const noexcept { return block().heartbeat_ns.load(); }
std::uint64_t RingReader::latest_seq() const noexcept { return latest_seq_of(block().latest.load()); }

}  // namespace cuview
