#include "cuview/remote/value_codec.hpp"

#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "cuview/error.hpp"

namespace cuview::remote {

namespace detail {
void ZstdCompressorTraits::close(handle_type context) noexcept { ZSTD_freeCCtx(context); }
void ZstdDecompressorTraits::close(handle_type context) noexcept { ZSTD_freeDCtx(context); }
}  // namespace detail

namespace {

static_assert(std::numeric_limits<float>::is_iec559, "f32 views travel as IEEE 754 binary32");

/// "3 686 400": sizes in messages, readable at a glance.
std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ' ';
    out += digits[i];
  }
  return out;
}

/// The "no value" code of a quantised encoding; the top valid code is one less.
constexpr std::uint32_t no_value_code(Encoding e) { return e == Encoding::u8 ? 0xffu : 0xffffu; }

struct FiniteRange {
  float lo = 0, hi = 0;
};

FiniteRange finite_range(std::span<const float> values) {
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  for (const float v : values)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (lo > hi) return {};  // no finite value
  return {lo, hi};
}

/// Codes of `values` in [lo, hi], one `Code` each, little-endian, into `out`. NaN: no value;
/// +inf clamps to the top valid code, −inf to 0; when hi == lo every finite value is 0.
template <class Code>
void quantise(std::span<const float> values, FiniteRange range, std::uint32_t none, std::byte* out) {
  const std::uint32_t top = none - 1;
  const double lo = range.lo, hi = range.hi;
  const double scale = hi > lo ? top / (hi - lo) : 0.0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float v = values[i];
    std::uint32_t q;
    if (std::isnan(v)) q = none;
    else if (v <= range.lo) q = 0;  // before `v >= hi`: with hi == lo, finite values are 0
    else if (v >= range.hi) q = top;
    else q = std::min(top, static_cast<std::uint32_t>((v - lo) * scale + 0.5));
    const auto code = static_cast<Code>(q);
    if constexpr (sizeof(Code) == 1) {
      out[i] = static_cast<std::byte>(code);
    } else {  // byte planes: every low byte, then every high byte
      out[i] = static_cast<std::byte>(code & 0xff);
      out[values.size() + i] = static_cast<std::byte>(code >> 8);
    }
  }
}

template <class Code>
void dequantise(const std::byte* codes, std::size_t count, float lo, float hi, std::uint32_t none, float* out) {
  const double step = (static_cast<double>(hi) - lo) / (none - 1);
  constexpr float no_value = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t i = 0; i < count; ++i) {
    std::uint32_t q;
    if constexpr (sizeof(Code) == 1)
      q = static_cast<std::uint32_t>(codes[i]);
    else
      q = static_cast<std::uint32_t>(codes[i]) | static_cast<std::uint32_t>(codes[count + i]) << 8;
    out[i] = q == none ? no_value : static_cast<float>(lo + q * step);
  }
}

/// Splits binary32 values into four byte planes, least significant first: neighbouring values
/// share their high bytes, which zstd then finds (a third smaller and several times faster than
/// compressing the values whole).
void split_float_planes(const float* from, std::size_t count, std::byte* to) {
  for (std::size_t i = 0; i < count; ++i) {
    const auto bits = std::bit_cast<std::uint32_t>(from[i]);
    to[i] = static_cast<std::byte>(bits & 0xff);
    to[count + i] = static_cast<std::byte>((bits >> 8) & 0xff);
    to[2 * count + i] = static_cast<std::byte>((bits >> 16) & 0xff);
    to[3 * count + i] = static_cast<std::byte>(bits >> 24);
  }
}

void join_float_planes(const std::byte* from, std::size_t count, float* to) {
  for (std::size_t i = 0; i < count; ++i) {
    const auto bits = static_cast<std::uint32_t>(from[i]) | static_cast<std::uint32_t>(from[count + i]) << 8 |
                      static_cast<std::uint32_t>(from[2 * count + i]) << 16 |
                      static_cast<std::uint32_t>(from[3 * count + i]) << 24;
    to[i] = std::bit_cast<float>(bits);
  }
}

std::string zstd_error(std::size_t code) { return std::string("zstd: ") + ZSTD_getErrorName(code); }

}  // namespace

namespace {
/// One float32 ulp of max(|lo|, |hi|).
double ulp_of_range(float lo, float hi) noexcept {
  const float largest = std::max(std::abs(lo), std::abs(hi));
  return std::nextafter(largest, std::numeric_limits<float>::infinity()) - largest;
}
}  // namespace

double error_bound_of(Encoding encoding, float lo, float hi) noexcept {
  if (encoding == Encoding::f32 || !(hi > lo)) return 0;
  const double half_step = (static_cast<double>(hi) - lo) / (no_value_code(encoding) - 1) / 2;
  return half_step + ulp_of_range(lo, hi);
}

double error_bound_of_rounded(Encoding encoding, float lo, float hi) noexcept {
  return error_bound_of(encoding, lo, hi) + ulp_of_range(lo, hi);
}

// ---- ValueEncoder ----

ValueEncoder::ValueEncoder(int zstd_level) : context_(ZSTD_createCCtx()) {
  if (!context_) throw Error(Errc::internal, "zstd could not create a compression context (out of memory?)");
  if (const auto rc = ZSTD_CCtx_setParameter(context_.get(), ZSTD_c_compressionLevel, zstd_level); ZSTD_isError(rc))
    throw Error(Errc::internal, "zstd refused compression level " + std::to_string(zstd_level) + ": " +
                                    ZSTD_getErrorName(rc));
  // The checksum catches a corrupted block that would otherwise decode to wrong values.
  if (const auto rc = ZSTD_CCtx_setParameter(context_.get(), ZSTD_c_checksumFlag, 1); ZSTD_isError(rc))
    throw Error(Errc::internal, std::string("zstd refused a content checksum: ") + ZSTD_getErrorName(rc));
}

void ValueEncoder::encode(std::span<const float> values, Encoding encoding, EncodedValues& out) {
  if (values.size() > kMaxViewSamples)
    throw Error(Errc::out_of_range, "a view of " + grouped(values.size()) + " samples is more than the " +
                                        grouped(kMaxViewSamples) + " a view may have");
  const auto range = finite_range(values);
  out.encoding = encoding;
  out.lo = range.lo;
  out.hi = range.hi;
  out.error_bound = error_bound_of(encoding, range.lo, range.hi);
  out.raw_bytes = values.size() * value_bytes(encoding);
  scratch_.resize(out.raw_bytes);
  switch (encoding) {
    case Encoding::u8: quantise<std::uint8_t>(values, range, no_value_code(encoding), scratch_.data()); break;
    case Encoding::u16: quantise<std::uint16_t>(values, range, no_value_code(encoding), scratch_.data()); break;
    case Encoding::f32: split_float_planes(values.data(), values.size(), scratch_.data()); break;
  }
  compress(scratch_, out.payload);
}

void ValueEncoder::compress(std::span<const std::byte> raw, std::string& out) {
  out.resize(ZSTD_compressBound(raw.size()));
  const auto n = ZSTD_compress2(context_.get(), out.data(), out.size(), raw.data(), raw.size());
  if (ZSTD_isError(n))
    throw Error(Errc::internal, "compressing " + grouped(raw.size()) + " bytes failed: " + zstd_error(n));
  out.resize(n);
}

// ---- ValueDecoder ----

ValueDecoder::ValueDecoder() : context_(ZSTD_createDCtx()) {
  if (!context_) throw Error(Errc::internal, "zstd could not create a decompression context (out of memory?)");
}

namespace {
/// Checks, before anything is allocated, that `payload` is exactly one zstd frame stating
/// `raw_bytes` as its size.
void check_frame(std::string_view payload, std::uint64_t raw_bytes, std::string_view what) {
  const std::string w(what);
  if (payload.empty()) throw Error(Errc::bad_message, w + " is empty; it must be one zstd frame");
  if (payload.size() > kMaxPayloadBytes)
    throw Error(Errc::bad_message, w + " of " + grouped(payload.size()) + " bytes is larger than the " +
                                       grouped(kMaxPayloadBytes) + "-byte limit");
  const auto frame_bytes = ZSTD_findFrameCompressedSize(payload.data(), payload.size());
  if (ZSTD_isError(frame_bytes))
    throw Error(Errc::bad_message, w + " of " + grouped(payload.size()) + " bytes is not a whole zstd frame (" +
                                       zstd_error(frame_bytes) + ")");
  if (frame_bytes != payload.size())
    throw Error(Errc::bad_message, w + " holds " + grouped(payload.size() - frame_bytes) +
                                       " bytes after its zstd frame; it must be exactly one frame");
  // Frame header (RFC 8878): a 4-byte magic number, then the descriptor whose bit 2 says a
  // content checksum ends the frame. Without one a flipped bit in a block decodes to wrong values.
  // (A whole frame is at least 6 bytes.)
  const auto byte = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(payload[i])); };
  if ((byte(0) | byte(1) << 8 | byte(2) << 16 | byte(3) << 24) != ZSTD_MAGICNUMBER)
    throw Error(Errc::bad_message, w + " is not a zstd frame (a skippable frame or other data)");
  if ((byte(4) & 0x04) == 0)
    throw Error(Errc::bad_message, w + "'s zstd frame has no content checksum; it must (cuview's encoder writes one)");
  // The frame must state its size (cuview's always do), so that a few hostile bytes cannot make
  // the decoder allocate what the header claims before the frame is seen to disagree.
  const auto content = ZSTD_getFrameContentSize(payload.data(), payload.size());
  if (content == ZSTD_CONTENTSIZE_ERROR) throw Error(Errc::bad_message, w + " is not a zstd frame");
  if (content == ZSTD_CONTENTSIZE_UNKNOWN)
    throw Error(Errc::bad_message, w + "'s zstd frame does not state its size; it must (cuview's encoder always does)");
  if (content != raw_bytes)
    throw Error(Errc::bad_message, w + " decompresses to " + grouped(content) + " bytes, the header says " +
                                       grouped(raw_bytes));
}
}  // namespace

void ValueDecoder::decompress_into(std::string_view payload, std::span<std::byte> destination,
                                   std::string_view what) {
  const auto n = ZSTD_decompressDCtx(context_.get(), destination.data(), destination.size(), payload.data(),
                                     payload.size());
  if (ZSTD_isError(n)) throw Error(Errc::bad_message, std::string(what) + " is corrupt: " + zstd_error(n));
  if (n != destination.size())
    throw Error(Errc::bad_message, std::string(what) + " decompresses to " + grouped(n) + " bytes, its frame says " +
                                       grouped(destination.size()));
}

void ValueDecoder::decode(Encoding encoding, float lo, float hi, std::uint64_t count, std::uint64_t raw_bytes,
                          std::string_view payload, std::vector<float>& out) {
  if (count > kMaxViewSamples)
    throw Error(Errc::bad_message, "view header claims " + grouped(count) + " samples, more than the " +
                                       grouped(kMaxViewSamples) + " a view may have");
  if (encoding != Encoding::u8 && encoding != Encoding::u16 && encoding != Encoding::f32)
    throw Error(Errc::bad_message, "view header names encoding number " +
                                       std::to_string(static_cast<unsigned>(encoding)) + "; encodings: u8, u16, f32");
  const std::uint64_t expected = count * value_bytes(encoding);
  if (raw_bytes != expected)
    throw Error(Errc::bad_message, "view header says raw_bytes " + grouped(raw_bytes) + ", but " + grouped(count) +
                                       " samples in " + std::string(name_of(encoding)) + " are " + grouped(expected) +
                                       " bytes");
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi)
    throw Error(Errc::bad_message, "view header's range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                       "] is not a finite range with lo <= hi");
  check_frame(payload, raw_bytes, "view payload");
  out.resize(count);
  scratch_.resize(raw_bytes);
  decompress_into(payload, scratch_, "view payload");
  if (encoding == Encoding::f32)
    join_float_planes(scratch_.data(), count, out.data());
  else if (encoding == Encoding::u8)
    dequantise<std::uint8_t>(scratch_.data(), count, lo, hi, no_value_code(encoding), out.data());
  else
    dequantise<std::uint16_t>(scratch_.data(), count, lo, hi, no_value_code(encoding), out.data());
}

void ValueDecoder::decompress(std::string_view payload, std::uint64_t raw_bytes, std::uint64_t limit,
                              std::vector<std::byte>& out) {
  if (raw_bytes > limit)
    throw Error(Errc::bad_message, "header claims " + grouped(raw_bytes) + " raw bytes, more than the " +
                                       grouped(limit) + " allowed");
  check_frame(payload, raw_bytes, "payload");
  out.resize(raw_bytes);
  decompress_into(payload, out, "payload");
}

}  // namespace cuview::remote
