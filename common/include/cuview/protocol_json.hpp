// A protocol value as JSON, for `cuview-ctl ... --json`, the C API's *_json calls and, through
// them, Python: one serialisation, the wire's own (every field the MessagePack encoding has, by
// the same names; an absent optional is null), so that no front-end can drop a field.
#pragma once

#include <nlohmann/json.hpp>

#include "cuview/protocol.hpp"

namespace cuview::proto {

template <class T>
nlohmann::json to_json(const T& value) {
  return nlohmann::json::from_msgpack(encode(value));
}

}  // namespace cuview::proto
