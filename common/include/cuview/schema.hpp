// What a publisher declares about the data it publishes, shared by simulations (plugins and
// built-ins) and programs that embed the publisher: value types, steerable parameters, presets,
// and where one block of a frame is written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace cuview {

/// The type of one value of a field. Wire names: "float32", "float16", "int32", "uint8".
enum class DType : std::uint8_t { float32, float16, int32, uint8 };

[[nodiscard]] constexpr const char* to_string(DType t) noexcept {
  switch (t) {
    case DType::float32:
      return "float32";
    case DType::float16:
      return "float16";
    case DType::int32:
      return "int32";
    case DType::uint8:
      return "uint8";
  }
  return "?";
}

/// The DType named `name` (to_string's spelling), or nothing.
[[nodiscard]] inline std::optional<DType> parse_dtype(std::string_view name) noexcept {
  for (DType t : {DType::float32, DType::float16, DType::int32, DType::uint8})
    if (name == to_string(t)) return t;
  return std::nullopt;
}

[[nodiscard]] constexpr std::size_t size_of(DType t) noexcept {
  switch (t) {
    case DType::float32:
    case DType::int32:
      return 4;
    case DType::float16:
      return 2;
    case DType::uint8:
      return 1;
  }
  return 0;
}

/// One steerable parameter. `value` is its default; every change is checked against [min, max]
/// (and to be a whole number when `integer`) before the program sees it.
struct ParamSpec {
  std::string name;
  double value = 0, min = 0, max = 0;
  bool integer = false;
  std::string help;
};

/// A named set of parameter values (a subset of the parameters).
struct Preset {
  std::string name;
  std::map<std::string, double> values;
};

/// Something a client may draw into while the program runs. Kind "mask": one 0/1 value per grid
/// cell (obstacles in a flow), edited by strokes.
struct InputSpec {
  std::string name;
  std::string kind = "mask";
  std::string help;
};

/// One validated edit of an input: the cells of a disc of `radius` cells centred at (x, y) (grid
/// coordinates, x right, y down) set to `value` (1 draws, 0 erases).
struct Stroke {
  std::string input;
  double x = 0, y = 0, radius = 1;
  int value = 1;
};

/// Where a program's buffer lives, as it declares it to the publisher.
enum class Memory : std::uint8_t { host, device };

/// Where one field's (or particle attribute's) values go in a ring slot: host memory on the host
/// backend, device memory on CUDA. `bytes` = cells (or particles) × components × size_of(dtype).
struct FieldTarget {
  void* data = nullptr;
  std::size_t bytes = 0;
};

}  // namespace cuview
