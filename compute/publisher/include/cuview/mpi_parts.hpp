// Publishing from an MPI program: every rank embeds a Publisher for its own block of a
// decomposed grid, all under one name, and viewers show the blocks as one picture
// (docs/sdk.md "Publishing from an MPI program", docs/protocol.md "Parts",
// examples/embed-mpi/). Header-only: it includes <mpi.h> and is compiled only by the program
// that includes it; the cuview libraries never link MPI. Link your program with MPI yourself
// (CMake: find_package(MPI REQUIRED COMPONENTS C), target_link_libraries(... MPI::MPI_C)).
//
//   cuview::Publisher pub({.name = "heat", .backend = "host",
//                          .part = cuview::mpi::part_options(comm, {H, W}, {first_row, 0})});  // collective
//   pub.add_field(...);  pub.add_param(...);  pub.start();  MPI_Barrier(comm);
//   for (;;) {
//     const cuview::mpi::Turn turn = cuview::mpi::next_turn(pub, comm, 8, g_stop != 0);  // collective
//     if (turn.stop) break;
//     apply(turn.requests);                      // the same params, reset and strokes on every rank
//     advance(turn.steps);                       // 0 while paused; halos with your neighbours
//     step += turn.steps;
//     cuview::mpi::publish(pub, comm, step, t);  // collective: every rank publishes the same steps
//   }
//
// The rules these calls keep for you: only part 0 takes steering, and its requests reach every
// rank in the same turn, before any rank steps; every rank takes the same number of steps; every
// rank publishes a frame of the same steps (a viewer assembles a picture from one frame of every
// part at one step). Every call here is collective over `comm`: every rank calls it, in the same
// order, from the thread that uses the Publisher. MPI failures throw cuview::Error(Errc::system)
// naming the call (with the default error handler MPI_ERRORS_ARE_FATAL MPI aborts the job first).
#pragma once

// MPI's C API only: Open MPI's and MPICH's deprecated C++ bindings would need their C++ library.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cuview/mpi_turn.hpp"
#include "cuview/publisher.hpp"

namespace cuview::mpi {

namespace detail {

inline int rank_of(MPI_Comm comm, const char* who) {
  if (comm == MPI_COMM_NULL)
    throw Error(Errc::bad_value, std::string(who) +
                                     ": the communicator is MPI_COMM_NULL; pass the communicator "
                                     "of the ranks that publish the grid (e.g. MPI_COMM_WORLD)");
  int rank = 0;
  if (const int rc = MPI_Comm_rank(comm, &rank); rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw Error(Errc::system, std::string(who) + ": MPI_Comm_rank failed: " + std::string(text, len) +
                                  "; call MPI_Init before any cuview::mpi function and pass a valid communicator");
  }
  return rank;
}

/// Throws Error(system) naming `call`, what this rank was doing and the MPI error.
inline void check(int rc, const char* call, const std::string& doing) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(Errc::system, doing + ": " + call + " failed: " + std::string(text, len) +
                                "; every rank of the communicator must make the same cuview::mpi calls in the "
                                "same order (is a rank stopped or dead?)");
}

/// Completes a non-blocking collective without spinning a core: tests a moment at once (while
/// the run steps, a turn's collectives meet within microseconds), then sleeps a little longer
/// each time (10 µs up to 1 ms), so that a rank waiting for a paused rank 0 costs nothing.
inline void wait(MPI_Request& request, const std::string& doing) {
  int done = 0;
  for (int i = 0; i < 2000 && done == 0; ++i) check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test", doing);
  for (long sleep_ns = 10'000; done == 0; sleep_ns = std::min(sleep_ns * 2, 1'000'000L)) {
    const timespec ts{0, sleep_ns};
    nanosleep(&ts, nullptr);
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test", doing);
  }
}

/// MPI_Ibcast from rank 0, completed by wait(). Every rank broadcasts with Ibcast (a blocking
/// and a non-blocking collective never match each other).
inline void broadcast(void* data, int count, MPI_Datatype type, MPI_Comm comm, const std::string& doing) {
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ibcast(data, count, type, 0, comm, &request), "MPI_Ibcast", doing);
  wait(request, doing);
}

}  // namespace detail

/// This rank's PartOptions for PublisherOptions::part, from `comm`: part index = rank, count =
/// size, PartOptions::rank = the rank; a group id (64 random bits in hex, from
/// std::random_device) made by rank 0 and broadcast, so that clients never mix parts of two runs;
/// host left empty (the publisher fills in this host's name). `global_dims` is the whole grid and
/// `offset` the first cell of this rank's block in it, both slowest axis first ({height, width}
/// and {y, x}; {depth, height, width} and {z, y, x}); the block's size is the grid of the fields
/// the rank declares (the Publisher checks that the block fits).
/// Collective: every rank of `comm` calls it, before constructing its Publisher.
/// Throws Error(bad_value) for MPI_COMM_NULL, Error(out_of_range) for an empty global grid or an
/// offset outside it, Error(system) when an MPI call fails.
inline PartOptions part_options(MPI_Comm comm, Axes global_dims, Axes offset) {
  const char* who = "cuview::mpi::part_options";
  const int rank = detail::rank_of(comm, who);
  int size = 0;
  detail::check(MPI_Comm_size(comm, &size), "MPI_Comm_size", who);
  const std::string doing = std::string(who) + " (rank " + std::to_string(rank) + " of " + std::to_string(size) + ")";
  bool inside = !global_dims.empty() && global_dims.size() <= kMaxAxes && offset.size() == global_dims.size();
  for (std::size_t i = 0; inside && i < offset.size(); ++i) inside = global_dims[i] > 0 && offset[i] < global_dims[i];
  if (!inside)
    throw Error(Errc::out_of_range, doing + ": the block at " + position_text(offset) +
                                        " is not inside the global grid of " + axes_text(global_dims) +
                                        " (fastest axis first; a grid has 1 to " + std::to_string(kMaxAxes) +
                                        " axes); give the whole grid's dims and this rank's first cell in it, "
                                        "both slowest axis first and as many as the grid's axes");
  char group[17] = {};
  if (rank == 0) {
    std::random_device random;
    const std::uint64_t id = (std::uint64_t{random()} << 32) ^ random();
    static constexpr char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; ++i) group[i] = hex[(id >> (60 - 4 * i)) & 0xf];
  }
  detail::check(MPI_Bcast(group, 16, MPI_CHAR, 0, comm), "MPI_Bcast", doing + ": sending the group id");
  PartOptions part;
  part.index = static_cast<std::uint32_t>(rank);
  part.count = static_cast<std::uint32_t>(size);
  part.offset = std::move(offset);
  part.global_dims = std::move(global_dims);
  part.group = std::string(group, 16);
  part.rank = rank;
  return part;
}

/// Collective over `comm`, once per batch, before stepping. Rank 0 polls its publisher (the
/// only part that takes steering), decides how many of `steps_wanted` steps every rank takes
/// (Publisher::steps_allowed: all of them while running, 0 while paused), whether to stop
/// (`stop` on rank 0, e.g. its SIGINT/SIGTERM flag, or a `shutdown` request) and whether every
/// rank checkpoints this step (`checkpoint_due` on rank 0, e.g. its own timer, or `checkpoint`
/// requests, whose tickets only rank 0's turn holds), and broadcasts that with the requests
/// (cuview/mpi_turn.hpp); every other rank polls its own publisher (for viewers that arrived),
/// adopts rank 0's parameters and paused state (Publisher::follow) and returns the same turn.
/// `stop` and `checkpoint_due` on ranks other than 0 are ignored: mpirun forwards SIGINT and
/// SIGTERM to every rank, and rank 0's flag ends the run on all of them in the same turn.
/// While paused with nothing to do, rank 0 waits here up to 50 ms for a request
/// (Publisher::wait_for_requests) before answering, so a paused loop does not spin; the other
/// ranks wait in the broadcast sleeping (MPI_Ibcast, MPI_Test and a short nanosleep), not
/// spinning. After it: apply `requests` on every rank, step `steps`, then call publish() below —
/// every turn, also with steps == 0 (that is when a change made while paused is shown).
/// The publisher must be started (Publisher::start() or a first publish) on every rank before.
/// Throws Error(system) when an MPI call fails, Error(bad_message) when rank 0's turn does not
/// decode (ranks running different builds).
inline Turn next_turn(Publisher& pub, MPI_Comm comm, std::uint64_t steps_wanted, bool stop = false,
                      bool checkpoint_due = false) {
  const int rank = detail::rank_of(comm, "cuview::mpi::next_turn");
  const std::string doing = "cuview::mpi::next_turn of '" + pub.name() + "' (rank " + std::to_string(rank) + ")";
  Requests polled = pub.poll();  // every part: arrivals, refusals
  Turn turn;
  std::string bytes;
  if (rank == 0) {
    for (bool waited = false;; waited = true) {
      turn.stop = stop || polled.shutdown;
      turn.steps = turn.stop ? 0 : pub.steps_allowed(steps_wanted);
      turn.checkpoint = !turn.stop && (checkpoint_due || !polled.checkpoints.empty());
      if (waited || turn.stop || turn.steps > 0 || turn.checkpoint || polled.changes_frame()) break;
      // Paused with nothing new: wait for a request here rather than turn the loop over at once.
      pub.wait_for_requests(std::chrono::milliseconds(50));
      Requests more = pub.poll();
      polled.params = more.params.empty() ? std::move(polled.params) : std::move(more.params);
      polled.reset = polled.reset || more.reset;
      polled.strokes.insert(polled.strokes.end(), more.strokes.begin(), more.strokes.end());
      polled.checkpoints.insert(polled.checkpoints.end(), more.checkpoints.begin(), more.checkpoints.end());
      polled.shutdown = polled.shutdown || more.shutdown;
      polled.reader_arrived = polled.reader_arrived || more.reader_arrived;
    }
    turn.paused = pub.paused();
    turn.requests = std::move(polled);
    turn.requests.shutdown = turn.stop;
    bytes = encode_turn(turn);
  }
  std::uint64_t size = bytes.size();
  detail::broadcast(&size, 1, MPI_UINT64_T, comm, doing + ": receiving the turn's size");
  bytes.resize(size);
  detail::broadcast(bytes.data(), static_cast<int>(size), MPI_BYTE, comm, doing + ": receiving the turn");
  if (rank == 0) return turn;
  turn = decode_turn(bytes, doing);
  pub.follow(turn.requests, turn.paused);
  return turn;
}

namespace detail {
/// Whether any rank's publisher wants a frame now and every rank's budget lets one start
/// (MPI_Allreduce with MPI_MAX over both).
inline bool any_wants_frame(Publisher& pub, MPI_Comm comm) {
  const int rank = rank_of(comm, "cuview::mpi::publish");
  int mine[2] = {pub.frame_wanted() ? 1 : 0, pub.within_budget() ? 0 : 1}, any[2] = {0, 0};
  check(MPI_Allreduce(mine, any, 2, MPI_INT, MPI_MAX, comm), "MPI_Allreduce",
        "cuview::mpi::publish of '" + pub.name() + "' (rank " + std::to_string(rank) + ")");
  if (any[0] == 0 || any[1] != 0) return false;
  pub.publish_next_now();
  return true;
}
}  // namespace detail

/// Collective over `comm`, after every turn (also a paused one): publishes `step` (simulated
/// time `t`) on every rank when any rank's publisher wants a frame (Publisher::frame_wanted: a
/// viewer reads that part and a frame is due, or a change or a new viewer asked for one) and
/// every rank's cost budget allows one — agreed with MPI_Allreduce — so that every part offers
/// the same steps and none exceeds its budget; otherwise
/// records the step (Publisher::record_step) for `status`. A rank whose own part has no reader
/// publishes nothing even then (Publisher::publish records the step). Publishes the declared
/// buffers, queued on `stream` as Publisher::publish does (`{}`: the default stream; ignored on
/// the host backend). Returns whether this rank published a frame.
/// Throws Error(system) when the MPI call fails, and what Publisher::publish throws.
inline bool publish(Publisher& pub, MPI_Comm comm, std::uint64_t step, double t, cuda::StreamRef stream = {}) {
  if (!detail::any_wants_frame(pub, comm)) {
    pub.record_step(step, t);
    return false;
  }
  return pub.publish(step, t, stream);
}

/// The same, with `write` filling this rank's slot instead of copying the declared buffers (for
/// fields declared without a buffer; see FieldWriter).
inline bool publish(Publisher& pub, MPI_Comm comm, std::uint64_t step, double t, const FieldWriter& write,
                    cuda::StreamRef stream = {}) {
  if (!detail::any_wants_frame(pub, comm)) {
    pub.record_step(step, t);
    return false;
  }
  return pub.publish(step, t, write, stream);
}

}  // namespace cuview::mpi
