#include "cuview/remote/picture_codec.hpp"

#include <webp/decode.h>
#include <webp/encode.h>

#include <cstring>
#include <memory>

#include "cuview/error.hpp"

namespace cuview::remote {

std::string_view name_of(PictureCodec codec) noexcept { return codec == PictureCodec::webp ? "webp" : "zstd"; }

std::string picture_codec_names() { return "webp, zstd"; }

PictureCodec picture_codec_named(std::string_view name) {
  if (name == "webp") return PictureCodec::webp;
  if (name == "zstd") return PictureCodec::zstd;
  throw Error(Errc::bad_value, "no picture codec '" + std::string(name) + "'; there are " + picture_codec_names());
}

namespace {

std::string size_text(std::uint32_t w, std::uint32_t h) { return std::to_string(w) + "x" + std::to_string(h); }

void encode_webp(std::span<const std::uint32_t> argb, std::uint32_t w, std::uint32_t h, std::string& out) {
  WebPConfig config;
  if (!WebPConfigInit(&config)) throw Error(Errc::internal, "libwebp: WebPConfigInit failed (a library of another version?)");
  config.lossless = 1;
  config.exact = 1;     // keep the colours under alpha 0: the picture is lossless, not only as seen
  config.method = 0;    // the fastest: measured (docs/benchmarks.md) against the sizes of slower efforts
  config.quality = 10;  // for lossless: the effort
  if (!WebPValidateConfig(&config)) throw Error(Errc::internal, "libwebp refused cuview's lossless configuration");
  WebPPicture picture;
  if (!WebPPictureInit(&picture)) throw Error(Errc::internal, "libwebp: WebPPictureInit failed");
  picture.use_argb = 1;
  picture.width = static_cast<int>(w);
  picture.height = static_cast<int>(h);
  WebPMemoryWriter writer;
  WebPMemoryWriterInit(&writer);
  const auto release = [&] {
    WebPPictureFree(&picture);
    WebPMemoryWriterClear(&writer);
  };
  // B, G, R, A in memory: what 0xAARRGGBB little-endian is.
  if (!WebPPictureImportBGRA(&picture, reinterpret_cast<const std::uint8_t*>(argb.data()), static_cast<int>(w) * 4)) {
    release();
    throw Error(Errc::internal, "libwebp could not take a " + size_text(w, h) + " picture (out of memory?)");
  }
  picture.writer = WebPMemoryWrite;
  picture.custom_ptr = &writer;
  if (!WebPEncode(&config, &picture)) {
    const int code = picture.error_code;
    release();
    throw Error(Errc::internal, "libwebp failed to encode a " + size_text(w, h) + " picture (VP8 error " +
                                    std::to_string(code) + ")");
  }
  out.assign(reinterpret_cast<const char*>(writer.mem), writer.size);
  release();
}

}  // namespace

void PictureEncoder::encode(PictureCodec codec, std::span<const std::uint32_t> argb, std::uint32_t width,
                            std::uint32_t height, std::string& out) {
  const std::uint64_t pixels = std::uint64_t{width} * height;
  if (width == 0 || height == 0 || pixels > kMaxViewSamples || argb.size() != pixels)
    throw Error(Errc::out_of_range, "a picture of " + size_text(width, height) + " pixels with " +
                                        std::to_string(argb.size()) + " colours: it needs width × height colours, 1 to " +
                                        std::to_string(kMaxViewSamples));
  if (codec == PictureCodec::webp) return encode_webp(argb, width, height, out);
  planes_.resize(pixels * 4);
  const auto* bytes = reinterpret_cast<const std::byte*>(argb.data());
  for (std::size_t i = 0; i < pixels; ++i)
    for (std::size_t k = 0; k < 4; ++k) planes_[k * pixels + i] = bytes[i * 4 + k];
  zstd_.compress(planes_, out);
}

void PictureDecoder::decode(PictureCodec codec, std::string_view payload, std::uint32_t width, std::uint32_t height,
                            std::vector<char>& out) {
  const std::uint64_t pixels = std::uint64_t{width} * height;
  if (width == 0 || height == 0 || pixels > kMaxViewSamples)
    throw Error(Errc::bad_message, "a picture of " + size_text(width, height) + " pixels: a picture has 1 to " +
                                       std::to_string(kMaxViewSamples));
  out.resize(pixels * 4);
  if (codec == PictureCodec::webp) {
    int w = 0, h = 0;
    const auto* data = reinterpret_cast<const std::uint8_t*>(payload.data());
    if (!WebPGetInfo(data, payload.size(), &w, &h))
      throw Error(Errc::bad_message, "a picture's colours (" + std::to_string(payload.size()) +
                                         " bytes) are not a WebP image: the gateway is at fault, please report it");
    if (static_cast<std::uint32_t>(w) != width || static_cast<std::uint32_t>(h) != height)
      throw Error(Errc::bad_message, "a picture said to be " + size_text(width, height) + " holds a WebP image of " +
                                         size_text(static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(h)));
    if (WebPDecodeBGRAInto(data, payload.size(), reinterpret_cast<std::uint8_t*>(out.data()), out.size(),
                           static_cast<int>(width) * 4) == nullptr)
      throw Error(Errc::bad_message, "a picture's WebP image of " + size_text(width, height) + " does not decode");
    return;
  }
  zstd_.decompress(payload, pixels * 4, pixels * 4, planes_);
  auto* bytes = reinterpret_cast<std::byte*>(out.data());
  for (std::size_t i = 0; i < pixels; ++i)
    for (std::size_t k = 0; k < 4; ++k) bytes[i * 4 + k] = planes_[k * pixels + i];
}

}  // namespace cuview::remote
