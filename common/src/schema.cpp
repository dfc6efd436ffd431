#include "cuview/schema.hpp"

#include <cmath>
#include <cstring>

namespace cuview {
namespace {
template <class T>
T read(const void* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

/// IEEE binary16 bits as a double.
double half_value(std::uint16_t h) noexcept {
  const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  const double sign = (h & 0x8000) != 0 ? -1.0 : 1.0;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa == 0 ? sign * INFINITY : NAN;
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}
}  // namespace

double load_value(const void* p, DType t) noexcept {
  switch (t) {
    case DType::float32: return read<float>(p);
    case DType::float16: return half_value(read<std::uint16_t>(p));
    case DType::int32: return read<std::int32_t>(p);
    case DType::uint8: return read<std::uint8_t>(p);
    case DType::float64: return read<double>(p);
    case DType::int64: return static_cast<double>(read<std::int64_t>(p));
    case DType::bfloat16: {
      const std::uint32_t bits = std::uint32_t{read<std::uint16_t>(p)} << 16;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    }
  }
  return NAN;
}

}  // namespace cuview
