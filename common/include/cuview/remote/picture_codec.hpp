// A picture cast by a run (protocol 10, `render`) as it travels through a gateway (the gateway's
// `picture` op, docs/remote.md "Pictures"): its colours compressed losslessly, its values (what
// each pixel shows) as a view's values are (value_codec.hpp: u8, u16 or f32).
//
// The colours, width × height pixels of 0xAARRGGBB (little-endian: B, G, R, A in memory), are
//   webp  one lossless WebP image (libwebp, RIFF container, alpha kept, RGB kept under alpha 0:
//         `exact`), decoded to the same bytes;
//   zstd  four byte planes (every pixel's B, then G, R, A) in one zstd frame that states its
//         content size and ends with a checksum.
// Chosen by measurement (docs/benchmarks.md "Pictures through a gateway"): WebP is the default.
// Decoding is strict: anything but exactly width × height pixels is refused (bad_message).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cuview/remote/value_codec.hpp"

namespace cuview::remote {

enum class PictureCodec : std::uint8_t { webp, zstd };
std::string_view name_of(PictureCodec codec) noexcept;
/// Throws Error(bad_value) naming the codecs there are.
PictureCodec picture_codec_named(std::string_view name);
/// "webp, zstd".
std::string picture_codec_names();

/// One thread at a time; keeps its buffers between pictures.
class PictureEncoder {
 public:
  /// The colours of a width × height picture into `out` (reused). Throws Error(out_of_range) for a
  /// picture of more than kMaxViewSamples pixels or one whose size is not width × height pixels,
  /// Error(internal) when the codec fails.
  void encode(PictureCodec codec, std::span<const std::uint32_t> argb, std::uint32_t width, std::uint32_t height,
              std::string& out);

 private:
  ValueEncoder zstd_{1};
  std::vector<std::byte> planes_;
};

/// Strict and bounded, as ValueDecoder. One thread at a time.
class PictureDecoder {
 public:
  /// Decodes `payload` into width × height pixels (`out`: 4 bytes each, reused). Throws
  /// Error(bad_message) naming what was wrong: not one image of the codec, another size.
  void decode(PictureCodec codec, std::string_view payload, std::uint32_t width, std::uint32_t height,
              std::vector<char>& out);

 private:
  ValueDecoder zstd_;
  std::vector<std::byte> planes_;
};

}  // namespace cuview::remote
