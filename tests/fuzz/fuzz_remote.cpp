// libFuzzer target over everything a remote client or the gateway decodes from the other side:
// gateway request envelopes and every remote argument type, pushed headers (view, beat, gone),
// results (list, fetch, picture), the value decoder's and the picture decoder's payloads (codec_input.hpp says how the bytes are
// read as a decode call). Any exception other than cuview::Error, any crash, leak or undefined
// behaviour (built with ASan and UBSan) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "codec_input.hpp"
#include "cuview/remote/picture_codec.hpp"
#include "cuview/remote/value_codec.hpp"
#include "cuview/remote_protocol.hpp"
#include "decode_as_each.hpp"

using namespace cuview;
using namespace cuview::remote;

namespace {
// Kept between inputs, as a viewer keeps them between views: state left by a refused payload
// must not harm the next.
ValueDecoder& decoder() {
  static ValueDecoder d;
  return d;
}
PictureDecoder& picture_decoder() {
  static PictureDecoder d;
  return d;
}

// A fetched region may be up to kMaxFetchValues × 4 bytes; the fuzzer's limit is smaller so that
// an input claiming the largest region costs milliseconds, not a second. The checks are the same.
constexpr std::uint64_t kFuzzFetchLimit = 16ull << 20;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    std::uint64_t id = 0;
    const auto r = decode_gateway_request(bytes, id);
    fuzz::decode_as_each<HelloArgs, ViewArgs, CreditArgs, StopArgs, FetchArgs, PictureArgs>(r.args);
  } catch (const Error&) {
  }
  try {
    const auto reply = proto::decode_reply(bytes);
    fuzz::decode_as_each<HelloResult, ListResult, FetchResult, PictureResult>(reply.result);
  } catch (const Error&) {
  }
  fuzz::decode_bytes_as_each<ViewHeader, Beat, Gone, ListResult>(bytes);
  fuzz::decode_bytes_as_each<FetchResult, PictureResult>(bytes, kMaxPayloadBytes);

  if (const auto in = fuzz::CodecInput::read(bytes)) {
    std::vector<float> values;
    try {
      decoder().decode(in->encoding, in->lo, in->hi, in->count, in->raw_bytes, in->payload, values);
    } catch (const Error&) {
    }
    std::vector<std::byte> raw;
    try {
      decoder().decompress(in->payload, in->raw_bytes, kFuzzFetchLimit, raw);
    } catch (const Error&) {
    }
    // The payload as a picture's colours: WebP or zstd planes, of a size the count makes up.
    std::vector<char> argb;
    try {
      const auto codec = in->encoding == Encoding::f32 ? PictureCodec::zstd : PictureCodec::webp;
      picture_decoder().decode(codec, in->payload, in->count % 512 + 1, in->raw_bytes % 512 + 1, argb);
    } catch (const Error&) {
    }
  }
  return 0;
}
