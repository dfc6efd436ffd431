// Writes well-formed messages as the fuzzer's starting corpus (one file each).
#include <fstream>
#include <string>

#include "cuview/protocol.hpp"

using namespace cuview::proto;

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  int n = 0;
  auto put = [&](const std::string& bytes) { std::ofstream(dir + "/seed-" + std::to_string(n++)) << bytes; };
  put(encode_request("hello", 1, "", HelloArgs{"seed", 42}));
  put(encode_request("step", 2, "0123456789abcdef", StepArgs{5}));
  put(encode_request("set", 3, "0123456789abcdef", SetArgs{std::map<std::string, double>{{"F", 0.03}}, "maze"}));
  put(encode_request("stats", 4, "0123456789abcdef", NoArgs{}));
  DescribeResult d;
  d.fields.push_back({"u", "float32", 1, {4, 4}, {16, 4}, 0, 64, "h"});
  d.params.push_back({"F", 0.05, 0, 0.1, false, "h"});
  put(encode_result(5, d));
  HandlesResult h;
  h.slots.push_back({std::vector<char>(64, 1), std::vector<char>(64, 2), 0});
  put(encode_result(6, h));
  put(encode_result(7, Stats{}));
  put(encode_error(8, cuview::Errc::stale_session, "old"));
  put(encode(FrameNotice{"s", 1, 0, 16, 16.0, 1}));
  RenderArgs v;
  v.field = "u", v.width = 4, v.height = 2, v.mode = "emission";
  v.lut.assign(256, 0xff00ff00u), v.opacity.assign(256, 0.1f);
  put(encode_request("render", 9, "0123456789abcdef", v));
  RenderResult pic;
  pic.pending = false, pic.width = 4, pic.height = 2, pic.argb.assign(32, 'a'), pic.values.assign(32, 'v');
  put(encode_result(10, pic));
  return 0;
}
