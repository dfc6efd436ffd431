/* The publisher's C API (cuview/publisher.h), every call and the errors a C programmer makes, from
 * a C11 program built with -Wall -Werror, which is also a client (cuview/client.h): both
 * libraries in one process. A 3-D field's cell (x, y, z) is read back where the program wrote it;
 * steering (parameters, presets, reset, strokes, pause and step, checkpoints, shutdown) reaches
 * the accessors.
 * On CUDA the frames are read by cuview-ctl, another process (CUDA IPC opens only in another one).
 *   test_publisher_c host|cuda [CUVIEW_CTL]   (cuda: exits 77 without a GPU) */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuview/client.h"
#include "cuview/publisher.h"

static int failures = 0;

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                          \
    }                                                                      \
  } while (0)

/* `call` returns `status` and cuview_last_error() contains every one of `words` (NULL-ended). */
static void expect_error(cuview_status got, cuview_status want, const char* call, const char* const* words) {
  const char* message = cuview_last_error();
  if (got != want) {
    fprintf(stderr, "%s: status %d, expected %d (%s)\n", call, (int)got, (int)want, message);
    ++failures;
    return;
  }
  for (; *words != NULL; ++words)
    if (strstr(message, *words) == NULL) {
      fprintf(stderr, "%s: the message '%s' does not say '%s'\n", call, message, *words);
      ++failures;
    }
}
#define EXPECT_ERROR(expr, want, ...)                         \
  do {                                                        \
    const char* const words_[] = {__VA_ARGS__, NULL};         \
    expect_error((expr), (want), #expr, words_);              \
  } while (0)

#define OK(expr)                                                                                     \
  do {                                                                                               \
    cuview_status s_ = (expr);                                                                       \
    if (s_ != CUVIEW_OK) {                                                                           \
      fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #expr, cuview_status_name(s_),      \
              cuview_last_error());                                                                  \
      exit(1);                                                                                       \
    }                                                                                                \
  } while (0)

enum { W = 6, H = 5, D = 4, CELLS = W * H * D };

struct checkpoint_call {
  cuview_client* client;
  cuview_status status;
  char written[512];
  uint64_t step;
};

static void* ask_checkpoint(void* arg) {
  struct checkpoint_call* c = arg;
  c->status = cuview_checkpoint(c->client, "/tmp/cuview-c-test.h5", 20000, &c->step, c->written, sizeof c->written);
  return NULL;
}

/* Publishes (each call a new step) until the client has a frame; returns it. */
static cuview_frame* frame_of(cuview_publisher* pub, cuview_client* client, uint64_t* step, const void* const* data) {
  for (int tries = 0; tries < 200; ++tries) {
    int published = 0;
    ++*step;
    if (data != NULL)
      OK(cuview_publisher_publish_data(pub, *step, 0.5 * (double)*step, 1, data, NULL, &published));
    else
      OK(cuview_publisher_publish(pub, *step, 0.5 * (double)*step, NULL, &published));
    cuview_frame* f = NULL;
    if (cuview_next_frame(client, published ? 2000 : 10, &f) == CUVIEW_OK) return f;
  }
  fprintf(stderr, "no frame reached the client\n");
  exit(1);
}

extern char** environ;

/* cuview-ctl (another process) attaches and verifies `frames` frames while this one publishes
   (arrays: NULL for the declared ones), a new step each call; returns its exit status. */
static int read_elsewhere(cuview_publisher* pub, const char* ctl, const char* name, uint64_t* step,
                          const void* const* data) {
  char* argv[] = {(char*)ctl, "--name", (char*)name, "attach", "--frames", "3", "--verify", NULL};
  pid_t pid;
  if (posix_spawnp(&pid, ctl, NULL, NULL, argv, environ) != 0) {
    fprintf(stderr, "cannot start %s\n", ctl);
    return -1;
  }
  int status = 0;
  for (int tries = 0; tries < 6000; ++tries) {
    ++*step;
    if (data != NULL)
      OK(cuview_publisher_publish_data(pub, *step, 0, 1, data, NULL, NULL));
    else
      OK(cuview_publisher_publish(pub, *step, 0, NULL, NULL));
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    nanosleep(&(struct timespec){0, 10000000}, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

/* cuview_last_error() does not say `text` (words of C++ or of the command line). */
#define NOT_SAYING(text)                                                                          \
  do {                                                                                            \
    if (strstr(cuview_last_error(), (text)) != NULL) {                                            \
      fprintf(stderr, "%s:%d: '%s' says '%s'\n", __FILE__, __LINE__, cuview_last_error(), (text)); \
      ++failures;                                                                                 \
    }                                                                                             \
  } while (0)

/* Errors name the C calls and arguments that fix them: never C++'s (FieldWriter, Memory::host,
 * PartOptions, add_field() before publish()) or the command line's (--name), and the publisher once. */
static void check_c_words(const char* name, const char* backend) {
  static float a[4][4];
  const uint64_t dims[2] = {4, 4};
  char other[96];
  snprintf(other, sizeof other, "%s-words", name);
  cuview_publisher* pub = NULL;
  OK(cuview_publisher_create(other, backend, -1, "auto", "", &pub));
  EXPECT_ERROR(cuview_publisher_use_preset(pub, "cold"), CUVIEW_UNKNOWN_FIELD, "no preset 'cold'",
               "declare it with cuview_publisher_add_preset() first");
  EXPECT_ERROR(cuview_publisher_start(pub), CUVIEW_BAD_VALUE, "no field is declared",
               "cuview_publisher_add_field() before cuview_publisher_start()");
  NOT_SAYING("publish()");
  /* Host memory said to be device memory: refused on either backend, naming the C constant. */
  EXPECT_ERROR(cuview_publisher_add_field(pub, "d", "float32", 2, dims, 1, a, CUVIEW_MEMORY_DEVICE, ""),
               CUVIEW_BAD_VALUE, "field 'd'", "(CUVIEW_MEMORY_HOST)");
  NOT_SAYING("Memory::");
  OK(cuview_publisher_add_field(pub, "u", "float32", 2, dims, 1, NULL, CUVIEW_MEMORY_HOST, ""));
  OK(cuview_publisher_start(pub));
  EXPECT_ERROR(cuview_publisher_publish(pub, 1, 0, NULL, NULL), CUVIEW_BAD_VALUE, "field 'u'", "without data",
               "cuview_publisher_publish_data()");
  NOT_SAYING("FieldWriter");
  EXPECT_ERROR(cuview_publisher_add_field(pub, "late", "float32", 2, dims, 1, a, CUVIEW_MEMORY_HOST, ""),
               CUVIEW_BAD_VALUE, "cannot declare field 'late' after publishing began", "before cuview_publisher_start()");
  const char* first = strstr(cuview_last_error(), "publisher '");
  CHECK(first != NULL && strstr(first + 1, "publisher '") == NULL);
  cuview_publisher* twin = NULL;
  EXPECT_ERROR(cuview_publisher_create(other, backend, -1, "auto", "", &twin), CUVIEW_ALREADY_RUNNING,
               "pass cuview_publisher_create() another name");
  NOT_SAYING("pick another --name");
  cuview_publisher_close(pub, NULL);
  /* A part whose block does not fit the global grid it was given. */
  OK(cuview_publisher_create(other, backend, -1, "auto", "part=0/1 offset=0,2 global=4,4 group=g", &pub));
  OK(cuview_publisher_add_field(pub, "u", "float32", 2, dims, 1, a, CUVIEW_MEMORY_HOST, ""));
  EXPECT_ERROR(cuview_publisher_start(pub), CUVIEW_OUT_OF_RANGE, "does not fit",
               "cuview_publisher_mpi_create()", "offset= options");
  NOT_SAYING("PartOptions");
  cuview_publisher_close(pub, NULL);
}

/* Runs a publisher (create, start, close) with `options`, fd 1 and 2 written to files meanwhile;
 * returns its status and what each said (stdout in out, stderr in err). */
static cuview_status logged(const char* name, const char* backend, const char* options, char* out, char* err,
                            size_t size) {
  static float a[4][4];
  const uint64_t dims[2] = {4, 4};
  char* texts[2] = {out, err};
  FILE* files[2] = {tmpfile(), tmpfile()};
  int saved[2];
  fflush(stdout);
  fflush(stderr);
  for (int i = 0; i < 2; ++i) {
    saved[i] = dup(i + 1);
    dup2(fileno(files[i]), i + 1);
  }
  cuview_publisher* pub = NULL;
  cuview_status s = cuview_publisher_create(name, backend, -1, "auto", options, &pub);
  if (s == CUVIEW_OK) s = cuview_publisher_add_field(pub, "u", "float32", 2, dims, 1, a, CUVIEW_MEMORY_HOST, "");
  if (s == CUVIEW_OK) s = cuview_publisher_start(pub);
  cuview_publisher_close(pub, NULL);
  fflush(stdout);
  fflush(stderr);
  for (int i = 0; i < 2; ++i) {
    dup2(saved[i], i + 1);
    close(saved[i]);
    rewind(files[i]);
    const size_t n = fread(texts[i], 1, size - 1, files[i]);
    texts[i][n] = '\0';
    fclose(files[i]);
  }
  return s;
}

/* The library's own lines go to stderr, never to the program's stdout, at the level log= sets;
 * log=error silences its info lines; CUVIEW_LOG, when set, wins over log=. */
static void check_log(const char* name, const char* backend) {
  static char out[65536], err[65536];
  char other[96];
  snprintf(other, sizeof other, "%s-log", name);
  unsetenv("CUVIEW_LOG");
  OK(logged(other, backend, "log=info", out, err, sizeof out));
  CHECK(out[0] == '\0');
  CHECK(strstr(err, "[cuview] [info]") != NULL && strstr(err, "session") != NULL);
  OK(logged(other, backend, "log=error", out, err, sizeof out));
  CHECK(out[0] == '\0');
  CHECK(strstr(err, "[info]") == NULL);
  setenv("CUVIEW_LOG", "info", 1);
  OK(logged(other, backend, "log=error", out, err, sizeof out));
  CHECK(strstr(err, "[cuview] [info]") != NULL);
  unsetenv("CUVIEW_LOG");
  EXPECT_ERROR(logged(other, backend, "log=loud", out, err, sizeof out), CUVIEW_BAD_VALUE,
               "cuview_publisher_create's log=loud is not a log level", "warn");
  if (failures != 0) fprintf(stderr, "stdout: %s\nstderr: %s\n", out, err);
}

/* The value a reader sees at cell (x, y, z) of field 0. */
/* A float64 field with a halo of `halo` ghost cells, published in place from the program's array
   (the interior is a section: strides in bytes, the first interior cell's address), on a grid with
   coordinates; read back cell for cell on the host, verified by cuview-ctl elsewhere on CUDA. */
enum { HW = 7, HH = 6, HD = 5, MAXHALO = 2 };
static void check_halo(const char* name, const char* backend, const char* ctl, int halo) {
  static double T[HD + 2 * MAXHALO][HH + 2 * MAXHALO][HW + 2 * MAXHALO];
  const int d = HD + 2 * halo, h = HH + 2 * halo, w = HW + 2 * halo; /* the array's extent in use */
  double* a = &T[0][0][0];
  for (int i = 0; i < d * h * w; ++i) a[i] = -1; /* ghost cells: never published */
  for (int z = 0; z < HD; ++z)
    for (int y = 0; y < HH; ++y)
      for (int x = 0; x < HW; ++x) a[((z + halo) * h + y + halo) * w + x + halo] = 1e8 * (z + 1) + 1e4 * y + x + 0.125;
  char own[96];
  snprintf(own, sizeof own, "%s-halo%d", name, halo);
  cuview_publisher* pub = NULL;
  OK(cuview_publisher_create(own, backend, -1, NULL, "fps=0 max_cost=1", &pub));
  const uint64_t dims[3] = {HD, HH, HW};
  const double origin[3] = {-1, 0, 2.5}, spacing[3] = {0.25, 0.5, 0.125};
  const int64_t strides[3] = {(int64_t)(h * w * sizeof(double)), (int64_t)(w * sizeof(double)), sizeof(double)};
  const int64_t scattered[3] = {strides[0], strides[1], 2 * sizeof(double)};
  EXPECT_ERROR(cuview_publisher_add_field_on(pub, "tank", "T", "float64", 1, a, strides, CUVIEW_MEMORY_HOST, ""),
               CUVIEW_UNKNOWN_FIELD, "grid 'tank', which is not declared");
  OK(cuview_publisher_add_grid(pub, "tank", 3, dims, origin, spacing, "m"));
  double* first = a + ((size_t)halo * h + halo) * w + halo;
  EXPECT_ERROR(cuview_publisher_add_field_on(pub, "tank", "T", "float64", 1, first, scattered, CUVIEW_MEMORY_HOST, ""),
               CUVIEW_BAD_VALUE, "field 'T'", "one cell's size (8 bytes)", "memory traffic");
  OK(cuview_publisher_add_field_on(pub, "tank", "T", "float64", 1, first, strides, CUVIEW_MEMORY_HOST, "interior"));
  /* A second grid beside the volume: a surface of its own shape and coordinates. */
  static float s[HH][HW];
  for (int y = 0; y < HH; ++y)
    for (int x = 0; x < HW; ++x) s[y][x] = (float)(y * 100 + x) - 0.5f;
  const uint64_t sdims[2] = {HH, HW};
  const double sorigin[2] = {0, 10};
  OK(cuview_publisher_add_grid(pub, "surface", 2, sdims, sorigin, NULL, "m"));
  OK(cuview_publisher_add_field_on(pub, "surface", "s", "float32", 1, &s[0][0], NULL, CUVIEW_MEMORY_HOST, "a surface"));
  OK(cuview_publisher_start(pub));
  uint64_t step = 0;
  if (strcmp(backend, "host") == 0) {
    cuview_client* client = NULL;
    OK(cuview_attach(own, "c test halo", 0, 3000, &client));
    cuview_block b;
    OK(cuview_block_info(client, 0, &b));
    CHECK(strcmp(b.dtype, "float64") == 0);
    CHECK(b.ndim == 3 && b.shape[0] == HD && b.shape[1] == HH && b.shape[2] == HW);
    cuview_frame* f = frame_of(pub, client, &step, NULL);
    CHECK(cuview_frame_verify(f) == CUVIEW_OK);
    const char* base = cuview_frame_data(f, 0);
    int wrong = 0;
    for (int z = 0; z < HD; ++z)
      for (int y = 0; y < HH; ++y)
        for (int x = 0; x < HW; ++x) {
          double v;
          memcpy(&v, base + z * b.strides[0] + y * b.strides[1] + x * b.strides[2], sizeof v);
          wrong += v != 1e8 * (z + 1) + 1e4 * y + x + 0.125;
        }
    CHECK(wrong == 0);
    cuview_block sb; /* the surface: its own shape, read back exactly */
    OK(cuview_block_info(client, 1, &sb));
    CHECK(strcmp(sb.dtype, "float32") == 0 && sb.ndim == 2 && sb.shape[0] == HH && sb.shape[1] == HW);
    const char* sbase = cuview_frame_data(f, 1);
    wrong = 0;
    for (int y = 0; y < HH; ++y)
      for (int x = 0; x < HW; ++x) {
        float v;
        memcpy(&v, sbase + y * sb.strides[0] + x * sb.strides[1], sizeof v);
        wrong += v != s[y][x];
      }
    CHECK(wrong == 0);
    cuview_frame_release(f);
    cuview_detach(client);
  } else {
    CHECK(read_elsewhere(pub, ctl, own, &step, NULL) == 0);
  }
  cuview_publisher_close(pub, "done");
}

/* The typed options and presets: what the strings say, without a string to quote. */
static void check_typed(const char* name, const char* backend) {
  char own[96];
  snprintf(own, sizeof own, "%s-typed", name);
  cuview_publisher_options o;
  cuview_publisher_options_init(&o);
  CHECK(o.size == sizeof o && o.slots == 3 && o.fps == 60 && o.max_cost == 0.01 && o.part_count == 0);
  cuview_publisher_options small = o;
  small.size = 4;
  cuview_publisher* pub = NULL;
  EXPECT_ERROR(cuview_publisher_create_with(own, backend, -1, NULL, &small, &pub), CUVIEW_BAD_VALUE,
               "options.size is 4", "cuview_publisher_options_init");
  o.title = "typed \"run\"";
  o.fps = 0;
  o.max_cost = 1;
  o.paused = 1;
  o.slots = 17;
  EXPECT_ERROR(cuview_publisher_create_with(own, backend, -1, NULL, &o, &pub), CUVIEW_OUT_OF_RANGE, "17 slots");
  o.slots = 2;
  OK(cuview_publisher_create_with(own, backend, -1, NULL, &o, &pub));
  static float a[4][4];
  const uint64_t dims[2] = {4, 4};
  OK(cuview_publisher_add_field(pub, "a", "float32", 2, dims, 1, a, CUVIEW_MEMORY_HOST, ""));
  OK(cuview_publisher_add_param(pub, "F", 0.03, 0, 0.1, 0, ""));
  OK(cuview_publisher_add_param(pub, "k", 0.06, 0, 0.1, 0, ""));
  const char* names[2] = {"F", "k"};
  const double values[2] = {0.05, 0.07};
  const char* wrong[1] = {"kill"};
  EXPECT_ERROR(cuview_publisher_add_preset_values(pub, "x", 1, wrong, values), CUVIEW_UNKNOWN_FIELD,
               "preset 'x'", "sets 'kill', which is not a parameter", "F, k");
  OK(cuview_publisher_add_preset_values(pub, "spots", 2, names, values));
  OK(cuview_publisher_use_preset(pub, "spots"));
  OK(cuview_publisher_start(pub));
  CHECK(cuview_publisher_paused(pub) == 1);
  double F = 0;
  OK(cuview_publisher_param(pub, "F", &F));
  CHECK(F == 0.05);
  cuview_publisher_close(pub, "done");
}

static float cell(cuview_client* client, cuview_frame* f, int x, int y, int z, int on_device) {
  cuview_block b;
  OK(cuview_block_info(client, 0, &b));
  const char* base = cuview_frame_data(f, 0);
  const size_t at = (size_t)z * b.strides[0] + (size_t)y * b.strides[1] + (size_t)x * b.strides[2];
  float v = -1;
  if (!on_device) {
    memcpy(&v, base + at, sizeof v);
  } else {
    /* The client's frames on CUDA are device memory: copy one value out with the group API's
       helpers would need a group; cuview_frame_verify checks the whole frame instead. */
    CHECK(cuview_frame_verify(f) == CUVIEW_OK);
    v = -2;
  }
  return v;
}

int main(int argc, char** argv) {
  const char* backend = argc > 1 ? argv[1] : "host";
  const char* ctl = argc > 2 ? argv[2] : "cuview-ctl";
  char runtime[] = "/tmp/cuview-c-test-XXXXXX";
  if (mkdtemp(runtime) == NULL) return 1;
  chmod(runtime, 0700);
  setenv("XDG_RUNTIME_DIR", runtime, 1);
  char name[64];
  snprintf(name, sizeof name, "c-test-%d", (int)getpid());

  CHECK(cuview_publisher_abi() == CUVIEW_PUBLISHER_ABI);
  cuview_publisher* pub = NULL;
  EXPECT_ERROR(cuview_publisher_create(name, backend, -1, "auto", "fps=30 colour=red", &pub), CUVIEW_BAD_VALUE,
               "'colour' is not an option", "max_cost");
  CHECK(pub == NULL);
  EXPECT_ERROR(cuview_publisher_create(name, backend, -1, "auto", "fps=fast", &pub), CUVIEW_BAD_VALUE, "fps",
               "not a number");
  EXPECT_ERROR(cuview_publisher_create(name, "quantum", -1, "auto", "", &pub), CUVIEW_BAD_VALUE, "quantum");
  EXPECT_ERROR(cuview_publisher_create(NULL, backend, -1, "auto", "", &pub), CUVIEW_BAD_VALUE, "NULL");
  cuview_status made = cuview_publisher_create(name, backend, -1, NULL, "title=\"C test\" fps=0 max_cost=1 slots=3",
                                               &pub);
  if (made != CUVIEW_OK && strcmp(backend, "cuda") == 0) {
    printf("skipped: the cuda backend is not usable here: %s\n", cuview_last_error());
    return 77;
  }
  OK(made);
  cuview_publisher* twin = NULL;
  EXPECT_ERROR(cuview_publisher_create(name, backend, -1, "auto", "", &twin), CUVIEW_ALREADY_RUNNING, name);
  CHECK(strcmp(cuview_publisher_backend(pub), backend) == 0);
  CHECK(strlen(cuview_publisher_device(pub)) > 0);
  const int on_device = strcmp(backend, "cuda") == 0;

  /* T(x, y, z) = 100 z + 10 y + x, slowest axis first: dims {D, H, W}. */
  static float T[D][H][W], T2[D][H][W];
  for (int z = 0; z < D; ++z)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) T[z][y][x] = (float)(100 * z + 10 * y + x), T2[z][y][x] = -T[z][y][x];
  const uint64_t dims[3] = {D, H, W}, flat[2] = {H, W}, zero[3] = {D, 0, W}, four[4] = {1, D, H, W};
  EXPECT_ERROR(cuview_publisher_add_field(pub, "T", "complex64", 3, dims, 1, T, CUVIEW_MEMORY_HOST, ""),
               CUVIEW_BAD_VALUE, "field 'T'", "'complex64' is not a dtype", "float32", "float64", "int64");
  EXPECT_ERROR(cuview_publisher_add_field(pub, "T", "float32", 4, four, 1, T, CUVIEW_MEMORY_HOST, ""),
               CUVIEW_BAD_VALUE, "field 'T'", "4 axes", "1 to 3");
  EXPECT_ERROR(cuview_publisher_add_field(pub, "T", "float32", 3, zero, 1, T, CUVIEW_MEMORY_HOST, ""),
               CUVIEW_OUT_OF_RANGE, "field 'T'", "axis 1 has 0 cells");
  EXPECT_ERROR(cuview_publisher_add_field(pub, "T", "float32", 3, dims, 1, T, (cuview_memory)7, ""),
               CUVIEW_BAD_VALUE, "CUVIEW_MEMORY_HOST");
  EXPECT_ERROR(cuview_publisher_publish(pub, 1, 0, NULL, NULL), CUVIEW_BAD_VALUE, "before cuview_publisher_start");
  /* On CUDA the field stays host memory (no CUDA headers here): the publisher copies it to the
     GPU; device arrays are the Python tests' (tests/python/test_publisher.py). */
  OK(cuview_publisher_add_field(pub, "T", "float32", 3, dims, 1, T, CUVIEW_MEMORY_HOST, "temperature"));
  EXPECT_ERROR(cuview_publisher_add_field(pub, "T", "float32", 3, dims, 1, T, CUVIEW_MEMORY_HOST, ""),
               CUVIEW_BAD_VALUE, "'T' is declared twice");
  EXPECT_ERROR(cuview_publisher_add_field(pub, "flat", "float32", 2, flat, 1, NULL, CUVIEW_MEMORY_HOST, ""),
               CUVIEW_BAD_VALUE, "flat");
  EXPECT_ERROR(cuview_publisher_add_param(pub, "alpha", 2, 0, 1, 0, ""), CUVIEW_BAD_VALUE, "alpha", "outside");
  OK(cuview_publisher_add_param(pub, "alpha", 0.25, 0, 1, 0, "diffusivity"));
  OK(cuview_publisher_add_param(pub, "sources", 2, 0, 10, 1, "how many"));
  EXPECT_ERROR(cuview_publisher_add_param(pub, "alpha", 0.5, 0, 1, 0, ""), CUVIEW_BAD_VALUE, "alpha");
  EXPECT_ERROR(cuview_publisher_add_preset(pub, "hot", "alpha=lots"), CUVIEW_BAD_VALUE, "alpha", "not a number");
  EXPECT_ERROR(cuview_publisher_add_preset(pub, "hot", "beta=1"), CUVIEW_UNKNOWN_FIELD, "beta");
  OK(cuview_publisher_add_preset(pub, "hot", "alpha=0.75 sources=4"));
  OK(cuview_publisher_add_input(pub, "heat", "mask", "where heat comes in"));
  EXPECT_ERROR(cuview_publisher_use_preset(pub, "cold"), CUVIEW_UNKNOWN_FIELD, "cold");
  OK(cuview_publisher_use_preset(pub, "hot"));
  double value = 0;
  OK(cuview_publisher_param(pub, "alpha", &value));
  CHECK(value == 0.75);
  EXPECT_ERROR(cuview_publisher_param(pub, "beta", &value), CUVIEW_UNKNOWN_FIELD, "no parameter 'beta'", "alpha");
  OK(cuview_publisher_checkpoint_enable(pub, runtime, 0));
  OK(cuview_publisher_start(pub));
  EXPECT_ERROR(cuview_publisher_add_param(pub, "late", 0, 0, 1, 0, ""), CUVIEW_BAD_VALUE, "after publishing began");

  /* A reader in the same process (host) sees cell (x, y, z) where the program wrote it; on CUDA a
     reader in another process verifies the frames. */
  cuview_client* client = NULL;
  OK(cuview_attach(name, "c test", on_device, 3000, &client));
  CHECK(cuview_block_count(client) == 1);
  cuview_block b;
  OK(cuview_block_info(client, 0, &b));
  CHECK(b.ndim == 3 && b.shape[0] == D && b.shape[1] == H && b.shape[2] == W);
  CHECK(strcmp(b.dtype, "float32") == 0);
  uint64_t step = 0;
  const void* none[1] = {NULL};
  const void* arrays[1] = {T2};
  if (!on_device) {
    cuview_frame* f = frame_of(pub, client, &step, NULL);
    CHECK(cuview_frame_step(f) == step);
    CHECK(cuview_frame_verify(f) == CUVIEW_OK);
    CHECK(cell(client, f, 0, 0, 0, 0) == 0.0f);
    CHECK(cell(client, f, 5, 4, 3, 0) == 345.0f);
    CHECK(cell(client, f, 2, 1, 3, 0) == 312.0f);
    cuview_frame_release(f);
  } else {
    CHECK(read_elsewhere(pub, ctl, name, &step, NULL) == 0);
  }

  /* Arrays handed over at each publish instead. */
  EXPECT_ERROR(cuview_publisher_publish_data(pub, step + 1, 0, 2, arrays, NULL, NULL), CUVIEW_BAD_VALUE,
               "2 arrays for 1 fields");
  EXPECT_ERROR(cuview_publisher_publish_data(pub, step + 1, 0, 1, none, NULL, NULL), CUVIEW_BAD_VALUE, "field 'T'",
               "NULL");
  if (!on_device) {
    cuview_frame* f = frame_of(pub, client, &step, arrays);
    CHECK(cell(client, f, 5, 4, 3, 0) == -345.0f);
    CHECK(cuview_frame_verify(f) == CUVIEW_OK);
    cuview_frame_release(f);
  } else {
    CHECK(read_elsewhere(pub, ctl, name, &step, arrays) == 0);
  }

  /* Steering. */
  OK(cuview_set(client, "alpha", 0.5));
  OK(cuview_reset(client));
  OK(cuview_draw_ball(client, "heat", 2, 3, 1, 1.5, 1));
  OK(cuview_publisher_poll(pub));
  CHECK(cuview_publisher_changed_count(pub) == 2);
  const char* changed = NULL;
  OK(cuview_publisher_changed(pub, 0, &changed, &value));
  CHECK(strcmp(changed, "alpha") == 0 && value == 0.5);
  EXPECT_ERROR(cuview_publisher_changed(pub, 2, &changed, &value), CUVIEW_OUT_OF_RANGE, "change 2");
  OK(cuview_publisher_param(pub, "alpha", &value));
  CHECK(value == 0.5);
  OK(cuview_publisher_param(pub, "sources", &value));
  CHECK(value == 4);
  CHECK(cuview_publisher_reset_requested(pub) == 1);
  CHECK(cuview_publisher_stroke_count(pub) == 1);
  const char* input = NULL;
  double x, y, z, radius;
  int v;
  OK(cuview_publisher_stroke(pub, 0, &input, &x, &y, &z, &radius, &v));
  CHECK(strcmp(input, "heat") == 0 && x == 2 && y == 3 && z == 1 && radius == 1.5 && v == 1);
  EXPECT_ERROR(cuview_publisher_stroke(pub, 1, &input, &x, &y, &z, &radius, &v), CUVIEW_OUT_OF_RANGE, "stroke 1");
  OK(cuview_publisher_poll(pub));
  CHECK(cuview_publisher_changed_count(pub) == 0 && cuview_publisher_reset_requested(pub) == 0);
  CHECK(cuview_publisher_stroke_count(pub) == 0);

  /* Pause and step. */
  CHECK(cuview_publisher_steps_allowed(pub, 8) == 8);
  OK(cuview_pause(client));
  OK(cuview_publisher_poll(pub));
  CHECK(cuview_publisher_paused(pub) == 1);
  CHECK(cuview_publisher_steps_allowed(pub, 8) == 0);
  OK(cuview_step(client, 3));
  OK(cuview_publisher_wait(pub, 2000));
  OK(cuview_publisher_poll(pub));
  CHECK(cuview_publisher_steps_allowed(pub, 8) == 3);
  OK(cuview_resume(client));
  OK(cuview_publisher_poll(pub));
  CHECK(cuview_publisher_paused(pub) == 0);

  /* A checkpoint asked for by a client, written and reported by the program. */
  struct checkpoint_call call = {client, CUVIEW_INTERNAL, "", 0};
  cuview_client* second = NULL;
  OK(cuview_attach(name, "c test checkpoint", 1, 3000, &second));
  call.client = second;
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, ask_checkpoint, &call) == 0);
  size_t asked = 0;
  for (int tries = 0; tries < 400 && asked == 0; ++tries) {
    OK(cuview_publisher_wait(pub, 50));
    OK(cuview_publisher_poll(pub));
    asked = cuview_publisher_checkpoint_count(pub);
  }
  CHECK(asked == 1);
  if (asked == 1) {
    uint64_t ticket = 0;
    const char* path = NULL;
    OK(cuview_publisher_checkpoint_request(pub, 0, &ticket, &path));
    CHECK(strcmp(path, "/tmp/cuview-c-test.h5") == 0);
    OK(cuview_publisher_checkpoint_written(pub, ticket, path, step, 1.0, 1234));
  }
  pthread_join(thread, NULL);
  CHECK(call.status == CUVIEW_OK);
  CHECK(call.step == step);
  CHECK(strcmp(call.written, "/tmp/cuview-c-test.h5") == 0);
  OK(cuview_publisher_checkpoint_failed(pub, 0, "the disk is full"));
  const char* stats = NULL;
  OK(cuview_stats_json(client, &stats));
  CHECK(strstr(stats, "the disk is full") != NULL);

  /* Shutdown asked for by a client; the program closes and the other client is told. */
  OK(cuview_shutdown(second));
  cuview_detach(second);
  OK(cuview_publisher_poll(pub));
  CHECK(cuview_publisher_shutdown_requested(pub) == 1);
  OK(cuview_publisher_record_step(pub, step + 1, 9.0));
  cuview_publisher_close(pub, "shutdown");
  cuview_publisher_close(NULL, NULL);
  if (!on_device) {  /* a reader of frames is told (a control-only client learns it at its next call) */
    cuview_frame* after = NULL;
    const cuview_status gone = cuview_next_frame(client, 2000, &after);
    if (gone != CUVIEW_DAEMON_GONE) fprintf(stderr, "after close: %d %s\n", (int)gone, cuview_last_error());
    CHECK(gone == CUVIEW_DAEMON_GONE);
  }
  cuview_detach(client);
  check_c_words(name, backend);
  check_log(name, backend);
  check_typed(name, backend);
  check_halo(name, backend, ctl, 1);
  check_halo(name, backend, ctl, 2);
  rmdir(runtime);
  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("the publisher's C API on the %s backend: every call and error as documented\n", backend);
  return 0;
}
