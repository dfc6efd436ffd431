// A sharing mechanism's CUDA half in a table (registry.cpp, exports.cpp): its address in builds
// with CUDA, null without (the mechanism's name stays known, for messages).
#pragma once

#ifdef CUVIEW_HAVE_CUDA
#define CUVIEW_CUDA_HALF(half) &half
#else
#define CUVIEW_CUDA_HALF(half) nullptr
#endif
