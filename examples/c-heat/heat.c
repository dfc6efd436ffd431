/* A 3-D heat equation in a box, its own loop, on the host, published to cuview viewers with the
 * C API (cuview/publisher.h, libcuview-publisher.so; docs/sdk.md "C"). Viewers steer alpha, reset
 * it and draw heat in; `cuview-ctl shutdown` (or SIGINT/SIGTERM) ends it.
 *   c-heat --name cheat [--size 48] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuview/publisher.h"

static volatile sig_atomic_t stop = 0;
static void on_signal(int sig) { (void)sig; stop = 1; }

static int failed(const char* call) {
  fprintf(stderr, "c-heat: %s failed: %s\n", call, cuview_last_error());
  return 1;
}

static void initial(float* T, int n) { /* a hot ball in the middle */
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const int dx = x - n / 2, dy = y - n / 2, dz = z - n / 2;
        T[((size_t)z * n + y) * n + x] = dx * dx + dy * dy + dz * dz < (n / 6) * (n / 6) ? 1.0f : 0.0f;
      }
}

static float at(const float* T, int n, int x, int y, int z) { /* cold (0) outside the box */
  return x < 0 || y < 0 || z < 0 || x >= n || y >= n || z >= n ? 0.0f : T[((size_t)z * n + y) * n + x];
}

static void diffuse(float* T, float* Tn, int n, float alpha) {
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const float c = at(T, n, x, y, z);
        Tn[((size_t)z * n + y) * n + x] =
            c + alpha * (at(T, n, x - 1, y, z) + at(T, n, x + 1, y, z) + at(T, n, x, y - 1, z) +
                         at(T, n, x, y + 1, z) + at(T, n, x, y, z - 1) + at(T, n, x, y, z + 1) - 6 * c);
      }
  memcpy(T, Tn, sizeof(float) * (size_t)n * n * n);
}

int main(int argc, char** argv) {
  const char* name = "cheat";
  int n = 48;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--name") == 0) name = argv[i + 1];
    else if (strcmp(argv[i], "--size") == 0) n = atoi(argv[i + 1]);
  }
  if (n < 4 || n > 1024) {
    fprintf(stderr, "c-heat: --size %d is outside 4..1024\n", n);
    return 2;
  }
  float* T = malloc(sizeof(float) * (size_t)n * n * n);
  float* Tn = malloc(sizeof(float) * (size_t)n * n * n);
  if (T == NULL || Tn == NULL) return 1;
  initial(T, n);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);

  cuview_publisher* pub;
  const uint64_t dims[3] = {(uint64_t)n, (uint64_t)n, (uint64_t)n}; /* slowest first: z, y, x */
  if (cuview_publisher_create(name, "host", -1, NULL, "title=\"c heat\"", &pub)) return failed("create");
  if (cuview_publisher_add_field(pub, "T", "float32", 3, dims, 1, T, CUVIEW_MEMORY_HOST, "temperature") ||
      cuview_publisher_add_param(pub, "alpha", 0.1, 0, 1.0 / 6, 0, "diffusivity (stable up to 1/6)") ||
      cuview_publisher_add_input(pub, "heat", "mask", "draw heat in") || cuview_publisher_start(pub)) {
    failed("declaring");
    cuview_publisher_close(pub, "failed to start");
    return 1;
  }
  uint64_t step = 0;
  double alpha = 0.1;
  while (!stop) {
    cuview_publisher_poll(pub);
    if (cuview_publisher_shutdown_requested(pub)) break;
    cuview_publisher_param(pub, "alpha", &alpha);
    if (cuview_publisher_reset_requested(pub)) initial(T, n), step = 0;
    for (size_t i = 0; i < cuview_publisher_stroke_count(pub); ++i) { /* a ball of heat (1) or cold (0) */
      const char* input;
      double x, y, z, r;
      int v;
      cuview_publisher_stroke(pub, i, &input, &x, &y, &z, &r, &v);
      for (int c = 0; c < n; ++c)
        for (int b = 0; b < n; ++b)
          for (int a = 0; a < n; ++a)
            if ((a - x) * (a - x) + (b - y) * (b - y) + (c - z) * (c - z) <= r * r) T[((size_t)c * n + b) * n + a] = (float)v;
    }
    const uint64_t steps = cuview_publisher_steps_allowed(pub, 4);
    if (steps == 0) cuview_publisher_wait(pub, 50); /* paused */
    for (uint64_t s = 0; s < steps; ++s) diffuse(T, Tn, n, (float)alpha);
    step += steps;
    if (cuview_publisher_publish(pub, step, (double)step, NULL, NULL)) { /* never waits for a viewer */
      failed("publish");
      break;
    }
  }
  cuview_publisher_close(pub, "shutdown");
  free(T);
  free(Tn);
  return 0;
}
