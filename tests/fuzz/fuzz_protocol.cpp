// libFuzzer target over everything that decodes bytes from a peer: request and reply envelopes
// and every argument and result type. Any exception other than cuview::Error, any crash, leak or
// undefined behaviour (built with ASan and UBSan) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cuview/protocol.hpp"
#include "decode_as_each.hpp"

using namespace cuview;
using namespace cuview::proto;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    std::uint64_t id = 0;
    const auto r = decode_request(bytes, id);
    fuzz::decode_as_each<HelloArgs, StepArgs, SetArgs, NoArgs, RenderArgs>(r.args);
  } catch (const Error&) {
  }
  try {
    const auto reply = decode_reply(bytes, kMaxReplyBytes);
    fuzz::decode_as_each<HelloResult, DescribeResult, HandlesResult, Stats, RenderResult>(reply.result);
  } catch (const Error&) {
  }
  fuzz::decode_bytes_as_each<FrameNotice>(bytes);
  return 0;
}
