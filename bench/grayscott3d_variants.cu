// The 3-D Gray–Scott step's kernels side by side (docs/benchmarks.md "Volumes: Gray–Scott in
// 3-D"): the product's (grayscott3d_cuda.cu: a thread marches one (x, y) column of kZ cells along
// z, the layers behind, at and in front in registers) against forms that give the memory system
// more loads in flight — the interior blocks' march unrolled with no wrap, a column's kZ + 2 values
// loaded before any is used, streaming stores, the L2::256B hint — over block shapes and march
// lengths, and marches of any length up to whole columns (`march N layers`: no layer read twice);
// cell updates/s against the measured copy bandwidth at 16 bytes a cell update. Every variant's u
// and v after 3 steps are compared with the product kernel's, bit for bit. ALL=1 adds the forms
// measured first (docs/benchmarks.md: none beat the product's). Not part of the build: on a GPU host,
//   nvcc -O3 -std=c++17 --ftz=true --fmad=false -arch=sm_90 -Icompute -Icommon/include \
//     bench/grayscott3d_variants.cu -o grayscott3d-variants && ./grayscott3d-variants [256 512 1024]
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include "sims/grayscott/grayscott.hpp"
#include "sims/grayscott3d/grayscott3d.hpp"
using cuview::sim::GrayScottParams;
using cuview::sim::grayscott_update;
using cuview::sim::grayscott3d::laplacian7;

/// A read-only load: kHint 0 the texture path (__ldg), 1 also asking L2 to fetch 256 bytes.
template <int kHint>
__device__ __forceinline__ float ld(const float* a) {
  if constexpr (kHint == 0) {
    return __ldg(a);
  } else {
    float r;
    asm volatile("ld.global.nc.L2::256B.f32 %0, [%1];" : "=f"(r) : "l"(a));
    return r;
  }
}
template <bool kStream>
__device__ __forceinline__ void st(float* a, float x) {
  if constexpr (kStream) __stcs(a, x); else *a = x;
}

/// The product's march (grayscott3d_cuda.cu step_column, copied: this file builds alone): the
/// column (x, y) from z0, `chunk` layers, the layers behind, at and in front in registers.
__device__ __forceinline__ void march(const float* __restrict__ u, const float* __restrict__ v, float* __restrict__ uo,
                                      float* __restrict__ vo, int w, int h, int d, const GrayScottParams& p, int x,
                                      int y, int z0, int chunk) {
  const size_t plane = (size_t)w * h, row = (size_t)y * w, col = row + x;
  const size_t xl = row + (x == 0 ? w - 1 : x - 1), xr = row + (x == w - 1 ? 0 : x + 1);
  const size_t yu = (size_t)(y == 0 ? h - 1 : y - 1) * w + x, yd = (size_t)(y == h - 1 ? 0 : y + 1) * w + x;
  const size_t back = (size_t)(z0 == 0 ? d - 1 : z0 - 1) * plane + col;
  float ub = __ldg(u + back), vb = __ldg(v + back);
  float uc = __ldg(u + z0 * plane + col), vc = __ldg(v + z0 * plane + col);
  const int end = min(z0 + chunk, d);
  for (int z = z0; z < end; ++z) {
    const size_t layer = (size_t)z * plane;
    const size_t front = (size_t)(z == d - 1 ? 0 : z + 1) * plane + col;
    const float uf = __ldg(u + front), vf = __ldg(v + front);
    const float lap_u =
        laplacian7(__ldg(u + layer + xl), __ldg(u + layer + xr), __ldg(u + layer + yu), __ldg(u + layer + yd), ub, uf, uc);
    const float lap_v =
        laplacian7(__ldg(v + layer + xl), __ldg(v + layer + xr), __ldg(v + layer + yu), __ldg(v + layer + yd), vb, vf, vc);
    float un, vn;
    grayscott_update(uc, vc, lap_u, lap_v, p, un, vn);
    uo[layer + col] = un, vo[layer + col] = vn;
    ub = uc, vb = vc, uc = uf, vc = vf;
  }
}

/// kMode 0: the product's march (a runtime trip count, wrap tests in every layer); 1: interior
/// blocks march a constant kZ layers with no wrap, unrolled; 2: as 1, the column's kZ + 2 values
/// of u and v loaded first; 3: as 2 with streaming stores; 4: as 2 with the L2::256B hint.
template <int kBX, int kBY, int kZ, int kMode>
__global__ void __launch_bounds__(kBX * kBY) gs_kernel(const float* __restrict__ u, const float* __restrict__ v,
                                                       float* __restrict__ uo, float* __restrict__ vo, int w, int h,
                                                       int d, GrayScottParams p) {
  const int x = blockIdx.x * kBX + threadIdx.x, y = blockIdx.y * kBY + threadIdx.y, z0 = blockIdx.z * kZ;
  if (x >= w || y >= h || z0 >= d) return;
  const size_t plane = (size_t)w * h, row = (size_t)y * w, col = row + x;
  const size_t xl = row + (x == 0 ? w - 1 : x - 1), xr = row + (x == w - 1 ? 0 : x + 1);
  const size_t yu = (size_t)(y == 0 ? h - 1 : y - 1) * w + x, yd = (size_t)(y == h - 1 ? 0 : y + 1) * w + x;
  constexpr int kHint = kMode == 4 ? 1 : 0;
  constexpr bool kStream = kMode == 3;
  if (kMode >= 1 && z0 > 0 && z0 + kZ < d) {
    if constexpr (kMode >= 2) {
      float uz[kZ + 2], vz[kZ + 2];
#pragma unroll
      for (int k = 0; k < kZ + 2; ++k) {
        const size_t at = (size_t)(z0 - 1 + k) * plane + col;
        uz[k] = ld<kHint>(u + at), vz[k] = ld<kHint>(v + at);
      }
#pragma unroll
      for (int k = 0; k < kZ; ++k) {
        const size_t layer = (size_t)(z0 + k) * plane;
        const float lap_u = laplacian7(ld<kHint>(u + layer + xl), ld<kHint>(u + layer + xr), ld<kHint>(u + layer + yu),
                                       ld<kHint>(u + layer + yd), uz[k], uz[k + 2], uz[k + 1]);
        const float lap_v = laplacian7(ld<kHint>(v + layer + xl), ld<kHint>(v + layer + xr), ld<kHint>(v + layer + yu),
                                       ld<kHint>(v + layer + yd), vz[k], vz[k + 2], vz[k + 1]);
        float un, vn;
        grayscott_update(uz[k + 1], vz[k + 1], lap_u, lap_v, p, un, vn);
        st<kStream>(uo + layer + col, un), st<kStream>(vo + layer + col, vn);
      }
    } else {
      float ub = __ldg(u + (z0 - 1) * plane + col), vb = __ldg(v + (z0 - 1) * plane + col);
      float uc = __ldg(u + z0 * plane + col), vc = __ldg(v + z0 * plane + col);
#pragma unroll
      for (int k = 0; k < kZ; ++k) {
        const size_t layer = (size_t)(z0 + k) * plane;
        const float uf = __ldg(u + layer + plane + col), vf = __ldg(v + layer + plane + col);
        const float lap_u = laplacian7(__ldg(u + layer + xl), __ldg(u + layer + xr), __ldg(u + layer + yu),
                                       __ldg(u + layer + yd), ub, uf, uc);
        const float lap_v = laplacian7(__ldg(v + layer + xl), __ldg(v + layer + xr), __ldg(v + layer + yu),
                                       __ldg(v + layer + yd), vb, vf, vc);
        float un, vn;
        grayscott_update(uc, vc, lap_u, lap_v, p, un, vn);
        uo[layer + col] = un, vo[layer + col] = vn;
        ub = uc, vb = vc, uc = uf, vc = vf;
      }
    }
    return;
  }
  // The product's march, for every block in mode 0 and the first and last z blocks otherwise.
  march(u, v, uo, vo, w, h, d, p, x, y, z0, kZ);
}

/// The product's march with the march length `chunk` chosen at run time (up to a whole column:
/// no layer read twice), blocks of kBX × kBY; kZFirst: consecutive blocks march the same (x, y)
/// columns' z chunks (blockIdx.x is the chunk), so that the layers two chunks share are read close
/// together in time.
template <int kBX, int kBY, bool kZFirst>
__global__ void __launch_bounds__(kBX * kBY) gs_chunk(const float* __restrict__ u, const float* __restrict__ v,
                                                      float* __restrict__ uo, float* __restrict__ vo, int w, int h,
                                                      int d, int chunk, GrayScottParams p) {
  const int bx = kZFirst ? blockIdx.y : blockIdx.x, by = kZFirst ? blockIdx.z : blockIdx.y, bz = kZFirst ? blockIdx.x : blockIdx.z;
  const int x = bx * kBX + threadIdx.x, y = by * kBY + threadIdx.y, z0 = bz * chunk;
  if (x >= w || y >= h || z0 >= d) return;
  march(u, v, uo, vo, w, h, d, p, x, y, z0, chunk);
}

/// Register prefetch: the column's next kAhead layers of u and v in flight while layer z is
/// computed (a ring in registers), the march `chunk` layers long.
template <int kBX, int kBY, int kAhead>
__global__ void __launch_bounds__(kBX * kBY) gs_ahead(const float* __restrict__ u, const float* __restrict__ v,
                                                      float* __restrict__ uo, float* __restrict__ vo, int w, int h,
                                                      int d, int chunk, GrayScottParams p) {
  const int x = blockIdx.x * kBX + threadIdx.x, y = blockIdx.y * kBY + threadIdx.y, z0 = blockIdx.z * chunk;
  if (x >= w || y >= h || z0 >= d) return;
  const size_t plane = (size_t)w * h, row = (size_t)y * w, col = row + x;
  const size_t xl = row + (x == 0 ? w - 1 : x - 1), xr = row + (x == w - 1 ? 0 : x + 1);
  const size_t yu = (size_t)(y == 0 ? h - 1 : y - 1) * w + x, yd = (size_t)(y == h - 1 ? 0 : y + 1) * w + x;
  const int end = min(z0 + chunk, d);
  float ur[kAhead + 2], vr[kAhead + 2];  // layers z − 1 … z + kAhead
#pragma unroll
  for (int k = 0; k < kAhead + 2; ++k) {
    const int z = z0 - 1 + k;
    if (z <= end) {
      const size_t at = (size_t)((z + d) % d) * plane + col;
      ur[k] = __ldg(u + at), vr[k] = __ldg(v + at);
    }
  }
  for (int z = z0; z < end; ++z) {
    const size_t layer = (size_t)z * plane;
    const float lap_u = laplacian7(__ldg(u + layer + xl), __ldg(u + layer + xr), __ldg(u + layer + yu),
                                   __ldg(u + layer + yd), ur[0], ur[2], ur[1]);
    const float lap_v = laplacian7(__ldg(v + layer + xl), __ldg(v + layer + xr), __ldg(v + layer + yu),
                                   __ldg(v + layer + yd), vr[0], vr[2], vr[1]);
    float un, vn;
    grayscott_update(ur[1], vr[1], lap_u, lap_v, p, un, vn);
    uo[layer + col] = un, vo[layer + col] = vn;
#pragma unroll
    for (int k = 0; k < kAhead + 1; ++k) ur[k] = ur[k + 1], vr[k] = vr[k + 1];
    const int next = z + kAhead + 1;
    if (next <= end) {
      const size_t at = (size_t)(next % d) * plane + col;
      ur[kAhead + 1] = __ldg(u + at), vr[kAhead + 1] = __ldg(v + at);
    }
  }
}

__device__ __forceinline__ void cp_async4(float* smem, const float* g) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(g));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kN>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(kN)); }

/// Shared-memory tiles: a block's kBX × kBY tile of each layer and its 1-cell rim, u and v, copied
/// in asynchronously (cp.async) kS − 3 layers ahead of the one computed, into a ring of kS stages;
/// every neighbour comes from shared memory. Needs w % kBX == 0 and h % kBY == 0.
template <int kBX, int kBY, int kS>
__global__ void __launch_bounds__(kBX * kBY) gs_smem(const float* __restrict__ u, const float* __restrict__ v,
                                                     float* __restrict__ uo, float* __restrict__ vo, int w, int h,
                                                     int d, int chunk, GrayScottParams p) {
  static_assert(kS >= 4, "layers z - 1, z, z + 1 and one in flight");
  __shared__ float su[kS][kBY + 2][kBX + 2], sv[kS][kBY + 2][kBX + 2];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x = blockIdx.x * kBX + tx, y = blockIdx.y * kBY + ty, z0 = blockIdx.z * chunk;
  const size_t plane = (size_t)w * h;
  const int xl = x == 0 ? w - 1 : x - 1, xr = x == w - 1 ? 0 : x + 1;
  const int yu = y == 0 ? h - 1 : y - 1, yd = y == h - 1 ? 0 : y + 1;
  const int end = min(z0 + chunk, d);
  auto issue = [&](int z) {  // layer z (z0 − 1 … end) into its stage; always one group
    if (z <= end) {
      const int s = (z - z0 + 1) % kS;
      const size_t layer = (size_t)((z + d) % d) * plane;
      const float* ul = u + layer;
      const float* vl = v + layer;
      cp_async4(&su[s][ty + 1][tx + 1], ul + (size_t)y * w + x), cp_async4(&sv[s][ty + 1][tx + 1], vl + (size_t)y * w + x);
      if (tx == 0) cp_async4(&su[s][ty + 1][0], ul + (size_t)y * w + xl), cp_async4(&sv[s][ty + 1][0], vl + (size_t)y * w + xl);
      if (tx == kBX - 1)
        cp_async4(&su[s][ty + 1][kBX + 1], ul + (size_t)y * w + xr), cp_async4(&sv[s][ty + 1][kBX + 1], vl + (size_t)y * w + xr);
      if (ty == 0) cp_async4(&su[s][0][tx + 1], ul + (size_t)yu * w + x), cp_async4(&sv[s][0][tx + 1], vl + (size_t)yu * w + x);
      if (ty == kBY - 1)
        cp_async4(&su[s][kBY + 1][tx + 1], ul + (size_t)yd * w + x), cp_async4(&sv[s][kBY + 1][tx + 1], vl + (size_t)yd * w + x);
    }
    cp_async_commit();
  };
  for (int z = z0 - 1; z <= z0 + kS - 3; ++z) issue(z);
  for (int z = z0; z < end; ++z) {
    cp_async_wait<kS - 4>();  // layer z + 1 is in (those after it may not be)
    __syncthreads();
    const int sb = (z - z0) % kS, sc = (z - z0 + 1) % kS, sf = (z - z0 + 2) % kS;
    const float lap_u = laplacian7(su[sc][ty + 1][tx], su[sc][ty + 1][tx + 2], su[sc][ty][tx + 1], su[sc][ty + 2][tx + 1],
                                   su[sb][ty + 1][tx + 1], su[sf][ty + 1][tx + 1], su[sc][ty + 1][tx + 1]);
    const float lap_v = laplacian7(sv[sc][ty + 1][tx], sv[sc][ty + 1][tx + 2], sv[sc][ty][tx + 1], sv[sc][ty + 2][tx + 1],
                                   sv[sb][ty + 1][tx + 1], sv[sf][ty + 1][tx + 1], sv[sc][ty + 1][tx + 1]);
    float un, vn;
    grayscott_update(su[sc][ty + 1][tx + 1], sv[sc][ty + 1][tx + 1], lap_u, lap_v, p, un, vn);
    const size_t at = (size_t)z * plane + (size_t)y * w + x;
    uo[at] = un, vo[at] = vn;
    issue(z + kS - 2);  // into layer z − 2's stage: every thread is past it (the barrier above)
  }
}

/// A field with structure: u = 1, v = 0, and a noisy cube of u = 0.5, v = 0.25 every 37 cells.
__global__ void init_kernel(float* u, float* v, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const bool in = (i / 37) % 5 == 0;
    const float noise = (float)((i * 2654435761u) % 1000) * 1e-5f;
    u[i] = in ? 0.5f + noise : 1.0f;
    v[i] = in ? 0.25f - noise : 0.0f;
  }
}

struct Box {
  int n;
  size_t cells;
  float *u[2], *v[2];
  std::vector<float> ref_u, ref_v;  // the product kernel's state after 3 steps
  double copy_tbs = 0;
};

template <class Launch>
void time_it(Box& b, const char* name, int reps, Launch launch) {
  // Bits after 3 steps from the same start, against the product's.
  init_kernel<<<1024, 256>>>(b.u[0], b.v[0], b.cells);
  for (int s = 0; s < 3; ++s) launch(s);
  cudaDeviceSynchronize();
  std::vector<float> hu(b.cells), hv(b.cells);
  cudaMemcpy(hu.data(), b.u[1], b.cells * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(hv.data(), b.v[1], b.cells * 4, cudaMemcpyDeviceToHost);
  const char* bits = "same bits";
  if (b.ref_u.empty()) {
    b.ref_u = hu, b.ref_v = hv, bits = "(reference)";
  } else if (std::memcmp(hu.data(), b.ref_u.data(), b.cells * 4) || std::memcmp(hv.data(), b.ref_v.data(), b.cells * 4)) {
    bits = "BITS DIFFER";
  }
  const int n = b.n, steps = n >= 1024 ? 20 : n >= 512 ? 100 : 400;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0), cudaEventCreate(&e1);
  for (int s = 0; s < 10; ++s) launch(s);
  float best = 1e30f;
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(e0);
    for (int s = 0; s < steps; ++s) launch(s);
    cudaEventRecord(e1), cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    if (ms < best) best = ms;
  }
  const double cups = (double)b.cells * steps / (best * 1e-3), tbs = cups * 16 / 1e12;
  printf("%-44s %4d^3  %.3g cell updates/s  %.2f TB/s  %5.1f %% of the copy  %s  %s\n", name, n, cups, tbs,
         100 * tbs / b.copy_tbs, bits, cudaGetErrorString(cudaGetLastError()));
  cudaEventDestroy(e0), cudaEventDestroy(e1);
}

template <int kBX, int kBY, int kZ, int kMode>
void run(Box& b, const char* name, int reps) {
  const int n = b.n;
  const dim3 block(kBX, kBY), grid((n + kBX - 1) / kBX, (n + kBY - 1) / kBY, (n + kZ - 1) / kZ);
  GrayScottParams p;
  time_it(b, name, reps, [&](int s) {
    gs_kernel<kBX, kBY, kZ, kMode><<<grid, block>>>(b.u[s & 1], b.v[s & 1], b.u[1 - (s & 1)], b.v[1 - (s & 1)], n, n, n, p);
  });
}

template <int kBX, int kBY, bool kZFirst>
void run_chunk(Box& b, int chunk, int reps) {
  const int n = b.n, chunks = (n + chunk - 1) / chunk, bx = (n + kBX - 1) / kBX, by = (n + kBY - 1) / kBY;
  const dim3 block(kBX, kBY), grid = kZFirst ? dim3(chunks, bx, by) : dim3(bx, by, chunks);
  GrayScottParams p;
  char name[96];
  std::snprintf(name, sizeof name, "march %d layers%s: %dx%d", chunk, kZFirst ? ", z chunks first" : "", kBX, kBY);
  time_it(b, name, reps, [&](int s) {
    gs_chunk<kBX, kBY, kZFirst><<<grid, block>>>(b.u[s & 1], b.v[s & 1], b.u[1 - (s & 1)], b.v[1 - (s & 1)], n, n, n, chunk, p);
  });
}

template <int kBX, int kBY, int kAhead>
void run_ahead(Box& b, int chunk, int reps) {
  const int n = b.n;
  const dim3 block(kBX, kBY), grid((n + kBX - 1) / kBX, (n + kBY - 1) / kBY, (n + chunk - 1) / chunk);
  GrayScottParams p;
  char name[96];
  std::snprintf(name, sizeof name, "%d layers ahead, march %d: %dx%d", kAhead, chunk, kBX, kBY);
  time_it(b, name, reps, [&](int s) {
    gs_ahead<kBX, kBY, kAhead><<<grid, block>>>(b.u[s & 1], b.v[s & 1], b.u[1 - (s & 1)], b.v[1 - (s & 1)], n, n, n, chunk, p);
  });
}

template <int kBX, int kBY, int kS>
void run_smem(Box& b, int chunk, int reps) {
  const int n = b.n;
  const dim3 block(kBX, kBY), grid(n / kBX, n / kBY, (n + chunk - 1) / chunk);
  GrayScottParams p;
  char name[96];
  std::snprintf(name, sizeof name, "tiles by cp.async, %d stages, march %d: %dx%d", kS, chunk, kBX, kBY);
  time_it(b, name, reps, [&](int s) {
    gs_smem<kBX, kBY, kS><<<grid, block>>>(b.u[s & 1], b.v[s & 1], b.u[1 - (s & 1)], b.v[1 - (s & 1)], n, n, n, chunk, p);
  });
}

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {256, 512, 1024};
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  printf("%s\n", prop.name);
  for (const int n : sizes) {
    Box b{n, (size_t)n * n * n, {}, {}};
    bool ok = true;
    for (int i = 0; i < 2; ++i) ok = ok && cudaMalloc(&b.u[i], b.cells * 4) == cudaSuccess && cudaMalloc(&b.v[i], b.cells * 4) == cudaSuccess;
    if (!ok) { printf("%d^3: no memory\n", n); return 1; }
    // The bound: cudaMemcpy device to device of both fields (read + written), best of 5.
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    float best = 1e30f;
    for (int r = 0; r < 6; ++r) {
      cudaEventRecord(e0);
      cudaMemcpy(b.u[1], b.u[0], b.cells * 4, cudaMemcpyDeviceToDevice);
      cudaMemcpy(b.v[1], b.v[0], b.cells * 4, cudaMemcpyDeviceToDevice);
      cudaEventRecord(e1), cudaEventSynchronize(e1);
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      if (r > 0 && ms < best) best = ms;
    }
    b.copy_tbs = 2.0 * 2 * b.cells * 4 / (best * 1e-3) / 1e12;
    printf("copy %d^3: %.3f TB/s read + written; bound %.3g cell updates/s at 16 B\n", n, b.copy_tbs, b.copy_tbs * 1e12 / 16);
    run<64, 4, 8, 0>(b, "product: 64x4, 8 layers", 5);
    if (std::getenv("ALL")) {  // the forms of 2026-11-29 16:57 (all slower than the product's)
      run<64, 4, 8, 1>(b, "unrolled interior: 64x4, 8", 5);
      run<64, 4, 8, 2>(b, "column first: 64x4, 8", 5);
      run<64, 4, 8, 3>(b, "column first, streaming stores: 64x4, 8", 5);
      run<64, 4, 8, 4>(b, "column first, L2::256B: 64x4, 8", 5);
      run<64, 4, 16, 2>(b, "column first: 64x4, 16", 5);
      run<32, 8, 8, 1>(b, "unrolled interior: 32x8, 8", 5);
    }
    if (std::getenv("ALL")) {  // the marches of 2026-11-29 17:03 (none beat the product's by more than 3 points)
      for (const int chunk : {8, 16, 32, 64, 128, 256, 512, 1024}) {
        if (chunk > n) break;
        run_chunk<64, 4, false>(b, chunk, 5);
      }
      run_chunk<64, 4, true>(b, 8, 5);
      run_chunk<64, 4, true>(b, 16, 5);
      for (const int chunk : {32, 128, 1024}) {
        if (chunk > n) break;
        run_chunk<32, 8, false>(b, chunk, 5);
        run_chunk<128, 2, false>(b, chunk, 5);
        run_chunk<64, 2, false>(b, chunk, 5);
        run_chunk<32, 4, false>(b, chunk, 5);
      }
    }
    for (const int chunk : {8, 16, 32}) {
      run_ahead<64, 4, 1>(b, chunk, 5);
      run_ahead<64, 4, 2>(b, chunk, 5);
      run_ahead<64, 4, 4>(b, chunk, 5);
    }
    for (const int chunk : {8, 16, 32, 64}) {
      run_smem<64, 4, 4>(b, chunk, 5);
      run_smem<64, 4, 5>(b, chunk, 5);
      run_smem<32, 8, 5>(b, chunk, 5);
      run_smem<128, 2, 5>(b, chunk, 5);
    }
    for (int i = 0; i < 2; ++i) cudaFree(b.u[i]), cudaFree(b.v[i]);
    cudaEventDestroy(e0), cudaEventDestroy(e1);
  }
  return 0;
}
