// Writes well-formed remote messages and encoded views as the remote fuzzer's starting corpus
// (one file each).
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "codec_input.hpp"
#include "cuview/remote/picture_codec.hpp"
#include "cuview/remote/value_codec.hpp"
#include "cuview/remote_protocol.hpp"

using namespace cuview;
using namespace cuview::remote;

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  int n = 0;
  auto put = [&](const std::string& bytes) { std::ofstream(dir + "/seed-" + std::to_string(n++)) << bytes; };
  put(encode_gateway_request(Op::hello, 1, HelloArgs{"seed"}));
  put(encode_gateway_request(Op::list, 2, proto::NoArgs{}));
  put(encode_gateway_request(Op::view, 3, ViewArgs{"sim", "u", 64, 48, 32, 24, 2, "u16", 2}));
  put(encode_gateway_request(Op::credit, 0, CreditArgs{"sim", 1, 7}));
  put(encode_gateway_request(Op::stop, 4, StopArgs{"sim"}));
  put(encode_gateway_request(Op::fetch, 5, FetchArgs{"sim", "u", 0, 0, 8, 8}));
  put(proto::encode_result(6, HelloResult{}));
  ListResult list;
  list.publishers.push_back({"sim", "grayscott", "host", "cpu", 1, {256, 256}});
  put(proto::encode_result(7, list));

  ValueEncoder encoder;
  std::vector<float> field(16 * 12);
  for (std::size_t i = 0; i < field.size(); ++i) field[i] = i % 16 < 2 ? NAN : std::sin(0.1f * i);
  for (auto encoding : {Encoding::u8, Encoding::u16, Encoding::f32}) {
    EncodedValues e;
    encoder.encode(field, encoding, e);
    ViewHeader h;
    h.field = "u", h.view_w = 16, h.view_h = 12, h.encoding = name_of(encoding);
    h.lo = e.lo, h.hi = e.hi, h.error_bound = e.error_bound, h.raw_bytes = e.raw_bytes;
    put(proto::encode(h));
    put(fuzz::CodecInput{encoding, static_cast<std::uint32_t>(field.size()), static_cast<std::uint32_t>(e.raw_bytes),
                         e.lo, e.hi, e.payload}
            .bytes());
  }
  FetchResult fetch;
  fetch.w = 4, fetch.h = 2, fetch.raw_bytes = 32;
  std::string data;
  encoder.compress(std::as_bytes(std::span(field).first(8)), data);
  fetch.data.assign(data.begin(), data.end());
  put(proto::encode(fetch));
  put(proto::encode_result(8, fetch));
  // A picture: its request, and its result with colours in WebP (and as a codec input, sized as
  // the fuzzer reads it: count % 512 + 1 by raw_bytes % 512 + 1 pixels).
  proto::RenderArgs view;
  view.field = "u", view.width = 16, view.height = 12;
  put(encode_gateway_request(Op::picture, 9, PictureArgs{"sim", view, "auto", "u16", 0}));
  std::vector<std::uint32_t> colours(16 * 12);
  for (std::size_t i = 0; i < colours.size(); ++i) colours[i] = 0xff000000u | static_cast<std::uint32_t>(i * 2654435761u >> 8);
  PictureEncoder pictures;
  std::string webp;
  pictures.encode(PictureCodec::webp, colours, 16, 12, webp);
  PictureResult picture;
  picture.pending = false, picture.width = 16, picture.height = 12, picture.codec = "webp";
  picture.argb.assign(webp.begin(), webp.end());
  put(proto::encode_result(10, picture));
  put(fuzz::CodecInput{Encoding::u8, 15, 11, 0, 0, webp}.bytes());
  put(proto::encode(Beat{"s", 123}));
  put(proto::encode(Gone{"s", "exited"}));
  return 0;
}
