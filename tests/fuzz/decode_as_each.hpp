// What every fuzz target does with a decoded envelope's contents: decode them as each type they
// could be, where only cuview::Error may escape (anything else reaches libFuzzer as a finding).
#pragma once

#include <string_view>

#include "cuview/protocol.hpp"

namespace cuview::fuzz {

template <class... T>
void decode_as_each(const msgpack::object& o) {
  const auto one = [&]<class U>() {
    try {
      (void)proto::decode_as<U>(o, "fuzzed");
    } catch (const Error&) {
    }
  };
  (one.template operator()<T>(), ...);
}

template <class... T>
void decode_bytes_as_each(std::string_view bytes, std::size_t max_bin = proto::kMaxRequestBytes) {
  const auto one = [&]<class U>() {
    try {
      (void)proto::decode_bytes<U>(bytes, "fuzzed", max_bin);
    } catch (const Error&) {
    }
  };
  (one.template operator()<T>(), ...);
}

}  // namespace cuview::fuzz
