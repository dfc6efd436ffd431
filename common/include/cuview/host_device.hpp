// Marks functions that are compiled for both the host and the GPU.
#pragma once
#if defined(__CUDACC__)
#define CUVIEW_HD __host__ __device__
#else
#define CUVIEW_HD
#endif

// Unrolls a loop of the host compiler fully (GCC; nvcc unrolls small device loops by itself):
// a loop over the 9 directions of the lattice-Boltzmann flow, whose per-direction constants then
// fold away. The arithmetic and its order are unchanged.
#if defined(__CUDACC__) || !defined(__GNUC__) || defined(__clang__)
#define CUVIEW_UNROLL
#else
#define CUVIEW_UNROLL _Pragma("GCC unroll 16")
#endif
