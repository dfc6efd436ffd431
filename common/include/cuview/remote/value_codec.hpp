// The values of a remote view (and of a fetched region) as they travel: quantised into an
// Encoding, then one zstd frame. The gateway encodes, the remote viewer decodes.
//
// The format, before compression (remote_protocol.hpp's ViewHeader is its header):
//   u8   one byte a value: q in 0..254 stands for lo + q × (hi − lo) / 254; 255 is "no value"
//   u16  q in 0..65 534 stands for lo + q × (hi − lo) / 65 534; 65 535 is "no value"; in two byte
//        planes: every value's low byte, then every value's high byte
//   f32  IEEE 754 binary32 as sampled (NaN: no value; ±inf travel as they are), in four byte
//        planes, least significant first (byte k of value i at k × count + i)
// Byte planes put the slowly varying high bytes of neighbours together: zstd then compresses u16
// views about a third smaller and several times faster than interleaved values.
// lo and hi are the smallest and largest finite values (0, 0 when there are none). NaN is "no
// value" (outside the grid). An infinite value is not "no value": u8 and u16 clamp it, +inf to
// the top valid code (it decodes as hi), −inf to 0 (it decodes as lo). When hi == lo every finite
// value is code 0.
// The compressed payload is exactly one zstd frame (RFC 8878) that states its content size and
// ends with a content checksum; a decoder refuses any other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cuview/remote_protocol.hpp"
#include "cuview/unique_handle.hpp"

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

namespace cuview::remote {

/// One view's values, encoded: what a ViewHeader states about them and the compressed bytes.
struct EncodedValues {
  Encoding encoding = Encoding::u8;
  float lo = 0, hi = 0;  ///< range of the finite values (0, 0 when none)
  /// The largest |decoded − true| over the finite values: half a quantisation step,
  /// (hi − lo) / (levels − 1) / 2, plus one float ulp of max(|lo|, |hi|) for the rounding of the
  /// decoded float (without it a field of values near 1000 could not be held to a u16 step).
  /// 0 for f32, and when hi == lo.
  double error_bound = 0;
  std::uint64_t raw_bytes = 0;  ///< count × value_bytes(encoding)
  std::string payload;          ///< one zstd frame, with its content size and checksum
};

/// The largest |decoded − true| of finite values in [lo, hi] travelling in `encoding` (see
/// EncodedValues::error_bound).
double error_bound_of(Encoding encoding, float lo, float hi) noexcept;
/// The same for values rounded to float32 before they were encoded (a float64 or int64 field's;
/// lo and hi are the rounded values' range): plus one float32 ulp of max(|lo|, |hi|), more than
/// that rounding moves a finite value (an int64 is rounded twice, through double).
double error_bound_of_rounded(Encoding encoding, float lo, float hi) noexcept;

namespace detail {
struct ZstdCompressorTraits {
  using handle_type = ZSTD_CCtx_s*;
  static constexpr handle_type null() noexcept { return nullptr; }
  static void close(handle_type context) noexcept;
};
struct ZstdDecompressorTraits {
  using handle_type = ZSTD_DCtx_s*;
  static constexpr handle_type null() noexcept { return nullptr; }
  static void close(handle_type context) noexcept;
};
}  // namespace detail

/// Keeps its zstd context and scratch buffer between calls: no allocation per frame once warm.
/// Move-only (a moved-from encoder owns no context and may only be destroyed or assigned to); one
/// thread at a time.
class ValueEncoder {
 public:
  /// Throws Error(internal) if zstd cannot make a context or refuses the level.
  explicit ValueEncoder(int zstd_level = 1);

  /// Quantises `values` (NaN: no value) into `encoding` and compresses them; `out`'s buffers are
  /// reused. Throws Error(out_of_range) for more than kMaxViewSamples values.
  void encode(std::span<const float> values, Encoding encoding, EncodedValues& out);
  /// Compresses raw bytes as they are (fetch: float32 regions, lossless) into `out`, one zstd
  /// frame; `out`'s buffer is reused.
  void compress(std::span<const std::byte> raw, std::string& out);

 private:
  UniqueHandle<detail::ZstdCompressorTraits> context_;
  std::vector<std::byte> scratch_;  ///< the quantised values, before compression
};

/// Keeps its zstd context between calls. Strict and bounded: every size is checked against the
/// header's claims and the protocol's bounds before anything is allocated, and a payload must be
/// exactly one zstd frame of exactly the size the header says. Throws Error(bad_message) naming
/// what was wrong; never crashes on any input. Move-only; one thread at a time.
class ValueDecoder {
 public:
  /// Throws Error(internal) if zstd cannot make a context.
  ValueDecoder();

  /// Decodes a payload of `count` values in `encoding` with range [lo, hi] into `out` (floats, NaN
  /// for no value); raw_bytes must be count × value_bytes(encoding), count at most
  /// kMaxViewSamples. `out`'s capacity is reused.
  void decode(Encoding encoding, float lo, float hi, std::uint64_t count, std::uint64_t raw_bytes,
              std::string_view payload, std::vector<float>& out);
  /// Decompresses a payload of exactly `raw_bytes` (at most `limit`) into `out`; `out`'s
  /// capacity is reused.
  void decompress(std::string_view payload, std::uint64_t raw_bytes, std::uint64_t limit, std::vector<std::byte>& out);

 private:
  void decompress_into(std::string_view payload, std::span<std::byte> destination, std::string_view what);

  UniqueHandle<detail::ZstdDecompressorTraits> context_;
  std::vector<std::byte> scratch_;  ///< the quantised values, after decompression
};

}  // namespace cuview::remote
