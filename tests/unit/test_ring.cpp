// The frame ring never lets the writer overwrite a slot a reader holds, and never makes the
// writer wait: it skips frames instead.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstring>
#include <thread>
#include <vector>

#include "cuview/error.hpp"
#include "cuview/ring.hpp"

using namespace cuview;

namespace {
FrameInfo info(std::uint64_t seq, std::uint32_t slot) { return {seq, slot, seq * 10, double(seq), 0}; }

/// Publishes one frame; returns the slot used, or empty if every slot was held.
std::optional<std::uint32_t> publish(RingWriter& w) {
  auto s = w.begin_write();
  if (s) w.end_write(*s, info(w.last_seq() + 1, *s));
  return s;
}
/// Stands in for the slots' memory in the stress tests: every word of a slot holds the seq of
/// the frame written into it.
struct FakeSlots {
  std::size_t words;
  std::vector<std::atomic<std::uint64_t>> data;
  FakeSlots(std::uint32_t slots, std::size_t w) : words(w), data(slots * w) {}

  /// Publishes `frames` frames as fast as the ring lets it (a frame finding every slot held is retried).
  /// Publishes at least `frames` frames, and goes on until `enough()` says the readers have read
  /// what the test needs: on a loaded machine the writer may finish before a reader thread runs.
  template <typename Enough>
  void write_frames(RingWriter& w, std::uint64_t frames, Enough enough) {
    for (std::uint64_t published = 0; published < frames || !enough();) {
      auto s = w.begin_write();
      if (!s) continue;
      const std::uint64_t seq = w.last_seq() + 1;
      for (std::size_t i = 0; i < words; ++i) data[*s * words + i].store(seq, std::memory_order_relaxed);
      w.end_write(*s, info(seq, *s));
      ++published;
    }
  }
  /// Whether the slot of `f` still holds frame f.seq in every word.
  [[nodiscard]] bool intact(const FrameInfo& f) const {
    for (std::size_t i = 0; i < words; ++i)
      if (data[f.slot * words + i].load(std::memory_order_relaxed) != f.seq) return false;
    return true;
  }
};
}  // namespace

TEST_CASE("a reader gets the newest frame and never the same frame twice", "[ring]") {
  RingWriter w(3, "session-a");
  auto lease = w.open_lease(::getpid());
  REQUIRE(lease);
  RingReader r(w.shm_name(), "session-a", *lease);
  CHECK_FALSE(r.acquire_newer(0));  // nothing published yet
  publish(w);
  publish(w);
  auto f = r.acquire_newer(0);
  REQUIRE(f);
  CHECK(f->seq == 2);
  CHECK(f->step == 20);
  CHECK_FALSE(r.acquire_newer(f->seq));
  r.release(f->slot);
}

TEST_CASE("a held slot is never written while the writer keeps publishing", "[ring]") {
  RingWriter w(3, "s");
  RingReader r(w.shm_name(), "s", *w.open_lease(::getpid()));
  publish(w);
  auto held = r.acquire_newer(0);
  REQUIRE(held);
  for (int i = 0; i < 100; ++i) {
    auto s = publish(w);
    REQUIRE(s);  // two other slots stay free: no frame is skipped
    CHECK(*s != held->slot);
  }
  CHECK(w.held_slots() == 1);
  CHECK((w.block().slots[held->slot].state.load() >> 1) == held->seq);  // still frame 1
  r.release(held->slot);
  CHECK(w.held_slots() == 0);
}

TEST_CASE("when every slot is held the writer skips the frame instead of waiting", "[ring]") {
  RingWriter w(2, "s");
  RingReader a(w.shm_name(), "s", *w.open_lease(::getpid()));
  RingReader b(w.shm_name(), "s", *w.open_lease(::getpid()));
  publish(w);
  auto fa = a.acquire_newer(0);
  publish(w);
  auto fb = b.acquire_newer(0);
  REQUIRE(fa);
  REQUIRE(fb);
  REQUIRE(fa->slot != fb->slot);
  CHECK_FALSE(publish(w));
  CHECK(w.published() == 2);  // the skipped frame is not counted as published
  a.release(fa->slot);
  CHECK(publish(w));
  CHECK(w.published() == 3);
}

TEST_CASE("a reader cannot acquire a slot that is being written", "[ring]") {
  RingWriter w(1, "s");  // one slot: the writer must reuse the newest
  RingReader r(w.shm_name(), "s", *w.open_lease(::getpid()));
  publish(w);
  auto s = w.begin_write();
  REQUIRE(s);
  CHECK_FALSE(r.acquire_newer(0));  // frame 1's slot is mid-write
  w.end_write(*s, info(2, *s));
  auto f = r.acquire_newer(0);
  REQUIRE(f);
  CHECK(f->seq == 2);
}

TEST_CASE("closing a dead reader's lease frees the slots it held", "[ring]") {
  RingWriter w(2, "s");
  auto lease = w.open_lease(4242);
  RingReader r(w.shm_name(), "s", *lease);
  publish(w);
  REQUIRE(r.acquire_newer(0));
  publish(w);
  REQUIRE(r.acquire_newer(1));
  CHECK(w.held_slots() == 2);
  w.close_lease(*lease);
  CHECK(w.held_slots() == 0);
  CHECK(publish(w));
  r.release(0);  // a late release from the old reader must not disturb the next owner of the row
  auto next = w.open_lease(4343);
  RingReader r2(w.shm_name(), "s", *next);
  // The first reader after none: the frame left from before is withdrawn (it is of an old step),
  // and the publisher is told to publish at once.
  CHECK(w.readers() == 1);
  CHECK(w.arrivals() == 2);
  CHECK_FALSE(r2.acquire_newer(0));
  CHECK(latest_slot_of(w.block().latest.load()) == kNoSlot);
  CHECK(publish(w));
  auto f = r2.acquire_newer(0);
  REQUIRE(f);
  CHECK(f->seq == 4);
  r.release(f->slot);
  CHECK(w.held_slots() == 1);
}

TEST_CASE("a control block of another session is refused", "[ring][bad-input]") {
  RingWriter w(2, "new-session");
  try {
    RingReader r(w.shm_name(), "old-session", 0);
    FAIL("accepted a stale session");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::stale_session);
    CHECK_THAT(e.what(), Catch::Contains("restarted"));
  }
}

TEST_CASE("readers racing a fast writer never see a torn or overwritten frame", "[ring][stress]") {
  RingWriter w(3, "s");
  FakeSlots slots(3, 4096);
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> bad{0}, seen{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&, lease = *w.open_lease(::getpid())] {
      RingReader r(w.shm_name(), "s", lease);
      std::uint64_t last = 0;
      while (!done.load()) {
        auto f = r.acquire_newer(last);
        if (!f) continue;
        last = f->seq;
        if (!slots.intact(*f)) ++bad;
        ++seen;
        r.release(f->slot);
      }
    });
  }
  // Every reader races the writer for a while, however the threads are scheduled.
  slots.write_frames(w, 20000, [&] { return seen.load() >= 3000; });
  done = true;
  for (auto& t : readers) t.join();
  INFO("frames read: " << seen.load());
  CHECK(seen.load() >= 3000);
  CHECK(bad.load() == 0);
}

TEST_CASE("offered() lists the published frames without holding them, oldest first", "[ring]") {
  RingWriter w(3, "s");
  RingReader r(w.shm_name(), "s", *w.open_lease(::getpid()));
  CHECK(r.offered().empty());  // nothing published
  publish(w);
  publish(w);
  publish(w);
  auto offered = r.offered();
  REQUIRE(offered.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(offered[i].seq == i + 1);
    CHECK(offered[i].step == (i + 1) * 10);
  }
  CHECK(w.held_slots() == 0);  // a snapshot holds nothing
  // A slot being written is not offered.
  auto s = w.begin_write();
  REQUIRE(s);
  offered = r.offered();
  REQUIRE(offered.size() == 2);
  CHECK(offered[0].seq == 2);
  CHECK(offered[1].seq == 3);
  w.end_write(*s, info(4, *s));
  CHECK(r.offered().back().seq == 4);
}

TEST_CASE("offered() and acquire_step() leave out frames withdrawn for a new reader", "[ring]") {
  RingWriter w(3, "s");
  auto first = w.open_lease(::getpid());
  publish(w);
  publish(w);
  w.close_lease(*first);
  RingReader r(w.shm_name(), "s", *w.open_lease(::getpid()));  // the first reader after none
  CHECK(r.offered().empty());
  CHECK_FALSE(r.acquire_step(20, 0));
  publish(w);
  const auto offered = r.offered();
  REQUIRE_FALSE(offered.empty());
  CHECK(offered.back().seq == 3);
  CHECK(r.acquire_step(30, 0));
}

TEST_CASE("acquire_step holds the frame of exactly that step, newer than after_seq", "[ring]") {
  RingWriter w(3, "s");
  RingReader r(w.shm_name(), "s", *w.open_lease(::getpid()));
  publish(w);  // step 10
  publish(w);  // step 20
  publish(w);  // step 30
  CHECK_FALSE(r.acquire_step(15, 0));  // no frame of that step
  CHECK_FALSE(r.acquire_step(20, 2));  // frame 2 is not newer than 2
  auto f = r.acquire_step(20, 1);
  REQUIRE(f);
  CHECK(f->seq == 2);
  CHECK(f->step == 20);
  CHECK(f->sim_time == 2.0);
  CHECK(w.held_slots() == 1);
  // The writer keeps publishing around the held frame, never into it.
  for (int i = 0; i < 20; ++i) {
    auto s = publish(w);
    REQUIRE(s);
    CHECK(*s != f->slot);
  }
  CHECK((w.block().slots[f->slot].state.load() >> 1) == 2);
  r.release(f->slot);
  CHECK(w.held_slots() == 0);
  // Two frames of one step (the program reset): the newer is taken.
  RingWriter v(3, "t");
  RingReader rv(v.shm_name(), "t", *v.open_lease(::getpid()));
  for (std::uint64_t seq = 1; seq <= 3; ++seq) {
    auto s = v.begin_write();
    REQUIRE(s);
    v.end_write(*s, FrameInfo{seq, *s, seq == 2 ? 7u : 5u, 0, 0});
  }
  auto g = rv.acquire_step(5, 0);
  REQUIRE(g);
  CHECK(g->seq == 3);
  rv.release(g->slot);
}

TEST_CASE("a reader picking steps from offered() never holds a frame the writer overwrote", "[ring][stress]") {
  RingWriter w(2, "s");
  FakeSlots slots(2, 2048);
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> bad{0}, seen{0}, missed{0};
  std::thread reader([&, lease = *w.open_lease(::getpid())] {
    RingReader r(w.shm_name(), "s", lease);
    std::uint64_t last = 0;
    while (!done.load()) {
      const auto offered = r.offered();
      if (offered.empty() || offered.back().seq <= last) continue;
      auto f = r.acquire_step(offered.back().step, last);
      if (!f) {
        ++missed;  // overwritten between the snapshot and the hold: allowed, and retried
        continue;
      }
      if (f->step != f->seq * 10 || !slots.intact(*f)) ++bad;
      last = f->seq;
      ++seen;
      r.release(f->slot);
    }
  });
  slots.write_frames(w, 20000, [&] { return seen.load() >= 1000; });
  done = true;
  reader.join();
  INFO("frames read: " << seen.load() << ", snapshots overtaken: " << missed.load());
  CHECK(seen.load() >= 1000);
  CHECK(bad.load() == 0);
}

TEST_CASE("a frame holds the union of the fields its readers read, and says so", "[unit][ring]") {
  RingWriter w(3, "session-f");
  CHECK(w.reads() == kAllBlocks);  // nobody reads: nothing is published, but nothing is narrowed
  const auto a = w.open_lease(::getpid()), b = w.open_lease(::getpid());
  REQUIRE(a);
  REQUIRE(b);
  RingReader ra(w.shm_name(), "session-f", *a), rb(w.shm_name(), "session-f", *b);
  CHECK(w.reads() == kAllBlocks);  // readers that say nothing read every block
  const auto changed = w.reads_changed();
  ra.set_reads(0b001);
  CHECK(w.reads() == kAllBlocks);  // b still reads everything
  rb.set_reads(0b100);
  CHECK(w.reads() == 0b101);
  CHECK(w.reads_changed() == changed + 2);
  rb.set_reads(0b100);  // the same again: nothing changed
  CHECK(w.reads_changed() == changed + 2);
  auto s = w.begin_write();
  REQUIRE(s);
  w.end_write(*s, {1, *s, 10, 1.0, 0, w.reads()});
  const auto f = ra.acquire_newer(0);
  REQUIRE(f);
  CHECK(f->fields == 0b101);
  CHECK(has_block(f->fields, 0));
  CHECK_FALSE(has_block(f->fields, 1));
  CHECK(has_block(f->fields, 70));  // blocks past 64 are always held
  ra.release(f->slot);
  REQUIRE(rb.offered().size() == 1);
  CHECK(rb.offered()[0].fields == 0b101);
  // A lease given back and opened again reads every block until its reader says otherwise.
  w.close_lease(*b);
  CHECK(w.reads() == 0b001);
  const auto c = w.open_lease(::getpid());
  REQUIRE(c);
  CHECK(w.reads() == kAllBlocks);
}

TEST_CASE("frames of every k-th cell are written only when every reader takes them, and say so", "[unit][ring]") {
  RingWriter w(3, "session-k");
  CHECK(w.every() == 1);  // nobody reads
  const auto a = w.open_lease(::getpid()), b = w.open_lease(::getpid());
  REQUIRE(a);
  REQUIRE(b);
  RingReader ra(w.shm_name(), "session-k", *a), rb(w.shm_name(), "session-k", *b);
  CHECK(w.every() == 1);  // readers that say nothing take whole frames only
  const auto changed = w.reads_changed();
  ra.set_every(4);
  CHECK(w.every() == 1);  // b still takes whole frames only
  CHECK(w.reads_beyond_newest());  // no frame yet
  CHECK(w.reads_changed() == changed + 1);
  rb.set_every(2);
  CHECK(w.every() == 1);  // two different k: whole frames, which both take
  rb.set_every(4);
  CHECK(w.every() == 4);
  auto s = w.begin_write();
  REQUIRE(s);
  w.end_write(*s, {1, *s, 10, 1.0, 0, w.reads(), w.every()});
  const auto f = ra.acquire_newer(0);
  REQUIRE(f);
  CHECK(f->every == 4);
  ra.release(f->slot);
  REQUIRE(rb.offered().size() == 1);
  CHECK(rb.offered()[0].every == 4);
  CHECK(rb.acquire_step(10, 0)->every == 4);
  rb.release(*s);
  CHECK_FALSE(w.reads_beyond_newest());
  // A reader that wants whole frames again: the newest is not one it takes, so a frame is due.
  rb.set_every(1);
  CHECK(w.every() == 1);
  CHECK(w.reads_beyond_newest());
  // A lease opened again takes whole frames until its reader says otherwise.
  rb.set_every(4);
  w.close_lease(*b);
  const auto c = w.open_lease(::getpid());
  REQUIRE(c);
  CHECK(w.every() == 1);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
TEST_CASE("the control block has the byte layout docs/protocol.md publishes", "[unit][ring]") {
  // Third-party readers map this block from the document alone: these offsets are protocol.
  using cuview::ControlBlock;
  CHECK(offsetof(ControlBlock, magic) == 0);
  CHECK(offsetof(ControlBlock, layout) == 8);
  CHECK(offsetof(ControlBlock, slot_count) == 12);
  CHECK(offsetof(ControlBlock, session) == 16);
  CHECK(offsetof(ControlBlock, daemon_pid) == 64);
  CHECK(offsetof(ControlBlock, state) == 68);
  CHECK(offsetof(ControlBlock, heartbeat_ns) == 72);
  CHECK(offsetof(ControlBlock, latest) == 80);
  CHECK(offsetof(ControlBlock, notify) == 88);
  CHECK(offsetof(ControlBlock, frames_skipped) == 96);
  CHECK(offsetof(ControlBlock, slots) == 104);
  CHECK(sizeof(cuview::SlotMeta) == 40);
  CHECK(offsetof(cuview::SlotMeta, fields) == 32);
  CHECK(offsetof(ControlBlock, leases) == 744);
  CHECK(sizeof(cuview::Lease) == 80);
  CHECK(offsetof(cuview::Lease, holds) == 8);
  CHECK(offsetof(cuview::Lease, reads) == 72);
  CHECK(offsetof(ControlBlock, reads_changed) == 5864);
  CHECK(offsetof(ControlBlock, slot_every) == 5872);
  CHECK(offsetof(ControlBlock, lease_every) == 5936);
  CHECK(sizeof(ControlBlock) == 6192);
  CHECK(cuview::kControlLayout == 3);
  CHECK(cuview::kControlMagic == 0x31424b4c43574556ull);
}
#pragma GCC diagnostic pop
