// The D3Q19 update's memory schemes side by side on a box of plain cells (no walls, no flags):
// two arrays (A → B pull) against one array in place (Esoteric Pull, lbm3d.hpp Esoteric), each in
// float32 and FP16S, over block shapes, blocks per SM, streaming stores, the loads' cache hints
// (`hints`), the populations' layout (`layout`: planes, or bricks of cells), the x faces' loads
// (`faces`), and the collision as
// it was before 2026-11-29 (each direction's equilibrium on its own, no fused multiply-adds:
// collide_v1) against lbm3d.hpp's (pairs, fused, FP16S unscaled); cell updates/s. What
// lbm3d_cuda.cu's choices rest on (docs/benchmarks.md "The D3Q19 flow in place"). Not part of the
// build: on a GPU host,
//   nvcc -O3 -std=c++17 --ftz=true --fmad=false --expt-relaxed-constexpr -arch=sm_90 \
//     -Icompute -Icommon/include bench/flow3d_variants.cu -o flow3d-variants && ./flow3d-variants [collide|hints|layout|faces]
#include <cstdio>
#include <cstdint>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include "sims/lbm3d/lbm3d.hpp"
using namespace cuview::sim::lbm3d;
using cuview::sim::decode;
using cuview::sim::decode_raw;
using cuview::sim::encode;
using cuview::sim::encode_raw;

/// The collision before 2026-11-29, for comparison (BGK only: the box has no force).
__device__ __forceinline__ void collide_v1(float* ft, const Params& p) {
  float drho, ux, uy, uz;
  moments(ft, p.force, drho, ux, uy, uz);
  const float rho = 1.0f + drho;
#pragma unroll
  for (int i = 0; i < kQ; ++i) ft[i] = ft[i] - p.omega * (ft[i] - shifted_equilibrium(i, drho, rho, ux, uy, uz));
}
/// Collision kC of the box's cells: 0 collide_v1, 1 collide, 2 collide on FP16S's values unscaled.
/// A load through the read-only path with cache hint kL: 0 none (__ldg), 1 L2::256B (the L2 fetches
/// the whole 256-byte block a miss falls in), 2 L2::128B, 3 L1::no_allocate with L2::256B.
template <int kL>
__device__ __forceinline__ float ld(const float* a) {
  float v;
  if constexpr (kL == 0) v = __ldg(a);
  else if constexpr (kL == 1) asm("ld.global.nc.L2::256B.f32 %0, [%1];" : "=f"(v) : "l"(a));
  else if constexpr (kL == 2) asm("ld.global.nc.L2::128B.f32 %0, [%1];" : "=f"(v) : "l"(a));
  else asm("ld.global.nc.L1::no_allocate.L2::256B.f32 %0, [%1];" : "=f"(v) : "l"(a));
  return v;
}
template <int kL>
__device__ __forceinline__ std::uint16_t ld(const std::uint16_t* a) {
  unsigned short v;
  if constexpr (kL == 0) v = __ldg(a);
  else if constexpr (kL == 1) asm("ld.global.nc.L2::256B.u16 %0, [%1];" : "=h"(v) : "l"(a));
  else if constexpr (kL == 2) asm("ld.global.nc.L2::128B.u16 %0, [%1];" : "=h"(v) : "l"(a));
  else asm("ld.global.nc.L1::no_allocate.L2::256B.u16 %0, [%1];" : "=h"(v) : "l"(a));
  return v;
}
template <class T, int kC, int kL = 0>
__device__ __forceinline__ float load(const T* a) { return kC == 2 ? decode_raw(ld<kL>(a)) : decode(ld<kL>(a)); }
template <class T, int kC>
__device__ __forceinline__ T save(float v) { return kC == 2 ? encode_raw<T>(v) : encode<T>(v); }
template <int kC>
__device__ __forceinline__ void run_collision(float* ft, const Params& p) {
  if constexpr (kC == 0) collide_v1(ft, p); else collide<kC == 2>(ft, p);
}

/// The box cell of this thread (blocks of kB cells along x, a block row per (y, z), the box's
/// faces left out), or false beyond the row.
template <int kB>
__device__ __forceinline__ bool box_cell(int w, int h, size_t& here, ptrdiff_t& row, ptrdiff_t& layer) {
  const int x = 1 + blockIdx.x * kB + threadIdx.x, y = 1 + blockIdx.y, z = 1 + blockIdx.z;
  here = x + (size_t)w * (y + (size_t)h * z);
  row = w, layer = (ptrdiff_t)w * h;
  return x < w - 1;
}

template <class T, int kT, int kB, int kMin, int kStoreMode, int kC, int kL = 0>
__global__ void __launch_bounds__(kB, kMin) ep_kernel(T* __restrict__ pops, size_t plane, int w, int h, Params p) {
  size_t here;
  ptrdiff_t row, layer;
  if (!box_cell<kB>(w, h, here, row, layer)) return;
  float ft[kQ];
#pragma unroll
  for (int i = 0; i < kQ; ++i) {
    const ptrdiff_t off = cx(i) + row * cy(i) + layer * cz(i);
    ft[i] = load<T, kC, kL>(pops + Esoteric<T>::slot_at(i, kT, false) * plane + ((i & 1) ? here : here - off));
  }
  run_collision<kC>(ft, p);
#pragma unroll
  for (int i = 0; i < kQ; ++i) {
    const int o = opposite(i);
    const ptrdiff_t off = cx(i) + row * cy(i) + layer * cz(i);
    T* a = pops + Esoteric<T>::slot_at(o, kT, false) * plane + ((o & 1) ? here : here + off);
    if constexpr (kStoreMode == 1) __stcs(a, save<T, kC>(ft[i])); else *a = save<T, kC>(ft[i]);
  }
}

/// Where population slot `slot` of cell `cell` lies, by layout kLay: 0 planes of the whole grid
/// (the product's), k > 0 bricks of 2^k cells along x, every slot of a brick together (AoSoA: a
/// warp's 19 loads then fall in a few kilobytes instead of 19 planes a grid apart).
template <int kLay>
__device__ __forceinline__ size_t at(int slot, size_t cell, size_t plane) {
  if constexpr (kLay == 0) return slot * plane + cell;
  else return (((cell >> kLay) * kQ + slot) << kLay) | (cell & ((size_t{1} << kLay) - 1));
}
/// ep_kernel in layout kLay, the product's collision and L2::256B loads; kAlign: a block's first
/// thread at x = 0 (warps on 128-byte boundaries; the faces' threads idle) instead of x = 1.
template <class T, int kLay, bool kAlign, int kB, int kMin>
__global__ void __launch_bounds__(kB, kMin) layout_kernel(T* __restrict__ pops, size_t plane, int w, int h, Params p, int t) {
  const int x = (kAlign ? 0 : 1) + blockIdx.x * kB + threadIdx.x, y = 1 + blockIdx.y, z = 1 + blockIdx.z;
  if (x < 1 || x >= w - 1) return;
  const size_t here = x + (size_t)w * (y + (size_t)h * z);
  const ptrdiff_t row = w, layer = (ptrdiff_t)w * h;
  constexpr int kC = sizeof(T) == 2 ? 2 : 1;
  float ft[kQ];
#pragma unroll
  for (int i = 0; i < kQ; ++i) {
    const ptrdiff_t off = cx(i) + row * cy(i) + layer * cz(i);
    ft[i] = load<T, kC, 1>(pops + at<kLay>(Esoteric<T>::slot_at(i, t, false), (i & 1) ? here : here - off, plane));
  }
  run_collision<kC>(ft, p);
#pragma unroll
  for (int i = 0; i < kQ; ++i) {
    const int o = opposite(i);
    const ptrdiff_t off = cx(i) + row * cy(i) + layer * cz(i);
    pops[at<kLay>(Esoteric<T>::slot_at(o, t, false), (o & 1) ? here : here + off, plane)] = save<T, kC>(ft[i]);
  }
}

template <class T, int kB, int kMin>
__global__ void __launch_bounds__(kB, kMin) ab_kernel(const T* __restrict__ f, T* __restrict__ fo, size_t plane, int w, int h, Params p) {
  size_t here;
  ptrdiff_t row, layer;
  if (!box_cell<kB>(w, h, here, row, layer)) return;
  float ft[kQ];
#pragma unroll
  for (int i = 0; i < kQ; ++i) ft[i] = decode(__ldg(f + i * plane + (here - cx(i) - row * cy(i) - layer * cz(i))));
  collide_v1(ft, p);
#pragma unroll
  for (int i = 0; i < kQ; ++i) fo[i * plane + here] = encode<T>(ft[i]);
}

template <class T> __global__ void fill(T* f, size_t n, T v) { for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) f[i] = v; }

/// Times `step` (a launch of step s): 4 warm-up steps, then the best of `reps` runs of a size's
/// steps; prints the box's cell updates/s and the traffic they mean.
template <class T, class Step>
void time_box(const char* name, int n, int reps, int steps, Step step) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int s = 0; s < 4; ++s) step(s);
  float best = 1e30f;
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(a);
    for (int s = 0; s < steps; ++s) step(s);
    cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms;
  }
  const double cups = (double)(n - 2) * (n - 2) * (n - 2) * steps / (best * 1e-3);
  printf("%-28s %5d^3  %.3g cell updates/s  %.2f TB/s at %d B  err=%s\n", name, n, cups, cups * (kQ * 2 * sizeof(T) + 1) / 1e12, (int)(kQ * 2 * sizeof(T) + 1), cudaGetErrorString(cudaGetLastError()));
  cudaEventDestroy(a); cudaEventDestroy(b);
}

template <class T, int kB, int kMin, int kMode, int kC = 0, int kL = 0>
void run(const char* name, int n, bool ab, int reps) {
  const size_t cells = (size_t)n * n * n, plane = cells;
  T* f = nullptr; T* g = nullptr;
  if (cudaMalloc(&f, cells * kQ * sizeof(T)) != cudaSuccess) { printf("%s %d: no memory\n", name, n); cudaGetLastError(); return; }
  if (ab && cudaMalloc(&g, cells * kQ * sizeof(T)) != cudaSuccess) { printf("%s %d: no memory\n", name, n); cudaFree(f); cudaGetLastError(); return; }
  fill<<<1024, 256>>>(f, cells * kQ, encode<T>(0.001f));
  if (ab) fill<<<1024, 256>>>(g, cells * kQ, encode<T>(0.001f));
  Params p; p.periodic = 1;
  dim3 grid((n - 2 + kB - 1) / kB, n - 2, n - 2);
  auto step = [&](int s) {
    if (ab) { if (s & 1) ab_kernel<T, kB, kMin><<<grid, kB>>>(g, f, plane, n, n, p); else ab_kernel<T, kB, kMin><<<grid, kB>>>(f, g, plane, n, n, p); }
    else { if (s & 1) ep_kernel<T, 1, kB, kMin, kMode, kC, kL><<<grid, kB>>>(f, plane, n, n, p); else ep_kernel<T, 0, kB, kMin, kMode, kC, kL><<<grid, kB>>>(f, plane, n, n, p); }
  };
  time_box<T>(name, n, reps, n >= 1024 ? 10 : n >= 512 ? 40 : 200, step);
  cudaFree(f); if (g) cudaFree(g);
}

/// The product's x faces in the box (`faces`): cells x = 1 and x = w − 2 load their populations from
/// a gathered array (face[((i · 2 + side) · n + z) · n + y], as face_kernel's) instead of their slots.
/// kWay 0: no faces (the aligned box); 1: each load's pointer chosen (step_cell's form); 2: a branch
/// of its own; 3: one base pointer, the face array placed after the planes, each load's index chosen;
/// 4: every cell loads its slots as a plain cell does, then a face cell loads the gathered ones over them.
template <class T, int kWay, int kB, int kMin>
__global__ void __launch_bounds__(kB, kMin) face_way_kernel(T* __restrict__ pops, const T* __restrict__ face, size_t plane, int w, int h, Params p, int t) {
  const int x = blockIdx.x * kB + threadIdx.x, y = 1 + blockIdx.y, z = 1 + blockIdx.z;
  if (x < 1 || x >= w - 1) return;
  const size_t here = x + (size_t)w * (y + (size_t)h * z);
  const ptrdiff_t row = w, layer = (ptrdiff_t)w * h;
  constexpr int kC = sizeof(T) == 2 ? 2 : 1;
  const bool at_face = kWay != 0 && (x == 1 || x == w - 2);
  const size_t fstride = 2 * (size_t)h * h, first = ((x == 1 ? 0 : (size_t)h) + z) * (size_t)h + y;
  float ft[kQ];
  if constexpr (kWay == 4) {
#pragma unroll
    for (int i = 0; i < kQ; ++i) {
      const ptrdiff_t off = cx(i) + row * cy(i) + layer * cz(i);
      ft[i] = load<T, kC, 1>(pops + Esoteric<T>::slot_at(i, t, false) * plane + ((i & 1) ? here : here - off));
    }
    if (at_face) {
#pragma unroll
      for (int i = 0; i < kQ; ++i) ft[i] = load<T, kC, 1>(face + first + i * fstride);
    }
  } else if constexpr (kWay == 2) {
    if (at_face) {
#pragma unroll
      for (int i = 0; i < kQ; ++i) ft[i] = load<T, kC, 1>(face + first + i * fstride);
    } else {
#pragma unroll
      for (int i = 0; i < kQ; ++i) {
        const ptrdiff_t off = cx(i) + row * cy(i) + layer * cz(i);
        ft[i] = load<T, kC, 1>(pops + Esoteric<T>::slot_at(i, t, false) * plane + ((i & 1) ? here : here - off));
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < kQ; ++i) {
      const ptrdiff_t off = cx(i) + row * cy(i) + layer * cz(i);
      const size_t in_pops = Esoteric<T>::slot_at(i, t, false) * plane + ((i & 1) ? here : here - off);
      if constexpr (kWay == 3)
        ft[i] = load<T, kC, 1>(pops + (at_face ? kQ * plane + first + i * fstride : in_pops));
      else
        ft[i] = load<T, kC, 1>(at_face ? face + first + i * fstride : pops + in_pops);
    }
  }
  run_collision<kC>(ft, p);
#pragma unroll
  for (int i = 0; i < kQ; ++i) {
    const int o = opposite(i);
    const ptrdiff_t off = cx(i) + row * cy(i) + layer * cz(i);
    pops[Esoteric<T>::slot_at(o, t, false) * plane + ((o & 1) ? here : here + off)] = save<T, kC>(ft[i]);
  }
}
template <class T, int kWay, int kB, int kMin>
void run_faces(const char* name, int n, int reps) {
  const size_t cells = (size_t)n * n * n, plane = cells, faces = 2 * (size_t)n * n * kQ;
  T* f = nullptr;
  if (cudaMalloc(&f, (cells * kQ + faces) * sizeof(T)) != cudaSuccess) { printf("%s %d: no memory\n", name, n); cudaGetLastError(); return; }
  fill<<<1024, 256>>>(f, cells * kQ + faces, encode<T>(0.001f));
  Params p; p.periodic = 1;
  dim3 grid((n + kB - 1) / kB, n - 2, n - 2);
  auto step = [&](int s) { face_way_kernel<T, kWay, kB, kMin><<<grid, kB>>>(f, f + cells * kQ, plane, n, n, p, s & 1); };
  time_box<T>(name, n, reps, n >= 1024 ? 10 : 40, step);
  cudaFree(f);
}

template <class T, int kLay, bool kAlign, int kB, int kMin>
void run_layout(const char* name, int n, int reps) {
  const size_t cells = (size_t)n * n * n, plane = cells;
  T* f = nullptr;
  if (cudaMalloc(&f, cells * kQ * sizeof(T)) != cudaSuccess) { printf("%s %d: no memory\n", name, n); cudaGetLastError(); return; }
  fill<<<1024, 256>>>(f, cells * kQ, encode<T>(0.001f));
  Params p; p.periodic = 1;
  dim3 grid((n - (kAlign ? 0 : 2) + kB - 1) / kB, n - 2, n - 2);
  auto step = [&](int s) { layout_kernel<T, kLay, kAlign, kB, kMin><<<grid, kB>>>(f, plane, n, n, p, s & 1); };
  time_box<T>(name, n, reps, n >= 1024 ? 10 : 40, step);
  cudaFree(f);
}

/// A device-to-device copy of 1 GiB: the bound (read + written).
void copy_bound() {
  const size_t bytes = size_t{1} << 30;
  void *a = nullptr, *b = nullptr;
  cudaMalloc(&a, bytes); cudaMalloc(&b, bytes);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
  float best = 1e30f;
  for (int r = 0; r < 10; ++r) {
    cudaEventRecord(e0); cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice); cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); if (ms < best) best = ms;
  }
  printf("copy 1 GiB: %.2f TB/s (read + written)\n", 2.0 * bytes / (best * 1e-3) / 1e12);
  cudaFree(a); cudaFree(b);
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "hints") {  // the loads' cache hints (the product's collision)
    for (int n : {512, 1024}) {
      run<float, 128, 6, 0, 1, 0>("ep fp32 128x6 ldg", n, false, 5);
      run<float, 128, 6, 0, 1, 1>("ep fp32 128x6 L2::256B", n, false, 5);
      run<float, 128, 6, 0, 1, 2>("ep fp32 128x6 L2::128B", n, false, 5);
      run<float, 128, 6, 0, 1, 3>("ep fp32 128x6 noL1 L2::256B", n, false, 5);
      run<float, 128, 8, 0, 1, 1>("ep fp32 128x8 L2::256B", n, false, 5);
      run<std::uint16_t, 128, 8, 0, 2, 0>("ep fp16s 128x8 ldg", n, false, 5);
      run<std::uint16_t, 128, 8, 0, 2, 1>("ep fp16s 128x8 L2::256B", n, false, 5);
      run<std::uint16_t, 128, 8, 0, 2, 2>("ep fp16s 128x8 L2::128B", n, false, 5);
      run<std::uint16_t, 128, 8, 0, 2, 3>("ep fp16s 128x8 noL1 L2::256B", n, false, 5);
    }
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "layout") {  // planes against bricks of cells (AoSoA), aligned or not
    copy_bound();
    for (int n : {512, 1024}) {
      run_layout<float, 0, false, 128, 6>("fp32 planes x from 1", n, 5);
      run_layout<float, 0, true, 128, 6>("fp32 planes aligned", n, 5);
      run_layout<float, 5, true, 128, 6>("fp32 bricks of 32", n, 5);
      run_layout<float, 7, true, 128, 6>("fp32 bricks of 128", n, 5);
      run_layout<float, 9, true, 128, 6>("fp32 bricks of 512", n, 5);
      run_layout<std::uint16_t, 0, false, 128, 8>("fp16s planes x from 1", n, 5);
      run_layout<std::uint16_t, 0, true, 128, 8>("fp16s planes aligned", n, 5);
      run_layout<std::uint16_t, 6, true, 128, 8>("fp16s bricks of 64", n, 5);
      run_layout<std::uint16_t, 7, true, 128, 8>("fp16s bricks of 128", n, 5);
    }
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "faces") {  // the x faces' loads: none, chosen pointer, branch, chosen index
    for (int n : {512, 1024}) {
      run_faces<float, 0, 128, 6>("fp32 no faces", n, 5);
      run_faces<float, 1, 128, 6>("fp32 faces, pointer chosen", n, 5);
      run_faces<float, 2, 128, 6>("fp32 faces, branch", n, 5);
      run_faces<float, 3, 128, 6>("fp32 faces, index chosen", n, 5);
      run_faces<std::uint16_t, 0, 128, 8>("fp16s no faces", n, 5);
      run_faces<std::uint16_t, 1, 128, 8>("fp16s faces, pointer chosen", n, 5);
      run_faces<std::uint16_t, 2, 128, 8>("fp16s faces, branch", n, 5);
      run_faces<std::uint16_t, 3, 128, 8>("fp16s faces, index chosen", n, 5);
      run_faces<std::uint16_t, 4, 128, 8>("fp16s faces, loaded over", n, 5);
      run_faces<float, 4, 128, 6>("fp32 faces, loaded over", n, 5);
    }
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "collide") {  // the collisions against each other
    for (int n : {512, 1024}) {
      run<float, 128, 6, 0, 0>("ep fp32 128x6 v1", n, false, 5);
      run<float, 128, 6, 0, 1>("ep fp32 128x6 fused", n, false, 5);
      run<float, 128, 8, 0, 1>("ep fp32 128x8 fused", n, false, 5);
      run<float, 256, 4, 0, 1>("ep fp32 256x4 fused", n, false, 5);
      run<std::uint16_t, 128, 8, 0, 0>("ep fp16s 128x8 v1", n, false, 5);
      run<std::uint16_t, 128, 8, 0, 1>("ep fp16s 128x8 fused", n, false, 5);
      run<std::uint16_t, 128, 8, 0, 2>("ep fp16s 128x8 fused raw", n, false, 5);
      run<std::uint16_t, 128, 12, 0, 2>("ep fp16s 128x12 fused raw", n, false, 5);
      run<std::uint16_t, 128, 16, 0, 2>("ep fp16s 128x16 fused raw", n, false, 5);
    }
    return 0;
  }
  for (int n : {256, 512}) {
    run<float, 128, 8, 0>("ab fp32 128x8", n, true, 5);
    run<float, 128, 8, 0>("ep fp32 128x8", n, false, 5);
    run<float, 128, 8, 1>("ep fp32 128x8 stcs", n, false, 5);
    run<float, 256, 4, 0>("ep fp32 256x4", n, false, 5);
    run<float, 64, 16, 0>("ep fp32 64x16", n, false, 5);
    run<float, 128, 6, 0>("ep fp32 128x6", n, false, 5);
    run<float, 128, 12, 0>("ep fp32 128x12", n, false, 5);
    run<std::uint16_t, 128, 8, 0>("ab fp16s 128x8", n, true, 5);
    run<std::uint16_t, 128, 8, 0>("ep fp16s 128x8", n, false, 5);
    run<std::uint16_t, 128, 8, 1>("ep fp16s 128x8 stcs", n, false, 5);
    run<std::uint16_t, 256, 4, 0>("ep fp16s 256x4", n, false, 5);
    run<std::uint16_t, 64, 16, 0>("ep fp16s 64x16", n, false, 5);
    run<std::uint16_t, 128, 12, 0>("ep fp16s 128x12", n, false, 5);
  }
  run<float, 128, 8, 0>("ep fp32 128x8", 1024, false, 3);
  run<std::uint16_t, 128, 8, 0>("ep fp16s 128x8", 1024, false, 3);
}
