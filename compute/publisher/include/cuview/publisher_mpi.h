/* Publishing from an MPI program in C or Fortran: every rank publishes its block of a decomposed
 * grid under one name, and viewers see one picture (libcuview-publisher-mpi.so, which links MPI;
 * libcuview-publisher.so never does). The rules: only rank 0 takes steering, and a turn hands its
 * requests to every rank before any steps; every rank takes the same steps and publishes the same
 * frames. Every call here is collective over `comm`, in the same order on every rank.
 *
 *   uint64_t global[3] = {D, H, W}, offset[3] = {rank * D / size, 0, 0}, local[3] = {D / size, H, W};
 *   cuview_publisher_mpi_create(MPI_COMM_WORLD, "heat", "host", -1, "auto", "", 3, global, offset, &pub);
 *   cuview_publisher_add_field(pub, "T", "float32", 3, local, 1, T, CUVIEW_MEMORY_HOST, "");
 *   cuview_publisher_start(pub);
 *   for (;;) {
 *     uint64_t steps;
 *     cuview_publisher_mpi_turn(pub, MPI_COMM_WORLD, 8, stop, &steps);  // then the poll accessors
 *     if (cuview_publisher_shutdown_requested(pub)) break;            // the same on every rank
 *     advance(steps); step += steps;
 *     cuview_publisher_mpi_publish(pub, MPI_COMM_WORLD, step, t, NULL, NULL);
 *   }
 *
 * Fortran passes its communicator as an integer (MPI_Fint: `use mpi`'s, or mpi_f08's comm%MPI_VAL):
 * the _f variants. */
#ifndef CUVIEW_PUBLISHER_MPI_H
#define CUVIEW_PUBLISHER_MPI_H

/* MPI's C API only: Open MPI's and MPICH's deprecated C++ bindings would need their C++ library. */
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include "cuview/publisher.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cuview_publisher_create for this rank's part: `ndim` axes of the whole grid (`global`) and this
 * rank's first cell in it (`offset`), slowest axis first; its block's size is that of the fields
 * it declares. Rank 0 makes the run's group id and broadcasts it. */
CUVIEW_API cuview_status cuview_publisher_mpi_create(MPI_Comm comm, const char* name, const char* backend, int device,
                                                     const char* sharing, const char* options, uint32_t ndim,
                                                     const uint64_t* global, const uint64_t* offset,
                                                     cuview_publisher** out);
/* Once per batch, before stepping: rank 0 polls and decides how many of `wanted` steps every rank
 * takes (0 while paused) and whether to stop (`stop` on rank 0, or a shutdown request), and every
 * rank gets the same: *steps, and the poll accessors (changed parameters, reset, strokes in global
 * coordinates, shutdown). */
CUVIEW_API cuview_status cuview_publisher_mpi_turn(cuview_publisher* pub, MPI_Comm comm, uint64_t wanted, int stop,
                                                   uint64_t* steps);
/* After every turn: every rank publishes `step` when any rank's viewer wants a frame and every
 * rank's budget allows one; otherwise records it. `data`: NULL for the declared arrays, or one
 * array per field (cuview_publisher_publish_data). */
CUVIEW_API cuview_status cuview_publisher_mpi_publish(cuview_publisher* pub, MPI_Comm comm, uint64_t step, double time,
                                                      const void* const* data, void* stream, int* published);

CUVIEW_API cuview_status cuview_publisher_mpi_create_f(MPI_Fint comm, const char* name, const char* backend,
                                                       int device, const char* sharing, const char* options,
                                                       uint32_t ndim, const uint64_t* global, const uint64_t* offset,
                                                       cuview_publisher** out);
CUVIEW_API cuview_status cuview_publisher_mpi_turn_f(cuview_publisher* pub, MPI_Fint comm, uint64_t wanted, int stop,
                                                     uint64_t* steps);
CUVIEW_API cuview_status cuview_publisher_mpi_publish_f(cuview_publisher* pub, MPI_Fint comm, uint64_t step,
                                                        double time, const void* const* data, void* stream,
                                                        int* published);

#ifdef __cplusplus
}
#endif

#endif /* CUVIEW_PUBLISHER_MPI_H */
