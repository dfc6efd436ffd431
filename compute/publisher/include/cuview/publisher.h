/* cuview's publisher for C (C99), and for Fortran and Python, which are thin layers over it: make a
 * program's arrays visible to cuview viewers while it runs (libcuview-publisher.so; docs/sdk.md).
 *
 *   cuview_publisher* pub;
 *   uint64_t dims[3] = {depth, height, width};                  // slowest axis first, x fastest
 *   if (cuview_publisher_create("heat", "auto", -1, "auto", "max_cost=0.01", &pub) != CUVIEW_OK ||
 *       cuview_publisher_add_field(pub, "T", "float32", 3, dims, 1, d_T, CUVIEW_MEMORY_DEVICE, "") ||
 *       cuview_publisher_add_param(pub, "alpha", 0.1, 0, 1, 0, "diffusivity") ||
 *       cuview_publisher_start(pub)) {
 *     fprintf(stderr, "%s\n", cuview_last_error());
 *     return 1;
 *   }
 *   for (step = 0; !cuview_publisher_shutdown_requested(pub); ++step) {
 *     cuview_publisher_poll(pub);                               // steering, applied where you choose
 *     cuview_publisher_param(pub, "alpha", &alpha);
 *     advance(stream);
 *     cuview_publisher_publish(pub, step, t, stream, NULL);     // never waits for a viewer
 *   }
 *   cuview_publisher_close(pub, "shutdown");
 *
 * Errors: every call that can fail returns a cuview_status (cuview/status.h, shared with the
 * client's C API); cuview_last_error() is the sentence naming what failed and what to do. A call
 * that fails changes nothing. Threads: a publisher is used by one thread at a time (the program's
 * own loop); its background thread answers viewers and never calls into the program. GPUs: no call
 * changes the calling thread's current device. Strings returned stay valid until the next call
 * of the same kind on that publisher, or until it is closed. ABI: the functions are versioned
 * (CUVIEW_PUBLISHER_1); CUVIEW_PUBLISHER_ABI changes only when a call does. */
#ifndef CUVIEW_PUBLISHER_H
#define CUVIEW_PUBLISHER_H

#include <stddef.h>
#include <stdint.h>

#include "cuview/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CUVIEW_PUBLISHER_ABI 1

typedef struct cuview_publisher cuview_publisher;

/* Where an array lives. On the CUDA backend device memory is copied into the frame on the stream
 * given to publish; host memory is copied before publish returns. The host backend reads host
 * memory only. */
typedef enum cuview_memory { CUVIEW_MEMORY_HOST = 0, CUVIEW_MEMORY_DEVICE = 1 } cuview_memory;

/* The ABI version of the library loaded (CUVIEW_PUBLISHER_ABI it was built with). */
CUVIEW_API int cuview_publisher_abi(void);

/* Claims `name` (viewers attach with --name NAME) and chooses where frames live. backend: "auto"
 * (CUDA where usable, else the host), "cuda" or "host"; device: the GPU, -1 for the calling
 * thread's current one; sharing: "auto", "legacy", "vmm" or "pool" (docs/sharing.md); NULL means
 * "auto" for both. options: "" or NULL, or space-separated KEY=VALUE of
 *   title=TEXT   shown by viewers and `cuview-ctl status`      slots=K     ring slots (1-16, 3)
 *   fps=N        frames per second at most (60; 0: no cap)       paused=1    start paused
 *   max_cost=P   the share of the run publishing may take (0.01 = 1 %; 1: no budget)
 *   log=LEVEL    the library's own log lines, on stderr (never stdout): trace, debug, info (the
 *                default), warn, error or off; the environment variable CUVIEW_LOG wins over it
 *   api=LANG     c (the default), fortran or python: the language whose calls and arguments error
 *                messages name (the Fortran module and the Python package set it)
 *   part=K/N offset=Z,Y,X global=D,H,W group=ID rank=R host=NAME
 *                one part of a grid decomposed over processes (offset and global slowest axis
 *                first, as many as the fields' axes; cuview_publisher_mpi_create fills these in).
 * CUVIEW_ALREADY_RUNNING when a publisher of that name runs; CUVIEW_BAD_VALUE for an option that
 * is not one of these. On success *out must be freed with cuview_publisher_close. */
CUVIEW_API cuview_status cuview_publisher_create(const char* name, const char* backend, int device,
                                                 const char* sharing, const char* options, cuview_publisher** out);

/* The same options, typed: one member per option of the string above (which is parsed into this
 * struct, so the two can never differ). cuview_publisher_options_init fills in every default and
 * `size` (this header's sizeof: a later library reads only the members a program was built with);
 * then set what you need. Strings and arrays need only live during the call. */
typedef struct cuview_publisher_options {
  size_t size;
  const char* title;  /* NULL: "embedded" */
  uint32_t slots;     /* ring slots, 1-16 (3) */
  double fps;         /* frames per second at most (60; 0: no cap) */
  double max_cost;    /* the share of the run publishing may take (0.01; 1: no budget) */
  int paused;         /* start paused (0) */
  const char* log;    /* trace, debug, info, warn, error, off; NULL: as it is (CUVIEW_LOG wins) */
  const char* api;    /* "c" (NULL), "fortran" or "python": whose calls error messages name */
  /* One part of a grid decomposed over processes when part_count > 0 (cuview_publisher_mpi_create
   * fills these in): part part_index of part_count, whose block starts at part_offset in the global
   * grid part_global (part_ndim values each, slowest axis first). */
  uint32_t part_index, part_count, part_ndim;
  const uint64_t* part_offset;
  const uint64_t* part_global;
  const char* part_group; /* the same in every part of one run; NULL: none */
  int part_rank;          /* shown by status; -1: none */
  const char* part_host;  /* NULL: this host's name */
} cuview_publisher_options;
CUVIEW_API void cuview_publisher_options_init(cuview_publisher_options* options);
/* cuview_publisher_create with typed options (NULL is refused: init them). */
CUVIEW_API cuview_status cuview_publisher_create_with(const char* name, const char* backend, int device,
                                                      const char* sharing, const cuview_publisher_options* options,
                                                      cuview_publisher** out);

/* Declarations, before start. A field: `ndim` (1-3) axes in `dims`, slowest first ({width},
 * {height, width} or {depth, height, width}: x fastest), each 1 to 32768 cells; `components` (1 to
 * 4: a scalar, a vector, an RGBA colour; viewers show a vector as its magnitude) values of `dtype`
 * ("float32", "float64", "float16", "int32", "int64", "uint8", "bfloat16") per cell, contiguous, on the first grid
 * (cuview_publisher_add_field_on: a field on a declared grid with coordinates, or a strided array).
 * `data`: the array read at every publish, or NULL to hand the arrays to cuview_publisher_publish_data
 * instead. Refused, naming the field: a name declared twice, a dtype, dims or components that are not
 * these, dims other than the first grid's, memory that is not where `memory` says. */
CUVIEW_API cuview_status cuview_publisher_add_field(cuview_publisher* pub, const char* name, const char* dtype,
                                                    uint32_t ndim, const uint64_t* dims, uint32_t components,
                                                    const void* data, cuview_memory memory, const char* help);
/* A grid fields are declared on (cuview_publisher_add_field_on), with the program's coordinates:
 * `ndim` (1-3) axes of `dims` cells, slowest first; cell i along axis k has its centre at
 * origin[k] + i * spacing[k], in `units` (e.g. "m"; NULL or "": unnamed). `origin` and `spacing`
 * (ndim values each, slowest first) may be NULL: 0 and 1. Viewers show positions in these
 * coordinates and draw the grid with its aspect ratio. A publisher may declare several grids (a
 * volume, a surface, a probe line); the first is the run's own, which the parts of a decomposed run
 * decompose. Refused, naming the grid: a name declared twice, a side out of range, a spacing that is
 * not above 0. */
CUVIEW_API cuview_status cuview_publisher_add_grid(cuview_publisher* pub, const char* name, uint32_t ndim,
                                                   const uint64_t* dims, const double* origin, const double* spacing,
                                                   const char* units);
/* A field on grid `grid`: `components` values of `dtype` per cell, read from `data` in place at every
 * publish. `strides` (NULL: contiguous, C order): bytes from one cell to the next along each axis of
 * the grid, slowest first — a section of a larger array, such as the interior of an array with ghost
 * cells (point `data` at its first interior cell). The fastest axis's stride must be one cell's size
 * (components * the dtype's size); each other's at least the span of the axes inside it. The
 * publisher copies the section into the ring itself, on the GPU for device memory. */
CUVIEW_API cuview_status cuview_publisher_add_field_on(cuview_publisher* pub, const char* grid, const char* name,
                                                       const char* dtype, uint32_t components, const void* data,
                                                       const int64_t* strides, cuview_memory memory,
                                                       const char* help);
/* A steerable parameter: its default `value`, the range every change is checked against, and
 * whether it is a whole number. */
CUVIEW_API cuview_status cuview_publisher_add_param(cuview_publisher* pub, const char* name, double value,
                                                    double min, double max, int integer, const char* help);
/* A named set of values of declared parameters: "F=0.03 k=0.06". */
CUVIEW_API cuview_status cuview_publisher_add_preset(cuview_publisher* pub, const char* name, const char* values);
/* The same, typed: `count` parameters named params[i] set to values[i] (the string form is parsed into this). */
CUVIEW_API cuview_status cuview_publisher_add_preset_values(cuview_publisher* pub, const char* name, size_t count,
                                                            const char* const* params, const double* values);
/* Something viewers draw into (kind "mask": a 0/1 value per cell); strokes reach poll. */
CUVIEW_API cuview_status cuview_publisher_add_input(cuview_publisher* pub, const char* name, const char* kind,
                                                    const char* help);
/* Start from preset `name` instead of the defaults. */
CUVIEW_API cuview_status cuview_publisher_use_preset(cuview_publisher* pub, const char* name);
/* Ends the declarations, creates the ring and starts answering viewers. Call it once, after the
 * last declaration and before the first cuview_publisher_publish (or _publish_data, _mpi_turn,
 * _mpi_publish), which refuse to run before it with CUVIEW_BAD_VALUE; declarations after it are
 * refused too. */
CUVIEW_API cuview_status cuview_publisher_start(cuview_publisher* pub);

/* Publishes the declared arrays as frame `step` at simulated time `time` when a viewer reads, a
 * frame is due (fps, max_cost) and a slot is free; otherwise records the step and copies nothing.
 * Never waits for a viewer. `stream`: a cudaStream_t (NULL: the default stream) the copies are
 * queued on, after the work that wrote the arrays; ignored on the host backend. *published (may
 * be NULL): 1 when a frame was published. CUVIEW_BAD_VALUE when a field was declared without data. */
CUVIEW_API cuview_status cuview_publisher_publish(cuview_publisher* pub, uint64_t step, double time, void* stream,
                                                  int* published);
/* The same, reading field k from data[k] (count: the number of fields, in declaration order)
 * instead of the declared arrays: for programs whose arrays move (Python's). Each must be the
 * declared size, in the declared memory. */
CUVIEW_API cuview_status cuview_publisher_publish_data(cuview_publisher* pub, uint64_t step, double time,
                                                       size_t count, const void* const* data, void* stream,
                                                       int* published);
/* 1 when a publish now would write a frame (a viewer reads, a frame is due, the budget allows):
 * for bindings that find their arrays only when one is written (Python's). */
CUVIEW_API int cuview_publisher_frame_due(cuview_publisher* pub);
/* Records the step (for `cuview-ctl status`) without publishing. */
CUVIEW_API cuview_status cuview_publisher_record_step(cuview_publisher* pub, uint64_t step, double time);

/* Steering. poll takes what viewers asked since the last poll; the accessors below read it until
 * the next poll. */
CUVIEW_API cuview_status cuview_publisher_poll(cuview_publisher* pub);
/* How many parameters changed (all of them when any did: their values are those in effect), and
 * change i. */
CUVIEW_API size_t cuview_publisher_changed_count(const cuview_publisher* pub);
CUVIEW_API cuview_status cuview_publisher_changed(const cuview_publisher* pub, size_t i, const char** name,
                                                  double* value);
/* The value in effect of parameter `name` (the default until a poll returned a change). */
CUVIEW_API cuview_status cuview_publisher_param(const cuview_publisher* pub, const char* name, double* value);
/* Whether the last poll held a reset (restart from the initial state) or a shutdown request. */
CUVIEW_API int cuview_publisher_reset_requested(const cuview_publisher* pub);
CUVIEW_API int cuview_publisher_shutdown_requested(const cuview_publisher* pub);
/* Strokes on declared inputs, oldest first: set the cells within `radius` of (x, y[, z]) (grid
 * coordinates; z is -1 for a 2-D grid) to `value`. */
CUVIEW_API size_t cuview_publisher_stroke_count(const cuview_publisher* pub);
CUVIEW_API cuview_status cuview_publisher_stroke(const cuview_publisher* pub, size_t i, const char** input,
                                                 double* x, double* y, double* z, double* radius, int* value);
/* How many of `wanted` steps to take now: all while running, while paused only those `step`
 * requests allowed (often 0: then cuview_publisher_wait). */
CUVIEW_API uint64_t cuview_publisher_steps_allowed(cuview_publisher* pub, uint64_t wanted);
CUVIEW_API int cuview_publisher_paused(const cuview_publisher* pub);
/* Blocks until a viewer sends a request or timeout_ms pass. */
CUVIEW_API cuview_status cuview_publisher_wait(cuview_publisher* pub, int timeout_ms);

/* Checkpoints the program writes itself. enable: viewers may ask for one (`cuview-ctl checkpoint`);
 * `dir` where they go, `every_s` the period (0: on request only). Requests arrive by poll: count,
 * then request i's ticket and file (absolute; "" for the program's own choice). Answer each. */
CUVIEW_API cuview_status cuview_publisher_checkpoint_enable(cuview_publisher* pub, const char* dir, double every_s);
CUVIEW_API size_t cuview_publisher_checkpoint_count(const cuview_publisher* pub);
CUVIEW_API cuview_status cuview_publisher_checkpoint_request(const cuview_publisher* pub, size_t i, uint64_t* ticket,
                                                             const char** path);
/* The checkpoint of `ticket` (0: a periodic one) was written to `path` at `step`, or failed. */
CUVIEW_API cuview_status cuview_publisher_checkpoint_written(cuview_publisher* pub, uint64_t ticket, const char* path,
                                                             uint64_t step, double time, uint64_t bytes);
CUVIEW_API cuview_status cuview_publisher_checkpoint_failed(cuview_publisher* pub, uint64_t ticket, const char* error);

/* "cuda" or "host", and the device in words. */
CUVIEW_API const char* cuview_publisher_backend(const cuview_publisher* pub);
CUVIEW_API const char* cuview_publisher_device(const cuview_publisher* pub);

/* Tells attached viewers the publisher is going and why ("shutdown", or the failure that ended the
 * program; NULL: "shutdown"), waits for the copies queued, and frees it. NULL is ignored. */
CUVIEW_API void cuview_publisher_close(cuview_publisher* pub, const char* reason);

#ifdef __cplusplus
}
#endif

#endif /* CUVIEW_PUBLISHER_H */
