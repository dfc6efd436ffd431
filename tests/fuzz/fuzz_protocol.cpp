// libFuzzer target over everything that decodes bytes from a peer: request and reply envelopes
// and every argument and result type. Any exception other than cuview::Error, any crash, leak or
// undefined behaviour (built with ASan and UBSan) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cuview/protocol.hpp"

using namespace cuview;
using namespace cuview::proto;

template <class T>
static void decode_quietly(const msgpack::object& o) {
  try {
    (void)decode_as<T>(o, "fuzzed");
  } catch (const Error&) {
  }
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    std::uint64_t id = 0;
    const auto r = decode_request(bytes, id);
    decode_quietly<HelloArgs>(r.args);
    decode_quietly<StepArgs>(r.args);
    decode_quietly<SetArgs>(r.args);
    decode_quietly<NoArgs>(r.args);
  } catch (const Error&) {
  }
  try {
    const auto reply = decode_reply(bytes);
    decode_quietly<HelloResult>(reply.result);
    decode_quietly<DescribeResult>(reply.result);
    decode_quietly<HandlesResult>(reply.result);
    decode_quietly<Stats>(reply.result);
  } catch (const Error&) {
  }
  try {
    (void)decode_bytes<FrameNotice>(bytes, "frame notice");
  } catch (const Error&) {
  }
  return 0;
}
