// The Fortran module's one way to declare an array (compute/publisher/fortran/cuview.f90,
// cuview_add_field): Fortran 2018 passes an assumed-type, assumed-rank argument (`type(*),
// dimension(..)`) to a bind(C) function as a CFI descriptor (ISO_Fortran_binding.h), which says
// the array's type, rank, extents and byte strides. So any real(4|8) or integer(4|8) array of 1-3
// dimensions, or a section of one (the interior of an array with ghost cells), is declared by one
// procedure reading one table below, not by a procedure per type and rank. The descriptor's layout
// is the Fortran compiler's: this file is built only where the library's own Fortran module is.
#include <ISO_Fortran_binding.h>

#include <cstdint>
#include <string>
#include <vector>

#include "c_api/publisher_handle.hpp"

using cuview::Errc;
using cuview::Error;

namespace {

/// The Fortran types cuview_add_field takes, and their dtype: the one table.
struct FortranType {
  CFI_type_t type;
  cuview::DType dtype;
  const char* fortran;
};
constexpr FortranType kTypes[] = {
    {CFI_type_float, cuview::DType::float32, "real(4)"},
    {CFI_type_double, cuview::DType::float64, "real(8)"},
    {CFI_type_int32_t, cuview::DType::int32, "integer(4)"},
    {CFI_type_int64_t, cuview::DType::int64, "integer(8)"},
};

std::string fortran_name(const CFI_cdesc_t& a) {
  const int kind = a.type >> CFI_type_kind_shift;
  switch (a.type & CFI_type_mask) {
    case CFI_type_Integer: return "integer(" + std::to_string(kind) + ")";
    case CFI_type_Real: return "real(" + std::to_string(kind) + ")";
    case CFI_type_Complex: return "complex(" + std::to_string(kind) + ")";
    case CFI_type_Logical: return "logical(" + std::to_string(kind) + ")";
    case CFI_type_Character: return "character";
    default: return "derived-type";
  }
}

/// A grid's dims (slowest first) as Fortran writes the shape: (nx, ny, nz).
std::string fortran_shape(const std::vector<std::uint32_t>& dims) {
  std::string s;
  for (std::size_t k = dims.size(); k-- > 0;) s += (s.empty() ? "(" : ", ") + std::to_string(dims[k]);
  return s + ")";
}

std::string taken() {
  std::string s;
  for (const auto& t : kTypes) s += std::string(s.empty() ? "" : ", ") + t.fortran;
  return s;
}

}  // namespace

extern "C" {

/// cuview_add_field: field `name` of the array `a` describes, on grid `grid` ("": the grid its
/// shape gives, or the publisher's one grid), `components` values per cell in its first extent.
/// Exported with the C API's other calls (CUVIEW_PUBLISHER_1) but declared in no C header: only
/// the Fortran module, built by the same compiler, passes a descriptor.
CUVIEW_API cuview_status cuview_publisher_add_field_fortran(cuview_publisher* pub, const char* grid, const char* name,
                                                            const CFI_cdesc_t* a, uint32_t components,
                                                            cuview_memory memory, const char* help) {
  if (pub == nullptr || grid == nullptr || name == nullptr || a == nullptr)
    return cuview::capi::null_argument("cuview_add_field");
  return cuview::capi::guarded([&] {
    const std::string what = "field '" + std::string(name) + "' of '" + pub->pub.name() + "'";
    const FortranType* type = nullptr;
    for (const auto& t : kTypes)
      if (t.type == a->type) type = &t;
    if (type == nullptr)
      throw Error(Errc::bad_value, what + ": a " + fortran_name(*a) + " array is not one cuview publishes; give " +
                                       taken() + " (or cuview_add_field_ptr with dtype 'float16' or 'uint8')");
    const std::size_t first = components > 1 ? 1 : 0;  // a cell's values: the first (fastest) extent
    const std::size_t axes = a->rank > static_cast<CFI_rank_t>(first) ? a->rank - first : 0;
    if (axes < 1 || axes > 3)
      throw Error(Errc::bad_value, what + ": the array has " + std::to_string(a->rank) + " dimensions; give 1 to 3" +
                                       (first != 0 ? ", after the components' extent (c(n, nx, ny, nz))" : ""));
    if (first != 0 && (a->dim[0].extent != static_cast<CFI_index_t>(components) ||
                       a->dim[0].sm != static_cast<CFI_index_t>(a->elem_len)))
      throw Error(Errc::bad_value, what + ": components=" + std::to_string(components) +
                                       " needs an array whose first extent is " + std::to_string(components) +
                                       ", of unit stride (a cell's values, then the grid: c(n, nx, ny)), but it is " +
                                       std::to_string(a->dim[0].extent) + " of stride " +
                                       std::to_string(a->dim[0].sm / static_cast<CFI_index_t>(a->elem_len)));
    const std::size_t cell = std::size_t{components} * a->elem_len;
    cuview::FieldDecl f;
    f.name = name;
    f.grid = grid;
    f.dtype = type->dtype;
    f.components = components;
    f.data = a->base_addr;
    f.memory = memory == CUVIEW_MEMORY_DEVICE ? cuview::Memory::device : cuview::Memory::host;
    f.help = help != nullptr ? help : "";
    // Fortran's first axis runs fastest: reversed, slowest first, as the publisher counts them.
    std::uint64_t cells = 1;
    std::int64_t expected = static_cast<std::int64_t>(cell);
    bool contiguous = true;
    for (std::size_t k = a->rank; k-- > first;) {
      const auto& d = a->dim[k];
      if (d.extent < 1 || d.extent > 0xffffffff)
        throw Error(Errc::out_of_range, what + ": the array's extent " + std::to_string(k + 1) + " is " +
                                            std::to_string(d.extent) + "; give 1 to 4294967295 cells");
      f.dims.push_back(static_cast<std::uint32_t>(d.extent));
      f.strides.push_back(d.sm);
      cells *= static_cast<std::uint64_t>(d.extent);
    }
    for (std::size_t k = f.dims.size(); k-- > 0;) {
      contiguous = contiguous && (f.dims[k] == 1 || f.strides[k] == expected);
      expected *= f.dims[k];
    }
    if (contiguous) f.strides.clear();
    f.bytes = contiguous ? static_cast<std::size_t>(cells) * cell : 0;  // a section's span is checked by its strides
    if (const auto* g = pub->pub.grid(f.grid); g != nullptr && g->dims != f.dims)  // an unknown grid: add_field says
      throw Error(Errc::bad_value, what + ": the array is " + fortran_shape(f.dims) + " but grid '" + f.grid + "' is " +
                                       fortran_shape(g->dims) + " (Fortran's shape, fastest axis first); pass the "
                                       "section of the array that lies on the grid, T(1:nx, 1:ny, 1:nz)");
    pub->pub.add_field(f);
    // The C API's record of its fields (as cuview_publisher_add_field_on keeps it), for publish_data.
    pub->field_bytes.push_back(static_cast<std::size_t>(cells) * cell);
    pub->field_names.push_back(f.name);
    pub->field_sections.push_back(cuview::Section::of(f.dims, f.strides, cell));
  });
}

}  // extern "C"
