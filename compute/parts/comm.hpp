// The ranks of a decomposed run, as cuview-compute's loop sees them: who we are, the turn (the
// SDK's, as any program split over ranks takes it), the few collectives around it, and the halo
// between neighbouring slabs. No MPI here: the MPI
// implementation (mpi_comm.cpp, library cuview_parts) is linked into cuview-compute alone, so
// the publisher library and the tests that run the loop in-process never depend on MPI.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cuview/mpi_turn.hpp"
#include "sims/slab.hpp"

namespace cuview::parts {

class Comm {
 public:
  virtual ~Comm() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  /// Rank among the ranks of this host (picks the GPU: one rank per GPU).
  [[nodiscard]] virtual int local_rank() const = 0;
  /// The SDK's cuview::mpi::next_turn over these ranks: rank 0 polls `pub` and decides, every
  /// rank returns the same turn (see cuview/mpi_parts.hpp). Collective.
  [[nodiscard]] virtual mpi::Turn next_turn(Publisher& pub, std::uint64_t steps_wanted, bool stop,
                                            bool checkpoint_due) = 0;
  /// Rank 0's `bytes` to every rank. Ranks that wait for it sleep between checks rather than spin:
  /// a paused run must leave the CPU to the viewers.
  virtual void broadcast(std::string& bytes) = 0;
  /// Element-wise maximum over all ranks, in place.
  virtual void max(std::span<std::int64_t> values) = 0;
  /// Every rank's `mine`, in rank order.
  [[nodiscard]] virtual std::vector<std::string> allgather(const std::string& mine) = 0;
  virtual void barrier() = 0;
  /// The halo between neighbouring ranks (rank − 1 is "up"): host buffers through MPI; device
  /// buffers through NCCL on CUDA device `cuda_device` (−1: the host backend, no NCCL).
  /// Throws Error naming what is missing (no NCCL, two ranks on one GPU).
  [[nodiscard]] virtual std::unique_ptr<sim::Halo> make_halo(int cuda_device) = 0;
  /// Ends every rank of the job at once (after this rank has said why). Never returns.
  [[noreturn]] virtual void abort(int code) noexcept = 0;
};

/// Whether this process was started by an MPI launcher as one of several ranks (mpirun's
/// environment: Open MPI, PMIx, MPICH/Slurm's PMI), without initialising MPI.
[[nodiscard]] int launched_ranks() noexcept;

/// Initialises MPI (threads: funneled) and returns the job's ranks; call from main() after the
/// shutdown signals are blocked, so that MPI's threads inherit the mask. Throws Error(unsupported)
/// when this cuview-compute was built without MPI.
[[nodiscard]] std::unique_ptr<Comm> init_mpi(int* argc, char*** argv);

}  // namespace cuview::parts
