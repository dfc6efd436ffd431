// Marks functions that are compiled for both the host and the GPU.
#pragma once
#if defined(__CUDACC__)
#define CUVIEW_HD __host__ __device__
#else
#define CUVIEW_HD
#endif
