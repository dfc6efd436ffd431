// The populations' storage, shared by the flows (lbm, lbm3d; --sim-option storage=fp32|fp16s):
// float32, or FluidX3D's FP16S, binary16 of (f − w)·2^15 — the shifted populations of a flow near
// rest stay below 2 in magnitude and keep ~3 significant digits, in half the bytes, while the
// arithmetic stays float32. decode and encode<T> convert; decode_raw and encode_raw leave out the
// 2^15, for arithmetic that carries the scale itself (lbm3d's collide<true>: 38 multiplications a
// cell fewer). The CUDA build uses the GPU's conversions, the host the same rounding (to nearest,
// ties to even, subnormals kept): the same bits. And `fused`, the multiply-add both backends round once.
#pragma once

#if !defined(__CUDACC__)
#include <bit>
#endif
#include <cmath>
#include <cstdint>
#include <cstring>

#include "cuview/host_device.hpp"
#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

// The per-cell math inlined into every loop that calls it, so that the host compiler vectorises
// the loop over x (a call would stop it) and the GPU keeps the populations in registers.
#if defined(__CUDACC__)
#define CUVIEW_CELL_INLINE __forceinline__
#elif defined(__GNUC__)
#define CUVIEW_CELL_INLINE __attribute__((always_inline)) inline
#else
#define CUVIEW_CELL_INLINE inline
#endif

namespace cuview::sim {

/// A float's bits and back (std::bit_cast, which the CUDA build's C++17 lacks).
CUVIEW_HD CUVIEW_CELL_INLINE std::uint32_t bits_of(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
CUVIEW_HD CUVIEW_CELL_INLINE float float_of(std::uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

/// a · b + c rounded once: the GPU's fused multiply-add, the host's FMA instruction (or libm's
/// fmaf where the build lacks one). The flows' collisions spell theirs out with it (the builds
/// contract nothing by themselves): the same bits on both.
CUVIEW_HD CUVIEW_CELL_INLINE float fused(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

/// FP16S's scale: a stored value is (f − w) · kFp16sUnit.
inline constexpr float kFp16sUnit = 32768.0f, kFp16sInverseUnit = 3.0517578125e-05f;

/// A stored population as float32 in the storage's own unit: itself, or an FP16S value's binary16
/// (T = std::uint16_t, its bits) unscaled — (f − w) · 2^15. decode scales it back.
CUVIEW_HD CUVIEW_CELL_INLINE float decode_raw(float v) { return v; }
CUVIEW_HD CUVIEW_CELL_INLINE float decode_raw(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h));
#else
  // F. Giesen's half_to_float (public domain): exact, subnormals included.
  std::uint32_t o = static_cast<std::uint32_t>(h & 0x7fffu) << 13;
  const std::uint32_t exp = o & (0x7c00u << 13);
  o += (127u - 15u) << 23;
  if (exp == (0x7c00u << 13)) {
    o += (128u - 16u) << 23;  // Inf, NaN
  } else if (exp == 0) {      // zero, subnormal: renormalise
    o += 1u << 23;
    o = bits_of(float_of(o) - float_of(113u << 23));
  }
  o |= static_cast<std::uint32_t>(h & 0x8000u) << 16;
  return float_of(o);
#endif
}
/// A stored population as float32: itself, or an FP16S value (T = std::uint16_t, its bits).
CUVIEW_HD CUVIEW_CELL_INLINE float decode(float v) { return v; }
CUVIEW_HD CUVIEW_CELL_INLINE float decode(std::uint16_t h) { return decode_raw(h) * kFp16sInverseUnit; }
/// What is stored of x, given in the storage's own unit (decode_raw's): x itself, or the nearest
/// binary16 (to nearest, ties to even).
template <class T>
CUVIEW_HD CUVIEW_CELL_INLINE T encode_raw(float x);
template <>
CUVIEW_HD CUVIEW_CELL_INLINE float encode_raw<float>(float x) {
  return x;
}
template <>
CUVIEW_HD CUVIEW_CELL_INLINE std::uint16_t encode_raw<std::uint16_t>(float x) {
#if defined(__CUDA_ARCH__)
  return __half_as_ushort(__float2half_rn(x));
#elif defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && defined(__x86_64__)
  // IEEE binary16 by the compiler: one F16C instruction (vectorised) in the host loop's AVX
  // builds, which enable it, a library call elsewhere. The same bits as below and as the GPU
  // (compared over every float32 but NaN payloads under flush-to-zero, 2026-11-29).
  return std::bit_cast<std::uint16_t>(static_cast<_Float16>(x));
#else
  // F. Giesen's float_to_half_fast3_rtne (public domain): round to nearest even, subnormals and
  // overflow to infinity as IEEE says.
  std::uint32_t f = bits_of(x);
  const std::uint32_t sign = f & 0x80000000u;
  f ^= sign;
  std::uint32_t o;
  if (f >= (127u + 16u) << 23) {
    o = f > (255u << 23) ? 0x7e00u : 0x7c00u;
  } else if (f < (113u << 23)) {  // a subnormal half: the float addition aligns and rounds
    const std::uint32_t magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    o = bits_of(float_of(f) + float_of(magic)) - magic;
  } else {
    const std::uint32_t odd = (f >> 13) & 1u;
    f += ((15u - 127u) << 23) + 0xfffu;
    f += odd;
    o = f >> 13;
  }
  return static_cast<std::uint16_t>(o | (sign >> 16));
#endif
}
/// What is stored of population x (float32): x itself, or its FP16S value.
template <class T>
CUVIEW_HD CUVIEW_CELL_INLINE T encode(float x) {
  if constexpr (sizeof(T) == 2)
    return encode_raw<T>(x * kFp16sUnit);
  else
    return encode_raw<T>(x);
}
/// What the storage keeps of x: x itself in float32, the nearest FP16S value otherwise.
template <class T>
CUVIEW_HD CUVIEW_CELL_INLINE float stored(float x) {
  return decode(encode<T>(x));
}

#if !defined(__CUDACC__)
/// `mask` all ones: a, all zeros: b; bit for bit (a select the host compiler vectorises as and/or).
inline float select_bits(std::uint32_t mask, float a, float b) {
  return std::bit_cast<float>((std::bit_cast<std::uint32_t>(a) & mask) | (std::bit_cast<std::uint32_t>(b) & ~mask));
}
#endif

}  // namespace cuview::sim
