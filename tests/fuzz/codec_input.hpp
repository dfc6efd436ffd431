// How the remote fuzzer reads its bytes as a call of the value decoder, and how the seed writer
// makes such bytes from a real encoding: one place for the layout, so that seeds stay valid.
//   byte 0       encoding: its value mod 4 (3 is no encoding: the decoder must refuse it)
//   bytes 1–4    count, little-endian
//   bytes 5–8    raw_bytes, little-endian
//   bytes 9–16   lo, hi: binary32, little-endian
//   the rest     the payload
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "cuview/remote_protocol.hpp"

namespace cuview::fuzz {

struct CodecInput {
  remote::Encoding encoding = remote::Encoding::u8;
  std::uint32_t count = 0, raw_bytes = 0;
  float lo = 0, hi = 0;
  std::string_view payload;

  static constexpr std::size_t kHeaderBytes = 17;

  /// nullopt when `bytes` are too short to hold the fixed fields.
  static std::optional<CodecInput> read(std::string_view bytes) {
    if (bytes.size() < kHeaderBytes) return std::nullopt;
    CodecInput in;
    in.encoding = static_cast<remote::Encoding>(static_cast<std::uint8_t>(bytes[0]) % 4);
    std::memcpy(&in.count, bytes.data() + 1, 4);
    std::memcpy(&in.raw_bytes, bytes.data() + 5, 4);
    std::memcpy(&in.lo, bytes.data() + 9, 4);
    std::memcpy(&in.hi, bytes.data() + 13, 4);
    in.payload = bytes.substr(kHeaderBytes);
    return in;
  }

  [[nodiscard]] std::string bytes() const {
    std::string out(kHeaderBytes, '\0');
    out[0] = static_cast<char>(encoding);
    std::memcpy(out.data() + 1, &count, 4);
    std::memcpy(out.data() + 5, &raw_bytes, 4);
    std::memcpy(out.data() + 9, &lo, 4);
    std::memcpy(out.data() + 13, &hi, 4);
    return out + std::string(payload);
  }
};

}  // namespace cuview::fuzz
