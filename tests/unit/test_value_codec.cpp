// The values of remote views (cuview/remote/value_codec.hpp) and the colours of pictures
// (picture_codec.hpp): what a remote viewer decodes is within the header's error bound of what the
// gateway sampled (pictures: exactly), "no value" stays "no value", and every corrupt or lying
// payload is refused with a message naming what was wrong.
#include <zstd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cuview/error.hpp"
#include "cuview/remote/picture_codec.hpp"
#include "cuview/remote/value_codec.hpp"

using namespace cuview;
using namespace cuview::remote;

namespace {
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int kWidth = 320, kHeight = 180;

/// Smooth like a Gray–Scott field (a few soft spots on a background), NaN in the columns left of
/// the grid, as a view panned past the grid's edge has.
std::vector<float> smooth_field(float offset = 0) {
  std::vector<float> v(static_cast<std::size_t>(kWidth) * kHeight);
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x) {
      const double spot = std::exp(-((x - 200.0) * (x - 200.0) + (y - 90.0) * (y - 90.0)) / 400.0);
      const double waves = 0.1 * std::sin(x * 0.05) * std::cos(y * 0.07);
      v[static_cast<std::size_t>(y) * kWidth + x] = x < 24 ? kNaN : offset + static_cast<float>(0.25 + 0.4 * spot + waves);
    }
  return v;
}

/// Uniform noise over several orders of magnitude, with a NaN now and then.
std::vector<float> noise() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-1000.f, 1000.f);
  std::vector<float> v(static_cast<std::size_t>(kWidth) * kHeight);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = i % 97 == 0 ? kNaN : value(rng) * (i % 3 == 0 ? 1e-3f : 1.f);
  return v;
}

std::vector<float> round_trip(const std::vector<float>& values, Encoding encoding, EncodedValues& encoded) {
  ValueEncoder encoder;
  ValueDecoder decoder;
  encoder.encode(values, encoding, encoded);
  std::vector<float> decoded;
  decoder.decode(encoding, encoded.lo, encoded.hi, values.size(), encoded.raw_bytes, encoded.payload, decoded);
  return decoded;
}

/// Where `decoded` is not within `bound` of `truth` (NaN must stay NaN), in words; empty if nowhere.
std::string outside_bound(const std::vector<float>& truth, const std::vector<float>& decoded, double bound) {
  if (truth.size() != decoded.size())
    return std::to_string(decoded.size()) + " values decoded, " + std::to_string(truth.size()) + " encoded";
  for (std::size_t i = 0; i < truth.size(); ++i) {
    const std::string where = "value " + std::to_string(i);
    if (std::isnan(truth[i]) != std::isnan(decoded[i]))
      return where + " is " + std::to_string(truth[i]) + " but decodes as " + std::to_string(decoded[i]);
    if (!std::isnan(truth[i]) && std::abs(static_cast<double>(decoded[i]) - truth[i]) > bound)
      return where + " is " + std::to_string(truth[i]) + " but decodes as " + std::to_string(decoded[i]) +
             ", more than the error bound " + std::to_string(bound) + " away";
  }
  return {};
}

/// The code and message of what `decode` throws; Errc::internal and "" if it does not throw.
struct Refusal {
  Errc code = Errc::internal;
  std::string message;
};
Refusal refusal_of(Encoding encoding, float lo, float hi, std::uint64_t count, std::uint64_t raw_bytes,
                   std::string_view payload) {
  ValueDecoder decoder;
  std::vector<float> out;
  try {
    decoder.decode(encoding, lo, hi, count, raw_bytes, payload, out);
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  return {};
}
void check_refused(const Refusal& r, std::string_view naming) {
  CHECK(r.code == Errc::bad_message);
  CHECK_THAT(r.message, Catch::Contains(std::string(naming)));
}

EncodedValues encode_once(const std::vector<float>& values, Encoding encoding) {
  EncodedValues e;
  ValueEncoder().encode(values, encoding, e);
  return e;
}

Refusal refusal_of(const EncodedValues& e, std::uint64_t count, std::string_view payload) {
  return refusal_of(e.encoding, e.lo, e.hi, count, e.raw_bytes, payload);
}

/// A frame as cuview's encoder writes it (content size and checksum) of `bytes` bytes.
std::string frame_of(std::size_t bytes) {
  const std::vector<std::byte> raw(bytes, std::byte{'x'});
  std::string frame;
  ValueEncoder().compress(raw, frame);
  return frame;
}

/// A frame as plain ZSTD_compress writes it: content size, no checksum.
std::string foreign_frame_of(std::size_t bytes) {
  const std::vector<char> raw(bytes, 'x');
  std::string frame(ZSTD_compressBound(bytes), '\0');
  frame.resize(ZSTD_compress(frame.data(), frame.size(), raw.data(), raw.size(), 1));
  return frame;
}

struct Range {
  float lo = 0, hi = 0;
};
Range finite_range_of(const std::vector<float>& values) {
  Range r{kInf, -kInf};
  for (float v : values)
    if (std::isfinite(v)) r.lo = std::min(r.lo, v), r.hi = std::max(r.hi, v);
  return r;
}
}  // namespace

TEST_CASE("a smooth field decodes within the error bound at every encoding, outside-the-grid samples as no value",
          "[remote][codec]") {
  const auto field = smooth_field();
  for (auto encoding : {Encoding::u8, Encoding::u16, Encoding::f32}) {
    INFO(name_of(encoding));
    EncodedValues encoded;
    const auto decoded = round_trip(field, encoding, encoded);
    CHECK(encoded.encoding == encoding);
    CHECK(encoded.raw_bytes == field.size() * value_bytes(encoding));
    CHECK(encoded.lo == finite_range_of(field).lo);
    CHECK(encoded.hi == finite_range_of(field).hi);
    CHECK(outside_bound(field, decoded, encoded.error_bound) == "");
    if (encoding == Encoding::f32) CHECK(encoded.error_bound == 0);
    if (encoding == Encoding::u8) CHECK(encoded.payload.size() < encoded.raw_bytes / 2);  // it compresses
  }
}

TEST_CASE("u8 and u16 are held to half a step of the frame's range", "[remote][codec]") {
  const auto field = smooth_field();
  EncodedValues u8, u16;
  round_trip(field, Encoding::u8, u8);
  round_trip(field, Encoding::u16, u16);
  const double range = static_cast<double>(u8.hi) - u8.lo;
  CHECK(u8.error_bound == Approx(range / 254 / 2).epsilon(0.01));
  CHECK(u16.error_bound == Approx(range / 65534 / 2).epsilon(0.05));
}

TEST_CASE("a field far from zero keeps its bound: the float rounding of decoded values is in it", "[remote][codec]") {
  const auto field = smooth_field(1000.f);
  EncodedValues encoded;
  const auto decoded = round_trip(field, Encoding::u16, encoded);
  CHECK(outside_bound(field, decoded, encoded.error_bound) == "");
}

TEST_CASE("noise decodes within the error bound at every encoding", "[remote][codec]") {
  const auto field = noise();
  for (auto encoding : {Encoding::u8, Encoding::u16, Encoding::f32}) {
    INFO(name_of(encoding));
    EncodedValues encoded;
    const auto decoded = round_trip(field, encoding, encoded);
    CHECK(outside_bound(field, decoded, encoded.error_bound) == "");
  }
}

TEST_CASE("a float64 field's values, rounded to float32 for the link, decode within the bound stated for them",
          "[remote][codec][dtype]") {
  // Doubles over several orders of magnitude, none of which a float holds, and a large int64.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> value(-1000.0, 1000.0);
  std::vector<double> truth(static_cast<std::size_t>(kWidth) * kHeight);
  for (std::size_t i = 0; i < truth.size(); ++i) truth[i] = value(rng) * (i % 3 == 0 ? 1e-3 : 1.0) + 1e-9;
  truth[7] = static_cast<double>((std::int64_t{1} << 40) + 12345);  // an int64 beyond float's 24 bits
  std::vector<float> rounded(truth.size());
  for (std::size_t i = 0; i < truth.size(); ++i) rounded[i] = static_cast<float>(truth[i]);
  for (auto encoding : {Encoding::u8, Encoding::u16, Encoding::f32}) {
    INFO(name_of(encoding));
    EncodedValues encoded;
    const auto decoded = round_trip(rounded, encoding, encoded);
    const double bound = error_bound_of_rounded(encoding, encoded.lo, encoded.hi);
    CHECK(bound > encoded.error_bound);  // f32 too: its values are the rounded ones
    double worst = 0;
    for (std::size_t i = 0; i < truth.size(); ++i) worst = std::max(worst, std::abs(decoded[i] - truth[i]));
    CHECK(worst <= bound);
  }
}

TEST_CASE("f32 is lossless: every value comes back bit for bit, infinities included", "[remote][codec]") {
  auto field = noise();
  field[1] = kInf, field[2] = -kInf, field[3] = -0.f, field[4] = std::numeric_limits<float>::denorm_min();
  EncodedValues encoded;
  const auto decoded = round_trip(field, Encoding::f32, encoded);
  REQUIRE(decoded.size() == field.size());
  CHECK(std::memcmp(decoded.data(), field.data(), field.size() * sizeof(float)) == 0);
}

/// Checks that `field` decodes exactly (NaN as NaN) at every encoding, with range (lo, lo) and
/// error bound 0.
void check_exact_at_every_encoding(const std::vector<float>& field, float lo) {
  for (auto encoding : {Encoding::u8, Encoding::u16, Encoding::f32}) {
    INFO(name_of(encoding));
    EncodedValues encoded;
    const auto decoded = round_trip(field, encoding, encoded);
    CHECK(encoded.lo == lo);
    CHECK(encoded.hi == lo);
    CHECK(encoded.error_bound == 0);
    CHECK(outside_bound(field, decoded, 0) == "");
  }
}

TEST_CASE("a constant field decodes exactly, with error bound 0", "[remote][codec]") {
  std::vector<float> field(1000, 0.375f);
  field[10] = kNaN;
  check_exact_at_every_encoding(field, 0.375f);
}

TEST_CASE("a view wholly outside the grid decodes as no value everywhere, range (0, 0)", "[remote][codec]") {
  check_exact_at_every_encoding(std::vector<float>(640, kNaN), 0);
}

TEST_CASE("an empty view round-trips", "[remote][codec]") {
  EncodedValues encoded;
  CHECK(round_trip({}, Encoding::u16, encoded).empty());
  CHECK(encoded.raw_bytes == 0);
}

TEST_CASE("infinities do not stretch the range: +inf decodes as hi, -inf as lo, in u8 and u16", "[remote][codec]") {
  const std::vector<float> field{0.5f, kInf, 1.5f, -kInf, kNaN, 1.0f};
  for (auto encoding : {Encoding::u8, Encoding::u16}) {
    INFO(name_of(encoding));
    EncodedValues encoded;
    const auto decoded = round_trip(field, encoding, encoded);
    CHECK(encoded.lo == 0.5f);
    CHECK(encoded.hi == 1.5f);
    CHECK(decoded[1] == 1.5f);
    CHECK(decoded[3] == 0.5f);
    CHECK(std::isnan(decoded[4]));
    CHECK(decoded[5] == Approx(1.0).margin(encoded.error_bound));
  }
}

TEST_CASE("a view of only infinities has range (0, 0) and no NaN where there were values", "[remote][codec]") {
  const std::vector<float> field{kInf, -kInf, kNaN};
  EncodedValues encoded;
  const auto decoded = round_trip(field, Encoding::u8, encoded);
  CHECK(encoded.lo == 0);
  CHECK(encoded.hi == 0);
  CHECK(decoded[0] == 0);
  CHECK(decoded[1] == 0);
  CHECK(std::isnan(decoded[2]));
}

TEST_CASE("a view of more samples than the protocol allows is refused by the encoder", "[remote][codec]") {
  std::vector<float> field(kMaxViewSamples + 1, 0.f);
  ValueEncoder encoder;
  EncodedValues encoded;
  CHECK_THROWS_WITH(encoder.encode(field, Encoding::u8, encoded), Catch::Contains("16 777 216 a view may have"));
}

TEST_CASE("a payload with any byte flipped is refused as bad_message, or decodes to the very same values",
          "[remote][codec][bad-input]") {
  const auto field = smooth_field();
  const auto encoded = encode_once(field, Encoding::u16);
  std::vector<float> intact;
  ValueDecoder().decode(Encoding::u16, encoded.lo, encoded.hi, field.size(), encoded.raw_bytes, encoded.payload, intact);
  std::size_t refused = 0;
  // The descriptor's bit 4 (byte 4) is "unused" in RFC 8878 and ignored by decoders: flip the others.
  // An entropy-coded stream has a few don't-care padding bits; a flip there changes no value, and
  // no viewer could tell. Any flip that would change a value must be refused.
  for (std::size_t i = 0; i < encoded.payload.size(); ++i) {
    auto corrupt = encoded.payload;
    corrupt[i] = static_cast<char>(corrupt[i] ^ (i == 4 ? 0xef : 0xff));
    ValueDecoder decoder;
    std::vector<float> out;
    try {
      decoder.decode(Encoding::u16, encoded.lo, encoded.hi, field.size(), encoded.raw_bytes, corrupt, out);
    } catch (const Error& e) {
      ++refused;
      INFO("byte " << i << " of " << encoded.payload.size() << ": " << e.what());
      CHECK(e.code() == Errc::bad_message);
      CHECK_THAT(e.what(), Catch::Contains("view payload"));
      continue;
    }
    INFO("byte " << i << " of " << encoded.payload.size() << " was flipped and accepted");
    REQUIRE(std::memcmp(out.data(), intact.data(), out.size() * sizeof(float)) == 0);
  }
  CHECK(refused > encoded.payload.size() * 99 / 100);
}

TEST_CASE("a corrupted block is caught by the frame's checksum", "[remote][codec][bad-input]") {
  const auto field = smooth_field();
  const auto encoded = encode_once(field, Encoding::f32);
  auto corrupt = encoded.payload;
  corrupt[corrupt.size() / 2] = static_cast<char>(corrupt[corrupt.size() / 2] ^ 0x01);
  const auto r = refusal_of(encoded, field.size(), corrupt);
  check_refused(r, "zstd: ");
}

TEST_CASE("a truncated payload is refused as not a whole zstd frame", "[remote][codec][bad-input]") {
  const auto field = smooth_field();
  const auto encoded = encode_once(field, Encoding::u8);
  for (std::size_t cut : {std::size_t{1}, std::size_t{5}, encoded.payload.size() / 2, encoded.payload.size() - 1}) {
    const auto r = refusal_of(encoded, field.size(), std::string_view(encoded.payload).substr(0, cut));
    INFO(cut << " bytes: " << r.message);
    check_refused(r, "not a whole zstd frame");
  }
}

TEST_CASE("an empty payload, or bytes after the frame, are refused", "[remote][codec][bad-input]") {
  const auto field = smooth_field();
  const auto encoded = encode_once(field, Encoding::u8);
  auto r = refusal_of(encoded, field.size(), "");
  check_refused(r, "view payload is empty");
  r = refusal_of(encoded, field.size(), encoded.payload + encoded.payload);
  check_refused(r, "after its zstd frame");
}

TEST_CASE("a zstd frame of another size than the header says is refused, naming both", "[remote][codec][bad-input]") {
  const auto r = refusal_of(Encoding::u16, 0, 1, 1280 * 1440, 3'686'400, frame_of(12));
  check_refused(r, "decompresses to 12 bytes, the header says 3 686 400");
}

TEST_CASE("a frame without the checksum cuview writes is refused", "[remote][codec][bad-input]") {
  const auto r = refusal_of(Encoding::u8, 0, 1, 12, 12, foreign_frame_of(12));
  check_refused(r, "no content checksum");
}

TEST_CASE("a header whose raw_bytes disagree with its sample count is refused", "[remote][codec][bad-input]") {
  const auto field = smooth_field();
  const auto encoded = encode_once(field, Encoding::u16);
  const auto r = refusal_of(Encoding::u16, encoded.lo, encoded.hi, field.size(), field.size(), encoded.payload);
  check_refused(r, "raw_bytes 57 600, but 57 600 samples in u16 are 115 200 bytes");
}

TEST_CASE("a header claiming more samples than a view may have is refused before allocating",
          "[remote][codec][bad-input]") {
  const auto r = refusal_of(Encoding::u8, 0, 1, 1'000'000'000'000ull, 1'000'000'000'000ull, frame_of(12));
  check_refused(r, "claims 1 000 000 000 000 samples, more than the 16 777 216 a view may have");
}

TEST_CASE("a header whose range is not finite, or upside down, is refused", "[remote][codec][bad-input]") {
  const auto field = smooth_field();
  const auto encoded = encode_once(field, Encoding::u8);
  for (auto [lo, hi] : {std::pair{kNaN, 1.f}, std::pair{0.f, kInf}, std::pair{1.f, 0.f}}) {
    const auto r = refusal_of(Encoding::u8, lo, hi, field.size(), encoded.raw_bytes, encoded.payload);
    check_refused(r, "not a finite range");
  }
}

TEST_CASE("a fetched region decompresses losslessly, and a claim over the caller's limit is refused",
          "[remote][codec]") {
  const auto field = noise();
  const auto raw = std::as_bytes(std::span(field));
  ValueEncoder encoder;
  ValueDecoder decoder;
  std::string payload;
  encoder.compress(raw, payload);
  std::vector<std::byte> back;
  decoder.decompress(payload, raw.size(), kMaxFetchValues * 4, back);
  REQUIRE(back.size() == raw.size());
  CHECK(std::memcmp(back.data(), raw.data(), raw.size()) == 0);
  CHECK_THROWS_WITH(decoder.decompress(payload, raw.size(), raw.size() - 1, back),
                    Catch::Contains("more than the 230 399 allowed"));
  CHECK_THROWS_WITH(decoder.decompress(payload, raw.size() + 4, kMaxFetchValues * 4, back),
                    Catch::Contains("decompresses to 230 400 bytes, the header says 230 404"));
}

TEST_CASE("a warm encoder and decoder reuse their buffers: no allocation per view", "[remote][codec]") {
  const auto first = smooth_field(), second = noise();
  ValueEncoder encoder;
  ValueDecoder decoder;
  EncodedValues encoded;
  std::vector<float> decoded;
  for (auto encoding : {Encoding::u8, Encoding::u16, Encoding::f32}) {
    INFO(name_of(encoding));
    encoder.encode(first, encoding, encoded);
    decoder.decode(encoding, encoded.lo, encoded.hi, first.size(), encoded.raw_bytes, encoded.payload, decoded);
    const auto payload_capacity = encoded.payload.capacity();
    const auto* values_at = decoded.data();
    encoder.encode(second, encoding, encoded);
    decoder.decode(encoding, encoded.lo, encoded.hi, second.size(), encoded.raw_bytes, encoded.payload, decoded);
    CHECK(encoded.payload.capacity() == payload_capacity);
    CHECK(decoded.data() == values_at);
    CHECK(outside_bound(second, decoded, encoded.error_bound) == "");
  }
}

TEST_CASE("a moved encoder and decoder keep working", "[remote][codec]") {
  const auto field = smooth_field();
  ValueEncoder first;
  ValueDecoder first_decoder;
  ValueEncoder encoder = std::move(first);
  ValueDecoder decoder = std::move(first_decoder);
  EncodedValues encoded;
  std::vector<float> decoded;
  encoder.encode(field, Encoding::u8, encoded);
  decoder.decode(Encoding::u8, encoded.lo, encoded.hi, field.size(), encoded.raw_bytes, encoded.payload, decoded);
  CHECK(outside_bound(field, decoded, encoded.error_bound) == "");
}

// ---- pictures (cuview/remote/picture_codec.hpp) ----

namespace {
/// A picture as the casters make one: a shaded disc on transparent black, colours under alpha 0
/// here and there (which must come back as they were), and a soft gradient.
std::vector<std::uint32_t> disc_picture(std::uint32_t w, std::uint32_t h) {
  std::vector<std::uint32_t> p(std::size_t{w} * h);
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x) {
      const double r = std::hypot(x - w / 2.0, y - h / 2.0) / (h / 3.0);
      const auto shade = static_cast<std::uint32_t>(std::clamp(255.0 * (1 - r * r), 0.0, 255.0));
      const std::uint32_t alpha = r < 1 ? 255 : (x * 7 + y) % 3 == 0 ? 0 : shade / 2;
      p[std::size_t{y} * w + x] = alpha << 24 | shade << 16 | ((x + y) & 0xff) << 8 | (255 - shade);
    }
  return p;
}
}  // namespace

TEST_CASE("a picture's colours come back exactly in every codec, alpha and colours under alpha 0 included",
          "[unit][remote][picture]") {
  const auto codec = GENERATE(PictureCodec::webp, PictureCodec::zstd);
  const std::uint32_t w = 257, h = 131;  // odd sizes: no codec block lines up
  const auto picture = disc_picture(w, h);
  PictureEncoder encoder;
  PictureDecoder decoder;
  std::string packed;
  encoder.encode(codec, picture, w, h, packed);
  INFO(name_of(codec) << ": " << packed.size() << " bytes for " << picture.size() * 4);
  CHECK(packed.size() < picture.size() * 4);
  std::vector<char> back;
  decoder.decode(codec, packed, w, h, back);
  REQUIRE(back.size() == picture.size() * 4);
  CHECK(std::memcmp(back.data(), picture.data(), back.size()) == 0);
  CHECK(picture_codec_named(name_of(codec)) == codec);
}

TEST_CASE("a picture that is not what it says is refused, naming what was wrong", "[unit][remote][picture]") {
  const std::uint32_t w = 64, h = 48;
  const auto picture = disc_picture(w, h);
  PictureEncoder encoder;
  PictureDecoder decoder;
  std::vector<char> back;
  std::string webp, zstd;
  encoder.encode(PictureCodec::webp, picture, w, h, webp);
  encoder.encode(PictureCodec::zstd, picture, w, h, zstd);
  using Catch::Matchers::Contains;
  // Another size than the header's.
  CHECK_THROWS_WITH(decoder.decode(PictureCodec::webp, webp, w + 1, h, back), Contains("holds a WebP image of 64x48"));
  CHECK_THROWS_AS(decoder.decode(PictureCodec::zstd, zstd, w, h + 1, back), Error);
  // Not an image of the codec at all, or one cut short.
  CHECK_THROWS_WITH(decoder.decode(PictureCodec::webp, zstd, w, h, back), Contains("not a WebP image"));
  CHECK_THROWS_AS(decoder.decode(PictureCodec::webp, webp.substr(0, webp.size() / 2), w, h, back), Error);
  CHECK_THROWS_AS(decoder.decode(PictureCodec::zstd, zstd.substr(0, zstd.size() - 3), w, h, back), Error);
  // A picture larger than any view, and an unknown codec.
  CHECK_THROWS_AS(decoder.decode(PictureCodec::webp, webp, 5000, 5000, back), Error);
  CHECK_THROWS_WITH(picture_codec_named("gif"), Contains("webp, zstd"));
  // Colours that are not width × height.
  CHECK_THROWS_AS(encoder.encode(PictureCodec::webp, std::span(picture).first(10), w, h, webp), Error);
}
