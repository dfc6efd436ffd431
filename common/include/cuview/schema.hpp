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
#include <vector>

namespace cuview {

/// The type of one value of a field. Wire names: "float32", "float16", "int32", "uint8" (protocol
/// 7), "float64", "int64" (protocol 8), "bfloat16" (protocol 9: the upper half of a float32's bits,
/// as PyTorch and DLPack's kDLBfloat hold it).
enum class DType : std::uint8_t { float32, float16, int32, uint8, float64, int64, bfloat16 };

/// What a DType is, in one table: its wire name, its size, NumPy's array-interface typestr
/// (little-endian, as every host cuview runs on; bfloat16, which NumPy has no type for, is two
/// opaque bytes), DLPack's type code (kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4; its bits are
/// 8 × size) and the protocol version that added it (a client of an earlier version cannot read
/// such a field).
struct DTypeTraits {
  DType type;
  const char* name;
  std::size_t size;
  const char* typestr;
  std::uint8_t dlpack_code;
  std::uint32_t since;
};
inline constexpr DTypeTraits kDTypes[] = {
    {DType::float32, "float32", 4, "<f4", 2, 2}, {DType::float16, "float16", 2, "<f2", 2, 2},
    {DType::int32, "int32", 4, "<i4", 0, 2},     {DType::uint8, "uint8", 1, "|u1", 1, 2},
    {DType::float64, "float64", 8, "<f8", 2, 8}, {DType::int64, "int64", 8, "<i8", 0, 8},
    {DType::bfloat16, "bfloat16", 2, "|V2", 4, 9},
};
static_assert(sizeof kDTypes / sizeof kDTypes[0] == 7, "one line per DType, in its order");

[[nodiscard]] constexpr const DTypeTraits& dtype_traits(DType t) noexcept { return kDTypes[static_cast<std::size_t>(t)]; }
[[nodiscard]] constexpr const char* to_string(DType t) noexcept { return dtype_traits(t).name; }
[[nodiscard]] constexpr std::size_t size_of(DType t) noexcept { return dtype_traits(t).size; }
/// Whether a value of `t` is a whole number (DLPack's kDLInt or kDLUInt), not a float of any kind.
[[nodiscard]] constexpr bool is_integer(DType t) noexcept { return dtype_traits(t).dlpack_code <= 1; }
/// The dtypes' names, as error messages list them: "float32, float16, …, int64 or bfloat16".
[[nodiscard]] inline std::string dtype_names() {
  std::string out;
  for (std::size_t i = 0; i < std::size(kDTypes); ++i)
    out += (i == 0 ? "" : i + 1 == std::size(kDTypes) ? " or " : ", ") + std::string(kDTypes[i].name);
  return out;
}

/// One value of type `t` at `p` (host memory, any alignment) as a double: what viewers and
/// samplers show of a cell. float16 is IEEE binary16, bfloat16 a float32's upper 16 bits (exact
/// in a double); int64 beyond 2^53 loses its low bits.
[[nodiscard]] double load_value(const void* p, DType t) noexcept;

/// The DType named `name` (to_string's spelling), or nothing.
[[nodiscard]] inline std::optional<DType> parse_dtype(std::string_view name) noexcept {
  for (const auto& t : kDTypes)
    if (name == t.name) return t.type;
  return std::nullopt;
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
  std::optional<double> z{};  ///< a volume's (3 axes): the centre's z, and the disc is a ball
};

/// Where a program's buffer lives, as it declares it to the publisher.
enum class Memory : std::uint8_t { host, device };

/// Where one field's (or particle attribute's) values go in a ring slot: host memory on the host
/// backend, device memory on CUDA. `bytes` = cells (or particles) × components × size_of(dtype).
struct FieldTarget {
  void* data = nullptr;
  std::size_t bytes = 0;
  /// Whether some reader reads this field: a writer may skip one nobody reads (the frame then
  /// does not hold it, and its bytes there are nobody's). Writing it anyway is harmless.
  bool read = true;
  /// 1: every cell. k >= 2 (only for a writer that said it can: PublisherOptions::writes_every,
  /// Simulation::writes_every): write only the cells at multiples of k along each of the grid's 3
  /// axes, packed — a grid of ceil(n/k) cells per axis, x fastest, from `data`; `bytes` is that
  /// grid's. The same k for every field of a frame; particle attributes always whole.
  std::uint32_t every = 1;
};

/// Where a field's cells lie in a program's buffer that holds more than them (the interior of an
/// array with ghost cells): `layers` layers `layer_pitch` bytes apart, each of `rows` rows
/// `row_pitch` bytes apart, each row `row_bytes` contiguous bytes (the fastest axis). Packed, they
/// make rows × layers × row_bytes bytes.
struct Section {
  std::size_t row_bytes = 0, rows = 1, layers = 1;
  std::size_t row_pitch = 0, layer_pitch = 0;
  [[nodiscard]] std::size_t bytes() const noexcept { return row_bytes * rows * layers; }

  /// The section of a grid of `dims` (1-3 axes, slowest first) with cells of `cell` bytes laid
  /// out with `strides` (bytes, slowest first, the fastest one `cell`, checked by the publisher);
  /// nothing when `strides` is empty (contiguous).
  [[nodiscard]] static std::optional<Section> of(const std::vector<std::uint32_t>& dims,
                                                 const std::vector<std::int64_t>& strides, std::size_t cell) {
    if (strides.empty() || dims.empty()) return std::nullopt;
    const std::size_t n = dims.size();
    Section s;
    s.row_bytes = std::size_t{dims[n - 1]} * cell;
    s.row_pitch = n >= 2 ? static_cast<std::size_t>(strides[n - 2]) : s.row_bytes;
    s.rows = n >= 2 ? dims[n - 2] : 1;
    s.layers = n >= 3 ? dims[0] : 1;
    s.layer_pitch = n >= 3 ? static_cast<std::size_t>(strides[0]) : s.row_pitch * s.rows;
    return s;
  }
};

}  // namespace cuview
