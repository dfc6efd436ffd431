/* cuview's client library for C (C99) and language bindings (the Python package uses it through
 * ctypes). It is the C++ client library underneath (cuview/client.hpp), on opaque handles.
 *
 *   cuview_client* c;
 *   if (cuview_attach("default", "my tool", 0, 3000, &c) != CUVIEW_OK) {
 *     fprintf(stderr, "%s\n", cuview_last_error());
 *     return 1;
 *   }
 *   cuview_frame* f;
 *   if (cuview_next_frame(c, 1000, &f) == CUVIEW_OK) {
 *     cuview_block b;
 *     cuview_block_info(c, 0, &b);                // field 0: name, dtype, shape, strides
 *     const void* data = cuview_frame_data(f, 0); // device pointer on CUDA, host pointer on host
 *     ...                                         // the frame is complete (waited for on the host)
 *     cuview_frame_release(f);                    // the publisher may write the slot again
 *   }
 *   cuview_detach(c);
 *
 * Errors: every call that can fail returns a cuview_status; cuview_last_error() is the sentence
 * (naming what failed and what to do) of the last failure on the calling thread.
 * Threads: a client may be used from several threads; a frame by one thread at a time.
 * Memory: strings returned by a call stay valid until the client (or frame) is freed, or until the
 * same call is made again on it, whichever is first. */
#ifndef CUVIEW_CLIENT_H
#define CUVIEW_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "cuview/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuview_client cuview_client;
typedef struct cuview_frame cuview_frame;

/* One block of a slot: a field (set == NULL) or one attribute of a particle set. Strings belong to
 * the client. */
typedef struct cuview_block {
  const char* name;
  const char* set;   /* the particle set's name, or NULL for a grid field */
  const char* dtype; /* "float32", "float16", "int32", "uint8", "float64", "int64", "bfloat16" */
  uint32_t components;
  uint32_t ndim;            /* the length of shape and strides */
  const uint64_t* shape;    /* slowest axis first: the axes of the grid the field lies on, then
                               components when > 1; a particle set's {count[, components]} */
  const uint64_t* strides;  /* bytes, one per axis of shape */
  uint64_t offset;          /* bytes from the slot's start */
  uint64_t bytes;
} cuview_block;             /* its pointers stay valid while the client does */

/* Attaches to the publisher `name`. control_only != 0: no frames (status and steering only).
 * timeout_ms bounds each control request. On success *out must be freed with cuview_detach. */
CUVIEW_API cuview_status cuview_attach(const char* name, const char* client_name, int control_only, int timeout_ms,
                                       cuview_client** out);
/* Attaches to the publisher `name` of another host through its cuview-gateway: `remote` is
 * "ssh://[user@]host[:port]", "tcp://host:port?key=KEY" or "unix:/path/gateway.sock"
 * (docs/remote.md). It watches views fitted to the link (cuview_watch, cuview_next_view), fetches
 * exact regions (cuview_fetch), and cuview_next_frame gives the newest frame fetched whole into host
 * memory (its grid fields, each in its dtype; cuview_frame_data is NULL for particles, and for
 * fields other than float32 through a gateway from before float64); every other call works as for
 * a local client. On success *out must be freed with cuview_detach. */
CUVIEW_API cuview_status cuview_attach_remote(const char* name, const char* client_name, const char* remote,
                                              int timeout_ms, cuview_client** out);
/* Detaches and frees the client; frames still held stay valid until released. NULL and a group's
 * borrowed clients (cuview_group_part, cuview_group_leader) are ignored. */
CUVIEW_API void cuview_detach(cuview_client* client);

/* The publisher: "cuda" or "host", and its `describe` reply as JSON (docs/protocol.md). */
CUVIEW_API const char* cuview_backend(const cuview_client* client);
/* How the frames reach this process: "shm", "legacy", "vmm" or "pool" ("" when control-only). */
CUVIEW_API const char* cuview_sharing(const cuview_client* client);
CUVIEW_API const char* cuview_describe_json(const cuview_client* client);
/* Blocks in slot order: every field, then every attribute of every particle set. */
CUVIEW_API size_t cuview_block_count(const cuview_client* client);
CUVIEW_API cuview_status cuview_block_info(const cuview_client* client, size_t index, cuview_block* out);
/* Index of the field (or "set.attribute") named `name`, or -1. */
CUVIEW_API long cuview_block_index(const cuview_client* client, const char* name);
/* The `stats` reply as JSON, fresh from the publisher. */
CUVIEW_API cuview_status cuview_stats_json(cuview_client* client, const char** json);

/* Waits up to timeout_ms for a frame newer than the last one returned and holds its slot. On CUDA
 * the frame's data is complete when this returns (waited for on the host: no stream of this
 * process waits on the publisher, which would cost it a context switch). CUVIEW_NO_FRAME: none
 * came; CUVIEW_DAEMON_GONE: the publisher exited or restarted (attach again). */
CUVIEW_API cuview_status cuview_next_frame(cuview_client* client, int timeout_ms, cuview_frame** out);
/* Releases the slot and frees the frame. On CUDA, first finish the GPU work that reads it
 * (cuview_frame_synchronize). NULL and a group frame's parts (cuview_group_frame_part) are ignored. */
CUVIEW_API void cuview_frame_release(cuview_frame* frame);
CUVIEW_API uint64_t cuview_frame_seq(const cuview_frame* frame);
CUVIEW_API uint64_t cuview_frame_step(const cuview_frame* frame);
CUVIEW_API double cuview_frame_time(const cuview_frame* frame);
/* Block `index`'s first byte: a device pointer on CUDA (on GPU cuview_frame_device), a read-only
 * host pointer on the host backend; NULL for an index out of range, or a block the frame does not
 * hold (no reader read it when it was published: cuview_group_read_fields). */
CUVIEW_API const void* cuview_frame_data(const cuview_frame* frame, size_t index);
/* The CUDA device ordinal of the frame's memory in this process; -1 on the host backend. */
CUVIEW_API int cuview_frame_device(const cuview_frame* frame);
/* Makes `stream` (a cudaStream_t) wait for the frame's event. Rarely needed: frames are complete
 * when cuview_next_frame returns; and it costs the publisher a context switch without MPS. */
CUVIEW_API cuview_status cuview_frame_wait_on(const cuview_frame* frame, void* stream);
/* Blocks until all GPU work this process queued on the frame's device is done (before release). */
CUVIEW_API cuview_status cuview_frame_synchronize(const cuview_frame* frame);
/* Checks trailer and checksum (summed on the frame's GPU on CUDA): CUVIEW_OK, or CUVIEW_BAD_VALUE
 * with the problem in cuview_last_error. */
CUVIEW_API cuview_status cuview_frame_verify(const cuview_frame* frame);

/* ---- Remote clients (cuview_attach_remote) ---- */

/* The gateway's URL the client attached through, or "" for a local client. */
CUVIEW_API const char* cuview_remote(const cuview_client* client);

/* One view of a remote frame: view_h × view_w float values, row-major, of one field (a vector
 * field's magnitude), NaN where a sample lies outside the grid. Every value is within error_bound
 * of the true one (0 for "f32"; u8 and u16 quantise [lo, hi]). Strings and values belong to the
 * client, valid until its next cuview_next_view or cuview_detach. */
typedef struct cuview_view {
  uint64_t seq, step;
  double sim_time;
  const char* field;
  const char* encoding; /* "u8", "u16" or "f32" */
  double error_bound;
  float lo, hi;
  uint32_t view_w, view_h;
  double center_x, center_y, pixels_per_cell; /* the region: its centre cell and its scale */
  const float* values;
  size_t count; /* view_w × view_h */
} cuview_view;

/* A rectangle of a field at full resolution: h × w × components float32 values, row-major; exact
 * for float32, float16 and uint8 fields, a float64 or int64 field's (an int32's beyond 2^24)
 * rounded to float. Values belong to the client, valid until its next cuview_fetch or cuview_detach. */
typedef struct cuview_region {
  uint64_t seq, step;
  double sim_time;
  uint32_t x, y, w, h, components;
  const float* values;
  size_t count; /* h × w × components */
} cuview_region;

/* Which cell of a grid of grid_w × grid_h cells sample (row, col) of `view` shows: 1 and the cell
 * in *x, *y; 0 when the sample lies outside the grid. Reads only the view's geometry (its size,
 * center and scale), so a copy of the struct serves after its values are gone. */
CUVIEW_API int cuview_view_cell(const cuview_view* view, uint32_t grid_w, uint32_t grid_h, uint32_t row, uint32_t col,
                                uint32_t* x, uint32_t* y);

/* Field `field` (a field of 3 axes, of any dtype) of `frame` seen whole, as cuview-gui takes it: every
 * k-th cell along each axis, k the smallest giving at most `max_cells` cells a side, float32 on the
 * host, x fastest (a vector field's magnitude). A CUDA frame is waited for on the host and copied
 * by the copy engine: no kernel runs in this process's CUDA context. `dims` receives {depth,
 * height, width, k}; with `out` NULL only `dims` is filled, so that `out` can be sized (depth ×
 * height × width floats). Local clients only (a remote frame's fields are on the host already). */
CUVIEW_API cuview_status cuview_frame_brick(const cuview_client* client, const cuview_frame* frame, size_t field,
                                            uint32_t max_cells, uint32_t dims[4], float* out);

/* A picture of a volume as the viewer's volume view draws it (gui/render/volume_render.hpp): `data`
 * a float32 brick of depth × height × width values in host memory, x fastest. mode "mip"
 * (maximum-intensity projection), "emission" (emission–absorption: `colormap` and the `opacity`
 * preset "ramp", "peak" or "flat" over [lo, hi]) or "isosurface" (at `level`, shaded). The camera
 * is orthographic and orbits the brick's centre: azimuth about y and elevation (degrees; 0, 0
 * looks along +z with x right and y down), zoom (1: the brick's diagonal spans the picture's
 * shorter side), pan (cells, right and down). Writes view_w × view_h pixels to `argb`
 * (0xAARRGGBB, row-major) and, when not NULL, to `values` what each shows: the largest value, the
 * opacity reached, or the surface's distance along the ray (NaN: nothing). Renders on every core. */
CUVIEW_API cuview_status cuview_render_volume(const float* data, uint32_t width, uint32_t height, uint32_t depth,
                                              const char* mode, double azimuth, double elevation, double zoom,
                                              double pan_x, double pan_y, const char* colormap, float lo, float hi,
                                              const char* opacity, float level, uint32_t view_w, uint32_t view_h,
                                              uint32_t* argb, float* values);

/* From now on the gateway sends views of `field` (a grid field of any dtype, seen as float32),
 * replacing an earlier watch: view_w × view_h samples of the grid fitted into them, times `zoom`,
 * centred on cell (center_x, center_y) (NaN: the grid's centre). `encoding`: "auto" or NULL (fitted to the link),
 * or pinned: "u8", "u16", "f32". CUVIEW_BAD_VALUE names an unknown field (and the fields there);
 * CUVIEW_UNSUPPORTED for a local client. */
CUVIEW_API cuview_status cuview_watch(cuview_client* client, const char* field, uint32_t view_w, uint32_t view_h,
                                      double zoom, double center_x, double center_y, const char* encoding);
/* cuview_watch of a volume's field (a grid of 3 axes): views of its plane across `axis` ("x", "y"
 * or "z") at `index`, the region (center, zoom) in that plane's cells: a z-plane's columns are x and
 * rows y, a y-plane's x and z, an x-plane's y and z. A volume's field needs this call
 * (cuview_watch is refused, naming it); CUVIEW_OUT_OF_RANGE names an index past the axis. */
CUVIEW_API cuview_status cuview_watch_plane(cuview_client* client, const char* field, const char* axis, uint32_t index,
                                            uint32_t view_w, uint32_t view_h, double zoom, double center_x,
                                            double center_y, const char* encoding);
/* Waits up to timeout_ms for the next view of the watch and fills *out. Views arrive as frames
 * are published (one right after a watch); CUVIEW_NO_FRAME: none came. CUVIEW_DAEMON_GONE: the
 * publisher, the gateway or the link went away. One thread at a time per client. */
CUVIEW_API cuview_status cuview_next_view(cuview_client* client, int timeout_ms, cuview_view* out);
/* The rectangle [x, x+w) × [y, y+h) of `field` in the newest frame, exact, into *out; w or h 0:
 * to the grid's right or bottom edge. CUVIEW_OUT_OF_RANGE names a rectangle leaving the grid. One
 * thread at a time per client. */
CUVIEW_API cuview_status cuview_fetch(cuview_client* client, const char* field, uint32_t x, uint32_t y, uint32_t w,
                                      uint32_t h, cuview_region* out);

/* cuview_fetch of a volume's box [x, x+w) × [y, y+h) × [z, z+d) (0: to the grid's far edge), exact:
 * d × h × w × components values; *out_z and *out_d (if not NULL) get the box's first layer and
 * layers. A plane's rectangle is cuview_fetch's: the gateway refuses a box of a plane
 * (CUVIEW_BAD_VALUE, naming the field). */
CUVIEW_API cuview_status cuview_fetch_box(cuview_client* client, const char* field, uint32_t x, uint32_t y, uint32_t z,
                                          uint32_t w, uint32_t h, uint32_t d, cuview_region* out, uint32_t* out_z,
                                          uint32_t* out_d);
/* The publishers running now, as a JSON array of objects with at least "name". remote NULL or "":
 * this host's, by name; otherwise those the gateway at `remote` serves, each with "sim",
 * "backend", "device", "width", "height" and "viewers" (the gateway's remote watchers). The string
 * stays valid until the next cuview_list_json on the calling thread. */
CUVIEW_API cuview_status cuview_list_json(const char* remote, int timeout_ms, const char** json);

/* Steering; each returns the publisher's refusal, if any (e.g. CUVIEW_OUT_OF_RANGE). */
CUVIEW_API cuview_status cuview_pause(cuview_client* client);
CUVIEW_API cuview_status cuview_resume(cuview_client* client);
CUVIEW_API cuview_status cuview_step(cuview_client* client, uint64_t n);
CUVIEW_API cuview_status cuview_set(cuview_client* client, const char* param, double value);
CUVIEW_API cuview_status cuview_set_preset(cuview_client* client, const char* preset);
CUVIEW_API cuview_status cuview_reset(cuview_client* client);
/* Draws (value 1) or erases (0) a disc of `radius` cells at grid (x, y) in the publisher's input
   `input` (its `describe` JSON lists "inputs"). */
CUVIEW_API cuview_status cuview_draw(cuview_client* client, const char* input, double x, double y, double radius,
                                     int value);
/* The same in a volume (a grid of 3 axes): a ball of `radius` cells centred at (x, y, z). A volume
   refuses cuview_draw, a plane this (CUVIEW_BAD_VALUE, naming the grid). */
CUVIEW_API cuview_status cuview_draw_ball(cuview_client* client, const char* input, double x, double y, double z,
                                          double radius, int value);
/* Asks the daemon for a checkpoint (to `path`, absolute; NULL: its checkpoint directory) and waits
   up to `timeout_ms` for it to be written. On success `step` (if not NULL) gets its step and
   `written` (if not NULL) the file's path, truncated to `written_size` bytes with a NUL.
   CUVIEW_UNSUPPORTED: the daemon writes no checkpoints. */
CUVIEW_API cuview_status cuview_checkpoint(cuview_client* client, const char* path, int64_t timeout_ms, uint64_t* step,
                                           char* written, size_t written_size);
CUVIEW_API cuview_status cuview_shutdown(cuview_client* client);

/* ---- Runs of parts: a publisher decomposed over processes (mpirun -n N cuview-compute) ----
 *
 * Each part publishes its block of the global grid with its own ring (docs/protocol.md "Parts").
 * A group attaches every part and takes frames of one step from all of them at once:
 *
 *   cuview_group* g;
 *   if (cuview_group_attach("flow", "my tool", 0, 3000, &g) != CUVIEW_OK) ...
 *   cuview_group_frame* gf;
 *   if (cuview_group_next(g, 1000, &gf) == CUVIEW_OK) {
 *     for (size_t k = 0; k < cuview_group_frame_parts(gf); ++k) {
 *       cuview_part_info p;
 *       cuview_group_part_info(g, k, &p);                     // where part k's block lies
 *       const cuview_frame* f = cuview_group_frame_part(gf, k);
 *       const void* vort = cuview_frame_data(f, 0);            // its block of field 0
 *     }
 *     cuview_group_frame_copy_field(gf, 0, global, cuview_group_frame_field_bytes(gf, 0));
 *     cuview_group_frame_release(gf);                          // every part's slot
 *   }
 *   cuview_step(cuview_group_leader(g), 10);                   // steering goes to part 0
 *   cuview_group_detach(g);
 *
 * A name a whole publisher runs under attaches as a group of one part (covering the whole grid),
 * so a tool may always use a group. Threads: cuview_group_next for one thread at a time; the
 * leader's and parts' control calls from any thread, as a client's. */

typedef struct cuview_group cuview_group;
typedef struct cuview_group_frame cuview_group_frame;

/* Where part `index`'s block lies in the global grid, and what runs it. Strings belong to the
 * group, valid until cuview_group_detach. */
typedef struct cuview_part_info {
  uint32_t index, count;        /* part `index` of `count` */
  uint32_t ndim;                /* the grid's axes (2 today): the length of the three arrays below */
  const uint32_t* offset;       /* the block's first cell in the global grid, slowest axis first ({y, x}) */
  const uint32_t* dims;         /* the block's size ({height, width}) */
  const uint32_t* global_dims;  /* the global grid's size; all three valid while the group is */
  int32_t rank;                 /* the part's MPI rank; -1 for a whole publisher */
  int32_t pid;                  /* the part's process */
  const char* host;             /* where the part runs ("" for a whole publisher) */
  const char* device;           /* what it computes on: the `describe` reply's "device" */
  const char* group;            /* the run's id, the same in every part (a whole publisher's session) */
} cuview_part_info;

/* How many parts of `name` run now, counted from part 0: 0 when none run or `name` is a whole
 * publisher. */
CUVIEW_API uint32_t cuview_running_parts(const char* name);

/* Attaches every part of `name` (part 0 first, which says how many there are; the others at once)
 * with the options of cuview_attach. A part not up yet, or still one of an earlier run under that
 * name, is retried until timeout_ms passes; then the failure names the part. A whole publisher is a
 * group of one part. With cuview_group_attach_remote, the one way in (cuview::open): a program that
 * always uses a group never asks whether a name runs whole or in parts. On success *out must be
 * freed with cuview_group_detach. */
CUVIEW_API cuview_status cuview_group_attach(const char* name, const char* client_name, int control_only,
                                             int timeout_ms, cuview_group** out);
/* Attaches every part of `name` through the cuview-gateways of the hosts the run is on
 * (`gateways`: `count` URLs, as cuview_attach_remote takes; one per host, any order): each part
 * through the gateway that lists it (docs/remote.md "Runs of parts"); a whole publisher is a group
 * of one part. CUVIEW_NO_DAEMON names the parts no gateway serves. Watch views with
 * cuview_group_watch and read pictures with cuview_group_next_view; cuview_group_next gives one step
 * of every part fetched into host memory (as cuview_next_frame of a remote client). */
CUVIEW_API cuview_status cuview_group_attach_remote(const char* name, const char* client_name,
                                                    const char* const* gateways, size_t count, int timeout_ms,
                                                    cuview_group** out);
/* A remote group (cuview_group_attach_remote): from now on every part's gateway sends its share
 * of views of `field` over the global grid, as cuview_watch describes for one client. */
CUVIEW_API cuview_status cuview_group_watch(cuview_group* group, const char* field, uint32_t view_w, uint32_t view_h,
                                            double zoom, double center_x, double center_y, const char* encoding);
/* A remote group of a volume: cuview_group_watch of plane `index` across `axis` ("x", "y" or "z")
 * of the whole volume, as cuview_watch_plane describes for one client; each part's gateway sends
 * the share of the plane its slab holds (none when the plane misses it). */
CUVIEW_API cuview_status cuview_group_watch_plane(cuview_group* group, const char* field, const char* axis,
                                                  uint32_t index, uint32_t view_w, uint32_t view_h, double zoom,
                                                  double center_x, double center_y, const char* encoding);
/* A remote group: the next picture of the watch, one step of every part put together (never two
 * steps side by side), into *out as cuview_next_view fills it; error_bound is the largest of the
 * parts'. Valid until the next call or cuview_group_detach. CUVIEW_NO_FRAME: none within
 * timeout_ms; CUVIEW_DAEMON_GONE names the part that went. */
CUVIEW_API cuview_status cuview_group_next_view(cuview_group* group, int timeout_ms, cuview_view* out);

/* What a picture cast by the run is of (cuview_group_render). */
typedef struct cuview_picture_info {
  uint64_t seq, step; /* the frame it was cast from */
  double sim_time;
  double cast_ms;     /* its time where it was cast (the slowest part's) */
  uint32_t every;     /* cast from every `every`-th cell: 1, every cell */
} cuview_picture_info;

/* A picture of the volume field `field` of the whole run, cast by the run itself where the data
 * is — on the simulation's GPU, inside its cost budget — from every cell (protocol 10 `render`);
 * a run of parts casts each part's block and the pictures are composited here; through gateways
 * they come compressed (colours losslessly). The view takes cuview_render_volume's arguments but
 * the data: mode, camera (pan in the grid's cells), colormap, [lo, hi], the opacity preset
 * ("ramp", "peak" or "flat": "auto" needs the cells), level; the samples are one a cell. Writes the
 * run's newest picture of this view to `argb` (view_w × view_h, 0xAARRGGBB) and, when not NULL, to
 * `values` and `info`. CUVIEW_NO_FRAME: no picture of this view yet — the first ask starts the
 * casting, from the newest frame the run holds, else its next; ask again (a view nobody asks for in
 * 5 s is dropped).
 * CUVIEW_UNSUPPORTED: a field that is not a float32 volume, or a publisher or gateway too old to
 * cast. */
CUVIEW_API cuview_status cuview_group_render(cuview_group* group, const char* field, const char* mode, double azimuth,
                                             double elevation, double zoom, double pan_x, double pan_y,
                                             const char* colormap, float lo, float hi, const char* opacity, float level,
                                             uint32_t view_w, uint32_t view_h, uint32_t* argb, float* values,
                                             cuview_picture_info* info);

/* Detaches from every part and frees the group, its part and leader clients with it; group frames
 * still held stay valid until released. NULL is ignored. */
CUVIEW_API void cuview_group_detach(cuview_group* group);
/* 1 when `name` runs as parts, 0 for a whole publisher (a group of one part). */
CUVIEW_API int cuview_group_decomposed(const cuview_group* group);
/* The number of parts (1 for a whole publisher). */
CUVIEW_API size_t cuview_group_parts(const cuview_group* group);
/* Part k's block and process. CUVIEW_OUT_OF_RANGE for a part that does not exist. */
CUVIEW_API cuview_status cuview_group_part_info(const cuview_group* group, size_t k, cuview_part_info* out);
/* Part k's client, borrowed from the group (freed by cuview_group_detach; cuview_detach ignores it):
 * its blocks (cuview_block_info: the block's shape), describe and stats JSON. Parts other than 0
 * refuse steering. NULL for a part that does not exist (cuview_last_error says so). */
CUVIEW_API cuview_client* cuview_group_part(cuview_group* group, size_t k);
/* Part 0's client, borrowed as above: steer the whole run through it (cuview_pause, cuview_step,
 * cuview_set, cuview_draw, ...: part 0 hands each request to every part at one step). */
CUVIEW_API cuview_client* cuview_group_leader(cuview_group* group);
/* "" while every part runs; otherwise which part went and why, e.g. "part 1 of 'flow' (rank 1,
 * pid 4711 on host-b) shut down: rank 1 failed". The string stays valid until the next call. */
CUVIEW_API const char* cuview_group_gone_reason(cuview_group* group);

/* Waits up to timeout_ms for a step newer than the last one returned that every part offers, and
 * holds that step's frame in every part (complete: waited for on the host, as cuview_next_frame
 * does). No publisher ever waits for it. CUVIEW_NO_FRAME: no such step came; CUVIEW_DAEMON_GONE:
 * a part went away (the message names it and its reason; attach again once all run);
 * CUVIEW_NOT_ATTACHED: the group is control-only. */
CUVIEW_API cuview_status cuview_group_next(cuview_group* group, int timeout_ms, cuview_group_frame** out);
/* Reads only these `count` fields from now on (names; a particle set's name: all its attributes):
 * the publishers copy into a frame only what their readers read, and cuview_group_next and
 * cuview_next_frame return frames that hold them. count 0: every field, the default. Through
 * gateways nothing changes (a gateway reads the fields its views and fetches name).
 * CUVIEW_BAD_VALUE names a field the run lacks. */
CUVIEW_API cuview_status cuview_group_read_fields(cuview_group* group, const char* const* names, size_t count);
/* Releases every part's slot and frees the group frame, with its part frames. On CUDA, first
 * finish the GPU work that reads them (cuview_frame_synchronize on each). NULL is ignored. */
CUVIEW_API void cuview_group_frame_release(cuview_group_frame* frames);
/* The step every part's frame shows. */
CUVIEW_API uint64_t cuview_group_frame_step(const cuview_group_frame* frames);
/* The number of parts, one frame each. */
CUVIEW_API size_t cuview_group_frame_parts(const cuview_group_frame* frames);
/* Part k's frame, borrowed (valid until cuview_group_frame_release; cuview_frame_release ignores
 * it): read it with the cuview_frame_* calls; its blocks are those of cuview_group_part(group, k).
 * NULL for a part that does not exist. */
CUVIEW_API const cuview_frame* cuview_group_frame_part(const cuview_group_frame* frames, size_t k);
/* Bytes of field `field` over the global grid (global_width × global_height cells); 0 for a field
 * that does not exist (particle attributes are not part of the grid). */
CUVIEW_API size_t cuview_group_frame_field_bytes(const cuview_group_frame* frames, size_t field);
/* Copies field `field` of every part into `dst` as one row-major global grid, each block at its
 * offset (on CUDA through host copies). `bytes` must be cuview_group_frame_field_bytes:
 * CUVIEW_BAD_VALUE otherwise, CUVIEW_OUT_OF_RANGE for a field that does not exist. */
CUVIEW_API cuview_status cuview_group_frame_copy_field(const cuview_group_frame* frames, size_t field, void* dst,
                                                       size_t bytes);
/* The same into `dst`, device memory of any GPU of this process: each part's frame is waited for on
 * the host, then the copy engine moves its block into place (a peer copy between GPUs); no kernel
 * runs. Returns once the copies are done. CUVIEW_UNSUPPORTED on the host backend (use
 * cuview_group_frame_copy_field), CUVIEW_CUDA naming the part whose copy failed. */
CUVIEW_API cuview_status cuview_group_frame_copy_field_to_device(const cuview_group_frame* frames, size_t field,
                                                                 void* dst, size_t bytes);
/* Checks every part's frame (cuview_frame_verify): CUVIEW_BAD_VALUE names the first bad part. */
CUVIEW_API cuview_status cuview_group_frame_verify(const cuview_group_frame* frames);

#ifdef __cplusplus
}
#endif
#endif /* CUVIEW_CLIENT_H */
