// The publisher's C API (cuview/publisher.h) on cuview::Publisher: a handle owns the Publisher and
// what the last poll returned; each call turns what C++ throws into a status and the thread's
// last error, shared with the client's C API (c_api/status.hpp, which libcuview.so exports).
#include "c_api/publisher_handle.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "cuview/publisher.h"
#include "executor/executor.hpp"

using namespace cuview::capi;
using cuview::Errc;
using cuview::Error;

namespace {

std::string text_or(const char* s, const char* fallback) { return s != nullptr && *s != '\0' ? s : fallback; }

/// "KEY=VALUE KEY=\"A B\"" as pairs, in order.
std::vector<std::pair<std::string, std::string>> option_pairs(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    if (i >= text.size()) break;
    const std::size_t eq = text.find('=', i);
    const std::size_t space = text.find(' ', i);
    if (eq == std::string::npos || (space != std::string::npos && space < eq))
      throw Error(Errc::bad_value, "cuview_publisher_create: option '" + text.substr(i, space - i) +
                                       "' is not KEY=VALUE; write options as \"max_cost=0.01 fps=30\"");
    std::string key = text.substr(i, eq - i), value;
    i = eq + 1;
    if (i < text.size() && text[i] == '"') {
      const std::size_t close = text.find('"', i + 1);
      if (close == std::string::npos)
        throw Error(Errc::bad_value, "cuview_publisher_create: option '" + key + "' opens a quote it never closes");
      value = text.substr(i + 1, close - i - 1);
      i = close + 1;
    } else {
      const std::size_t end = text.find(' ', i);
      value = text.substr(i, end == std::string::npos ? std::string::npos : end - i);
      i = end == std::string::npos ? text.size() : end;
    }
    out.emplace_back(std::move(key), std::move(value));
  }
  return out;
}

/// `text` as a number, or nothing when it is not one (whole, no trailing characters).
std::optional<double> parsed(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0) return std::nullopt;
  return v;
}

// `create`: the call whose option it is, in the caller's language (ApiWords::create).
double number(const std::string& create, const std::string& key, const std::string& value) {
  const auto v = parsed(value);
  if (!v) throw Error(Errc::bad_value, create + ": option " + key + "='" + value + "' is not a number");
  return *v;
}

std::uint32_t whole(const std::string& create, const std::string& key, const std::string& value) {
  const double v = number(create, key, value);
  if (v < 0 || v > 4294967295.0 || v != static_cast<double>(static_cast<std::uint32_t>(v)))
    throw Error(Errc::out_of_range, create + ": option " + key + "=" + value +
                                        " is not a whole number from 0 to 4294967295");
  return static_cast<std::uint32_t>(v);
}

std::vector<std::uint32_t> axes(const std::string& create, const std::string& key, const std::string& value) {
  std::vector<std::uint32_t> out;
  std::stringstream in(value);
  for (std::string item; std::getline(in, item, ',');) out.push_back(whole(create, key, item));
  if (out.empty() || out.size() > 3)
    throw Error(Errc::bad_value, create + ": option " + key + "=" + value +
                                     " needs 1 to 3 comma-separated numbers, slowest axis first (" + key + "=64,64,64)");
  return out;
}

/// How errors name the calls that fix them, for each language that calls this API (api=): C's
/// own, and those of the layers over it, so that a Fortran or Python program reads its own calls
/// and arguments (cuview::ApiWords).
cuview::ApiWords words_of(const std::string& api) {
  if (api == "c")
    return {.create = "cuview_publisher_create",
            .rename = "pass cuview_publisher_create() another name",
            .declare_a_field = "declare at least one with cuview_publisher_add_field() before cuview_publisher_start()",
            .declare_before_start = "declare every field, parameter, preset and input before cuview_publisher_start()",
            .declare_preset = "declare it with cuview_publisher_add_preset() first",
            .give_data = "pass cuview_publisher_add_field() its array, or publish with cuview_publisher_publish_data()",
            .host_memory = "CUVIEW_MEMORY_HOST",
            .device_memory = "CUVIEW_MEMORY_DEVICE",
            .choose_device = "pass cuview_publisher_create() the GPU the arrays are on as its device",
            .check_part = "check the global and offset given to cuview_publisher_mpi_create() (or the global= and "
                          "offset= options) against the declared fields"};
  if (api == "fortran")
    return {.create = "cuview_create",
            .rename = "pass cuview_create another name",
            .declare_a_field = "declare at least one with cuview_add_field before cuview_start",
            .declare_before_start = "call cuview_add_field, cuview_add_param, cuview_add_preset and cuview_add_input "
                                    "before cuview_start",
            .declare_preset = "declare it with cuview_add_preset first",
            .give_data = "give cuview_add_field the array (or cuview_add_field_ptr its address, not c_null_ptr)",
            .host_memory = "memory=cuview_memory_host",
            .device_memory = "memory=cuview_memory_device",
            .choose_device = "pass cuview_create the GPU the arrays are on as device=",
            .check_part = "check the global_shape and offset given to cuview_mpi_create (fastest axis first, as "
                          "Fortran's shape) against the declared arrays"};
  if (api == "python")
    return {.create = "cuview.Publisher",
            .rename = "give cuview.Publisher another name",
            .declare_a_field = "give cuview.Publisher at least one array in fields={...}",
            .declare_before_start = "give every field, parameter, preset and input to cuview.Publisher(...)",
            .declare_preset = "give it in cuview.Publisher(presets={...}) too, or pass preset= one of those",
            .give_data = "pass its array to pub.publish(step, time, arrays)",
            .host_memory = "a NumPy array",
            .device_memory = "a CuPy, PyTorch or JAX array",
            .choose_device = "pass cuview.Publisher(device=...) the GPU the arrays are on",
            .check_part = "check the part's global and offset against the declared fields"};
  throw Error(Errc::bad_value, "cuview_publisher_create: option api=" + api +
                                   " is not a language this API speaks; use c, fortran or python");
}

}  // namespace

namespace {
/// A parsed options string as the typed options (cuview_publisher_options), with the storage their
/// pointers point into.
struct ParsedOptions {
  cuview_publisher_options typed{};
  std::string title, log, api, group, host;
  std::vector<std::uint64_t> offset, global;
};

ParsedOptions parse_options(const char* options, const std::string& create) {
  ParsedOptions out;
  cuview_publisher_options_init(&out.typed);
  auto& t = out.typed;
  bool part = false;
  for (const auto& [key, value] : option_pairs(options != nullptr ? options : "")) {
    if (key == "api") {
      out.api = value, t.api = out.api.c_str();
    } else if (key == "log") {
      out.log = value, t.log = out.log.c_str();
    } else if (key == "title") {
      out.title = value, t.title = out.title.c_str();
    } else if (key == "slots") {
      t.slots = static_cast<std::uint32_t>(whole(create, key, value));
    } else if (key == "fps") {
      t.fps = number(create, key, value);
    } else if (key == "max_cost") {
      t.max_cost = number(create, key, value);
    } else if (key == "paused") {
      t.paused = whole(create, key, value) != 0 ? 1 : 0;
    } else if (key == "part" || key == "offset" || key == "global" || key == "group" || key == "rank" ||
               key == "host") {
      part = true;
      if (key == "part") {
        const auto slash = value.find('/');
        if (slash == std::string::npos)
          throw Error(Errc::bad_value, create + ": option part=" + value + " is not K/N (part=0/4)");
        t.part_index = static_cast<std::uint32_t>(whole(create, key, value.substr(0, slash)));
        t.part_count = static_cast<std::uint32_t>(whole(create, key, value.substr(slash + 1)));
      } else if (key == "offset") {
        for (const auto a : axes(create, key, value)) out.offset.push_back(a);
      } else if (key == "global") {
        for (const auto a : axes(create, key, value)) out.global.push_back(a);
      } else if (key == "group") {
        out.group = value, t.part_group = out.group.c_str();
      } else if (key == "rank") {
        t.part_rank = static_cast<int>(whole(create, key, value));
      } else {
        out.host = value, t.part_host = out.host.c_str();
      }
    } else {
      throw Error(Errc::bad_value, create + ": '" + key +
                                       "' is not an option; they are title, slots, fps, max_cost, paused, log, part, "
                                       "offset, global, group, rank and host (cuview/publisher.h)");
    }
  }
  if (part) {
    if (out.offset.size() != out.global.size() || out.global.empty())
      throw Error(Errc::bad_value, create + ": a part needs both offset= and global= with as many axes "
                                   "as its fields (offset=0,0,32 global=64,64,64)");
    if (t.part_count == 0) t.part_count = 1;  // part= left out: part 0 of 1
    t.part_ndim = static_cast<std::uint32_t>(out.global.size());
    t.part_offset = out.offset.data();
    t.part_global = out.global.data();
  }
  return out;
}

/// Whether a program's options struct of `size` bytes has the member ending at `end`.
constexpr bool has(const cuview_publisher_options& o, std::size_t end) { return o.size >= end; }
#define CUVIEW_HAS(o, member) has(o, offsetof(cuview_publisher_options, member) + sizeof((o).member))
}  // namespace

cuview::PublisherOptions cuview::capi::options_from(const char* name, const char* backend, int device,
                                                    const char* sharing, const cuview_publisher_options& in) {
  cuview_publisher_options t;
  cuview_publisher_options_init(&t);  // members a program built against an older header lacks: defaults
  std::memcpy(&t, &in, std::min(sizeof t, static_cast<std::size_t>(in.size)));
  t.size = sizeof t;
  cuview::PublisherOptions o;
  o.name = name;
  o.backend = text_or(backend, "auto");
  o.sharing = text_or(sharing, "auto");
  o.device = device;
  o.words = words_of(text_or(t.api, "c"));
  o.title = text_or(t.title, "embedded");
  o.log = text_or(t.log, "");
  o.slots = t.slots;
  o.max_fps = t.fps;
  o.max_cost = t.max_cost;
  o.start_paused = t.paused != 0;
  if (t.part_count > 0) {
    auto& p = o.part.emplace();
    p.index = t.part_index, p.count = t.part_count;
    if (t.part_ndim > 0 && (t.part_offset == nullptr || t.part_global == nullptr))
      throw Error(Errc::bad_value, o.words.create + ": a part of " + std::to_string(t.part_ndim) +
                                       " axes needs part_offset and part_global (" + std::to_string(t.part_ndim) +
                                       " values each, slowest axis first)");
    for (std::uint32_t k = 0; k < t.part_ndim; ++k) {
      for (const auto v : {t.part_offset[k], t.part_global[k]})
        if (v > 0xffffffffu)
          throw Error(Errc::out_of_range, o.words.create + ": a part's offset or global size of " + std::to_string(v) +
                                              " cells along axis " + std::to_string(k) + " is out of range");
      p.offset.push_back(static_cast<std::uint32_t>(t.part_offset[k]));
      p.global_dims.push_back(static_cast<std::uint32_t>(t.part_global[k]));
    }
    p.group = text_or(t.part_group, "");
    p.rank = t.part_rank;
    p.host = text_or(t.part_host, "");
  }
  return o;
}

cuview::PublisherOptions cuview::capi::options_of(const char* name, const char* backend, int device,
                                                  const char* sharing, const char* options) {
  // The string is a thin layer over the typed options: parsed into them, then read as they are.
  std::string api = "c";
  for (const auto& [key, value] : option_pairs(options != nullptr ? options : ""))
    if (key == "api") api = value;
  const auto parsed = parse_options(options, words_of(api).create);
  return options_from(name, backend, device, sharing, parsed.typed);
}

namespace {

std::map<std::string, double> values_of(const char* text, const std::string& what) {
  std::map<std::string, double> out;
  for (const auto& [key, value] : option_pairs(text != nullptr ? text : "")) {
    const auto v = parsed(value);
    if (!v) throw Error(Errc::bad_value, what + ": " + key + "='" + value + "' is not a number (write \"F=0.03 k=0.06\")");
    out[key] = *v;
  }
  return out;
}

}  // namespace

cuview_publisher::cuview_publisher(cuview::PublisherOptions options) : pub(std::move(options)) {}

void cuview_publisher::take(cuview::Requests r) {
  requests = std::move(r);
  changed.assign(requests.params.begin(), requests.params.end());
  if (!requests.params.empty()) params = requests.params;
}

void cuview_publisher::report() { pub.report_checkpoint(checkpoint); }

void cuview_publisher::check_started(const char* call) const {
  if (!started)
    throw Error(Errc::bad_value, std::string(call) + " of '" + pub.name() +
                                     "' before cuview_publisher_start; declare the fields and parameters, then "
                                     "call cuview_publisher_start once");
}

namespace {
/// Declares preset `name` of `count` parameters: the typed call, and the string form parsed into it.
void declare_preset(cuview_publisher& p, const char* name, size_t count, const char* const* params,
                    const double* values) {
  auto* pub = &p;
    const std::string what = "preset '" + std::string(name) + "' of '" + pub->pub.name() + "'";
    std::map<std::string, double> set;
    for (size_t i = 0; i < count; ++i) {
      if (params[i] == nullptr)
        throw Error(Errc::bad_value, what + ": parameter " + std::to_string(i) + "'s name is NULL");
      if (pub->params.count(params[i]) == 0) {
        std::string known;
        for (const auto& [n, x] : pub->params) known += (known.empty() ? "" : ", ") + n;
        throw Error(Errc::unknown_field, what + " sets '" + params[i] + "', which is not a parameter" +
                                             (known.empty() ? "; declare parameters before presets"
                                                            : "; the parameters are " + known));
      }
      set[params[i]] = values[i];
    }
    pub->pub.add_preset({name, std::move(set)});
}
}  // namespace

extern "C" {

int cuview_publisher_abi(void) { return CUVIEW_PUBLISHER_ABI; }

cuview_status cuview_publisher_create(const char* name, const char* backend, int device, const char* sharing,
                                      const char* options, cuview_publisher** out) {
  if (name == nullptr || out == nullptr) return null_argument("cuview_publisher_create");
  *out = nullptr;
  return guarded([&] {
    auto p = std::make_unique<cuview_publisher>(options_of(name, backend, device, sharing, options));
    p->params = p->pub.params();
    *out = p.release();
  });
}

cuview_status cuview_publisher_add_field(cuview_publisher* pub, const char* name, const char* dtype, uint32_t ndim,
                                         const uint64_t* dims, uint32_t components, const void* data,
                                         cuview_memory memory, const char* help) {
  if (pub == nullptr || name == nullptr || dtype == nullptr || dims == nullptr)
    return null_argument("cuview_publisher_add_field");
  return guarded([&] {
    const std::string what = "field '" + std::string(name) + "' of '" + pub->pub.name() + "'";
    const auto t = cuview::parse_dtype(dtype);
    if (!t)
      throw Error(Errc::bad_value, what + ": '" + dtype + "' is not a dtype; use " + cuview::dtype_names());
    if (ndim < 1 || ndim > 3)
      throw Error(Errc::bad_value, what + " has " + std::to_string(ndim) +
                                       " axes; give 1 to 3 (slowest first: {width}, {height, width} or "
                                       "{depth, height, width})");
    if (memory != CUVIEW_MEMORY_HOST && memory != CUVIEW_MEMORY_DEVICE)
      throw Error(Errc::bad_value, what + ": memory " + std::to_string(static_cast<int>(memory)) +
                                       " is neither CUVIEW_MEMORY_HOST nor CUVIEW_MEMORY_DEVICE");
    cuview::FieldDecl f;
    f.name = name;
    f.dtype = *t;
    f.components = components;
    f.data = data;
    f.memory = memory == CUVIEW_MEMORY_DEVICE ? cuview::Memory::device : cuview::Memory::host;
    f.help = help != nullptr ? help : "";
    std::uint64_t cells = 1;
    for (uint32_t i = 0; i < ndim; ++i) {
      if (dims[i] == 0 || dims[i] > 0xffffffffu)
        throw Error(Errc::out_of_range, what + ": axis " + std::to_string(i) + " has " + std::to_string(dims[i]) +
                                            " cells; give 1 to 4294967295");
      f.dims.push_back(static_cast<std::uint32_t>(dims[i]));
      cells *= dims[i];
    }
    f.bytes = static_cast<std::size_t>(cells) * components * cuview::size_of(*t);
    pub->pub.add_field(f);
    pub->field_bytes.push_back(f.bytes);
    pub->field_names.push_back(f.name);
    pub->field_sections.emplace_back();
  });
}

cuview_status cuview_publisher_add_grid(cuview_publisher* pub, const char* name, uint32_t ndim, const uint64_t* dims,
                                        const double* origin, const double* spacing, const char* units) {
  if (pub == nullptr || name == nullptr || dims == nullptr) return null_argument("cuview_publisher_add_grid");
  return guarded([&] {
    const std::string what = "grid '" + std::string(name) + "' of '" + pub->pub.name() + "'";
    if (ndim < 1 || ndim > 3)
      throw Error(Errc::bad_value, what + " has " + std::to_string(ndim) +
                                       " axes; give 1 to 3 (slowest first: {width}, {height, width} or "
                                       "{depth, height, width})");
    cuview::GridDecl g;
    g.name = name;
    g.units = units != nullptr ? units : "";
    for (uint32_t i = 0; i < ndim; ++i) {
      if (dims[i] == 0 || dims[i] > 0xffffffffu)
        throw Error(Errc::out_of_range, what + ": axis " + std::to_string(i) + " has " + std::to_string(dims[i]) +
                                            " cells; give 1 to 4294967295");
      g.dims.push_back(static_cast<std::uint32_t>(dims[i]));
      if (origin != nullptr) g.origin.push_back(origin[i]);
      if (spacing != nullptr) g.spacing.push_back(spacing[i]);
    }
    pub->pub.add_grid(std::move(g));
  });
}

cuview_status cuview_publisher_add_field_on(cuview_publisher* pub, const char* grid, const char* name,
                                            const char* dtype, uint32_t components, const void* data,
                                            const int64_t* strides, cuview_memory memory, const char* help) {
  if (pub == nullptr || grid == nullptr || name == nullptr || dtype == nullptr)
    return null_argument("cuview_publisher_add_field_on");
  return guarded([&] {
    const std::string what = "field '" + std::string(name) + "' of '" + pub->pub.name() + "'";
    const auto t = cuview::parse_dtype(dtype);
    if (!t) throw Error(Errc::bad_value, what + ": '" + dtype + "' is not a dtype; use " + cuview::dtype_names());
    if (memory != CUVIEW_MEMORY_HOST && memory != CUVIEW_MEMORY_DEVICE)
      throw Error(Errc::bad_value, what + ": memory " + std::to_string(static_cast<int>(memory)) +
                                       " is neither CUVIEW_MEMORY_HOST nor CUVIEW_MEMORY_DEVICE");
    cuview::FieldDecl f;
    f.name = name;
    f.grid = grid;
    f.dtype = *t;
    f.components = components;
    f.data = data;
    f.memory = memory == CUVIEW_MEMORY_DEVICE ? cuview::Memory::device : cuview::Memory::host;
    f.help = help != nullptr ? help : "";
    const auto* g = pub->pub.grid(grid);  // null: add_field names what is missing
    const std::size_t axes = g != nullptr ? g->dims.size() : 0;
    std::uint64_t cells = 1;
    if (g != nullptr)
      for (const auto d : g->dims) cells *= d;
    if (strides != nullptr) f.strides.assign(strides, strides + axes);
    f.bytes = strides != nullptr ? 0 : static_cast<std::size_t>(cells) * components * cuview::size_of(*t);
    pub->pub.add_field(f);
    const std::size_t cell = std::size_t{components} * cuview::size_of(*t);
    pub->field_bytes.push_back(static_cast<std::size_t>(cells) * cell);
    pub->field_names.push_back(f.name);
    pub->field_sections.push_back(cuview::Section::of(g->dims, f.strides, cell));
  });
}

cuview_status cuview_publisher_add_param(cuview_publisher* pub, const char* name, double value, double min,
                                         double max, int integer, const char* help) {
  if (pub == nullptr || name == nullptr) return null_argument("cuview_publisher_add_param");
  return guarded([&] {
    pub->pub.add_param({name, value, min, max, integer != 0, help != nullptr ? help : ""});
    pub->params = pub->pub.params();
  });
}

void cuview_publisher_options_init(cuview_publisher_options* options) {
  if (options == nullptr) return;
  *options = cuview_publisher_options{};
  options->size = sizeof *options;
  options->slots = 3;
  options->fps = 60;
  options->max_cost = 0.01;
  options->part_rank = -1;
}

cuview_status cuview_publisher_create_with(const char* name, const char* backend, int device, const char* sharing,
                                           const cuview_publisher_options* options, cuview_publisher** out) {
  if (name == nullptr || options == nullptr || out == nullptr) return null_argument("cuview_publisher_create_with");
  *out = nullptr;
  return guarded([&] {
    if (options->size < offsetof(cuview_publisher_options, title))
      throw Error(Errc::bad_value, "cuview_publisher_create_with: options.size is " + std::to_string(options->size) +
                                       "; fill the options with cuview_publisher_options_init first");
    auto p = std::make_unique<cuview_publisher>(options_from(name, backend, device, sharing, *options));
    p->params = p->pub.params();
    *out = p.release();
  });
}

cuview_status cuview_publisher_add_preset_values(cuview_publisher* pub, const char* name, size_t count,
                                                 const char* const* params, const double* values) {
  if (pub == nullptr || name == nullptr || (count > 0 && (params == nullptr || values == nullptr)))
    return null_argument("cuview_publisher_add_preset_values");
  return guarded([&] {
    declare_preset(*pub, name, count, params, values);
  });
}

cuview_status cuview_publisher_add_preset(cuview_publisher* pub, const char* name, const char* values) {
  if (pub == nullptr || name == nullptr || values == nullptr) return null_argument("cuview_publisher_add_preset");
  return guarded([&] {
    // The string is a thin layer over the typed call: parsed into names and values.
    const auto v = values_of(values, "preset '" + std::string(name) + "' of '" + pub->pub.name() + "'");
    std::vector<const char*> params;
    std::vector<double> numbers;
    for (const auto& [param, value] : v) params.push_back(param.c_str()), numbers.push_back(value);
    declare_preset(*pub, name, params.size(), params.data(), numbers.data());
  });
}

cuview_status cuview_publisher_add_input(cuview_publisher* pub, const char* name, const char* kind, const char* help) {
  if (pub == nullptr || name == nullptr) return null_argument("cuview_publisher_add_input");
  return guarded([&] { pub->pub.add_input({name, text_or(kind, "mask"), help != nullptr ? help : ""}); });
}

cuview_status cuview_publisher_use_preset(cuview_publisher* pub, const char* name) {
  if (pub == nullptr || name == nullptr) return null_argument("cuview_publisher_use_preset");
  return guarded([&] {
    pub->pub.use_preset(name);
    pub->params = pub->pub.params();
  });
}

cuview_status cuview_publisher_start(cuview_publisher* pub) {
  if (pub == nullptr) return null_argument("cuview_publisher_start");
  return guarded([&] {
    pub->pub.start();
    pub->started = true;
    pub->params = pub->pub.params();  // the first preset's values, or use_preset's
  });
}

cuview_status cuview_publisher_publish(cuview_publisher* pub, uint64_t step, double time, void* stream,
                                       int* published) {
  if (pub == nullptr) return null_argument("cuview_publisher_publish");
  return guarded([&] {
    pub->check_started("cuview_publisher_publish");
    const bool p = pub->pub.publish(step, time, cuview::cuda::StreamRef(static_cast<CUstream_st*>(stream)));
    if (published != nullptr) *published = p ? 1 : 0;
  });
}

cuview_status cuview_publisher_publish_data(cuview_publisher* pub, uint64_t step, double time, size_t count,
                                            const void* const* data, void* stream, int* published) {
  if (pub == nullptr || data == nullptr) return null_argument("cuview_publisher_publish_data");
  return guarded([&] {
    pub->check_started("cuview_publisher_publish_data");
    check_arrays(*pub, count, data);
    const auto s = cuview::cuda::StreamRef(static_cast<CUstream_st*>(stream));
    const bool p = pub->pub.publish(step, time, copier(*pub, data, s), s);
    if (published != nullptr) *published = p ? 1 : 0;
  });
}

int cuview_publisher_frame_due(cuview_publisher* pub) {
  if (pub == nullptr || !pub->started) return 0;
  try {
    return pub->pub.frame_wanted() && pub->pub.within_budget() ? 1 : 0;
  } catch (...) {
    return 1;  // let publish say what is wrong
  }
}

cuview_status cuview_publisher_record_step(cuview_publisher* pub, uint64_t step, double time) {
  if (pub == nullptr) return null_argument("cuview_publisher_record_step");
  return guarded([&] { pub->pub.record_step(step, time); });
}

cuview_status cuview_publisher_poll(cuview_publisher* pub) {
  if (pub == nullptr) return null_argument("cuview_publisher_poll");
  return guarded([&] { pub->take(pub->pub.poll()); });
}

size_t cuview_publisher_changed_count(const cuview_publisher* pub) { return pub != nullptr ? pub->changed.size() : 0; }

cuview_status cuview_publisher_changed(const cuview_publisher* pub, size_t i, const char** name, double* value) {
  if (pub == nullptr || name == nullptr || value == nullptr) return null_argument("cuview_publisher_changed");
  return guarded([&] {
    if (i >= pub->changed.size())
      throw Error(Errc::out_of_range, "cuview_publisher_changed: change " + std::to_string(i) + " of '" +
                                          pub->pub.name() + "' does not exist; the last poll returned " +
                                          std::to_string(pub->changed.size()) + " (cuview_publisher_changed_count)");
    *name = pub->changed[i].first.c_str();
    *value = pub->changed[i].second;
  });
}

cuview_status cuview_publisher_param(const cuview_publisher* pub, const char* name, double* value) {
  if (pub == nullptr || name == nullptr || value == nullptr) return null_argument("cuview_publisher_param");
  return guarded([&] {
    const auto it = pub->params.find(name);
    if (it == pub->params.end()) {
      std::string known;
      for (const auto& [n, v] : pub->params) known += (known.empty() ? "" : ", ") + n;
      throw Error(Errc::unknown_field, "'" + pub->pub.name() + "' has no parameter '" + name + "'" +
                                           (known.empty() ? "; declare it with cuview_publisher_add_param"
                                                          : "; it has " + known));
    }
    *value = it->second;
  });
}

int cuview_publisher_reset_requested(const cuview_publisher* pub) { return pub != nullptr && pub->requests.reset; }
int cuview_publisher_shutdown_requested(const cuview_publisher* pub) {
  return pub != nullptr && pub->requests.shutdown;
}

size_t cuview_publisher_stroke_count(const cuview_publisher* pub) {
  return pub != nullptr ? pub->requests.strokes.size() : 0;
}

cuview_status cuview_publisher_stroke(const cuview_publisher* pub, size_t i, const char** input, double* x, double* y,
                                      double* z, double* radius, int* value) {
  if (pub == nullptr || input == nullptr || x == nullptr || y == nullptr || z == nullptr || radius == nullptr ||
      value == nullptr)
    return null_argument("cuview_publisher_stroke");
  return guarded([&] {
    if (i >= pub->requests.strokes.size())
      throw Error(Errc::out_of_range, "cuview_publisher_stroke: stroke " + std::to_string(i) + " of '" +
                                          pub->pub.name() + "' does not exist; the last poll returned " +
                                          std::to_string(pub->requests.strokes.size()));
    const auto& s = pub->requests.strokes[i];
    *input = s.input.c_str();
    *x = s.x;
    *y = s.y;
    *z = s.z.value_or(-1);
    *radius = s.radius;
    *value = s.value;
  });
}

uint64_t cuview_publisher_steps_allowed(cuview_publisher* pub, uint64_t wanted) {
  if (pub == nullptr) return 0;
  try {
    return pub->pub.steps_allowed(wanted);
  } catch (...) {
    return 0;
  }
}

int cuview_publisher_paused(const cuview_publisher* pub) { return pub != nullptr && pub->pub.paused(); }

cuview_status cuview_publisher_wait(cuview_publisher* pub, int timeout_ms) {
  if (pub == nullptr) return null_argument("cuview_publisher_wait");
  return guarded([&] { pub->pub.wait_for_requests(std::chrono::milliseconds(std::max(timeout_ms, 0))); });
}

cuview_status cuview_publisher_checkpoint_enable(cuview_publisher* pub, const char* dir, double every_s) {
  if (pub == nullptr) return null_argument("cuview_publisher_checkpoint_enable");
  return guarded([&] {
    pub->checkpoint.enabled = true;
    pub->checkpoint.dir = dir != nullptr ? dir : "";
    pub->checkpoint.every_s = every_s;
    pub->report();
  });
}

size_t cuview_publisher_checkpoint_count(const cuview_publisher* pub) {
  return pub != nullptr ? pub->requests.checkpoints.size() : 0;
}

cuview_status cuview_publisher_checkpoint_request(const cuview_publisher* pub, size_t i, uint64_t* ticket,
                                                  const char** path) {
  if (pub == nullptr || ticket == nullptr || path == nullptr) return null_argument("cuview_publisher_checkpoint_request");
  return guarded([&] {
    if (i >= pub->requests.checkpoints.size())
      throw Error(Errc::out_of_range, "cuview_publisher_checkpoint_request: request " + std::to_string(i) + " of '" +
                                          pub->pub.name() + "' does not exist; the last poll returned " +
                                          std::to_string(pub->requests.checkpoints.size()));
    *ticket = pub->requests.checkpoints[i].first;
    *path = pub->requests.checkpoints[i].second.c_str();
  });
}

cuview_status cuview_publisher_checkpoint_written(cuview_publisher* pub, uint64_t ticket, const char* path,
                                                  uint64_t step, double time, uint64_t bytes) {
  if (pub == nullptr || path == nullptr) return null_argument("cuview_publisher_checkpoint_written");
  return guarded([&] {
    auto& c = pub->checkpoint;
    ++c.written;
    c.answered = std::max(c.answered, ticket);
    c.path = path;
    c.step = step;
    c.sim_time = time;
    c.bytes = bytes;
    c.unix_time = static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count()) /
                  1000.0;
    pub->report();
  });
}

cuview_status cuview_publisher_checkpoint_failed(cuview_publisher* pub, uint64_t ticket, const char* error) {
  if (pub == nullptr || error == nullptr) return null_argument("cuview_publisher_checkpoint_failed");
  return guarded([&] {
    auto& c = pub->checkpoint;
    c.answered = std::max(c.answered, ticket);
    c.error = error;
    c.error_ticket = ticket;
    pub->report();
  });
}

const char* cuview_publisher_backend(const cuview_publisher* pub) {
  if (pub == nullptr) return "";
  pub->backend = pub->pub.backend();
  return pub->backend.c_str();
}

const char* cuview_publisher_device(const cuview_publisher* pub) {
  if (pub == nullptr) return "";
  pub->device = pub->pub.device();
  return pub->device.c_str();
}

void cuview_publisher_close(cuview_publisher* pub, const char* reason) {
  if (pub == nullptr) return;
  pub->pub.close(text_or(reason, "shutdown"));
  delete pub;
}

}  // extern "C"

namespace cuview::capi {

void check_arrays(const cuview_publisher& pub, std::size_t count, const void* const* data) {
  const std::string who = "cuview_publisher_publish_data of '" + pub.pub.name() + "'";
  if (count != pub.field_bytes.size())
    throw Error(Errc::bad_value, who + ": " + std::to_string(count) + " arrays for " +
                                     std::to_string(pub.field_bytes.size()) +
                                     " fields; pass one per declared field, in declaration order");
  for (std::size_t i = 0; i < count; ++i)
    if (data[i] == nullptr)
      throw Error(Errc::bad_value, who + ", field '" + pub.field_names[i] + "': the array is NULL");
}

void check_devices(const cuview_publisher& pub, std::size_t count, const void* const* data) {
  auto& executor = pub.pub.executor();
  if (executor.kind() == Executor::Kind::host) return;  // host memory is all a host process reads
  for (std::size_t i = 0; i < count; ++i) {
    const std::string what = "cuview_publisher_publish_data of '" + pub.pub.name() + "', field '" +
                             pub.field_names[i] + "'";
    const BufferLocation at = executor.locate(data[i]);
    if (!at.host_accessible && at.device >= 0 && at.device != executor.device_id())
      throw Error(Errc::bad_value, what + ": the array is on GPU " + std::to_string(at.device) +
                                       " but the publisher runs on GPU " + std::to_string(executor.device_id()) +
                                       "; create it with that device");
  }
}

cuview::FieldWriter copier(const cuview_publisher& pub, const void* const* data, cuview::cuda::StreamRef stream) {
  return [&pub, data, stream](const std::vector<FieldTarget>& targets) {
    check_devices(pub, pub.field_names.size(), data);  // only when a frame is written: a pointer query each
    auto& executor = pub.pub.executor();
    for (std::size_t i = 0; i < targets.size() && i < pub.field_names.size(); ++i)
      if (!targets[i].read) continue;
      else if (const auto& sec = pub.field_sections[i])
        executor.copy_section(targets[i].data, data[i], *sec, stream);
      else
        executor.copy(targets[i].data, data[i], targets[i].bytes, stream);
  };
}

}  // namespace cuview::capi
