#include "checkpoint/checkpoint_file.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <regex>
#include <sstream>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "cuview/error.hpp"

namespace cuview::checkpoint {
namespace fs = std::filesystem;

namespace {
std::mutex& hdf5_lock() {
  static std::mutex m;
  return m;
}

/// An HDF5 identifier, closed by its own close function.
class Id {
 public:
  Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Id() {
    if (id_ >= 0) close_(id_);
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  [[nodiscard]] hid_t get() const { return id_; }
  [[nodiscard]] bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

void quiet_hdf5() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });  // errors are ours to say
}

/// The innermost message of HDF5's error stack ("truncated file: eof = ...").
std::string hdf5_error() {
  std::string msg;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* e, void* out) -> herr_t {
        auto& m = *static_cast<std::string*>(out);
        if (e->desc != nullptr && *e->desc != '\0') m = e->desc;
        return 0;
      },
      &msg);
  return msg.empty() ? "HDF5 gave no reason" : msg;
}

hid_t file_type(DType t) {
  switch (t) {
    case DType::float32: return H5T_IEEE_F32LE;
    case DType::float16: return H5T_STD_U16LE;  // HDF5 has no predefined binary16: its bits
    case DType::int32: return H5T_STD_I32LE;
    case DType::uint8: return H5T_STD_U8LE;
    case DType::float64: return H5T_IEEE_F64LE;
    case DType::int64: return H5T_STD_I64LE;
    case DType::bfloat16: return H5T_STD_U16LE;  // nor bfloat16: its bits, as float16's
  }
  throw Error(Errc::internal, "a checkpoint has no HDF5 type for dtype " + std::to_string(static_cast<int>(t)));
}
hid_t memory_type(DType t) {
  switch (t) {
    case DType::float32: return H5T_NATIVE_FLOAT;
    case DType::float16: return H5T_NATIVE_UINT16;
    case DType::int32: return H5T_NATIVE_INT32;
    case DType::uint8: return H5T_NATIVE_UINT8;
    case DType::float64: return H5T_NATIVE_DOUBLE;
    case DType::int64: return H5T_NATIVE_INT64;
    case DType::bfloat16: return H5T_NATIVE_UINT16;
  }
  throw Error(Errc::internal, "a checkpoint has no HDF5 type for dtype " + std::to_string(static_cast<int>(t)));
}

std::uint64_t hash(const void* data, std::size_t bytes) { return XXH3_64bits(data, bytes); }

/// The grid's attributes (`width`, `height`, `depth`: as many as its axes, fastest first) and the
/// canonical form's lines of them.
constexpr const char* kSideNames[] = {"width", "height", "depth"};
std::string grid_lines(const Axes& dims) {
  std::string s;
  for (std::size_t k = 0; k < dims.size() && k < std::size(kSideNames); ++k)
    s += std::string("\n") + kSideNames[k] + "=" + std::to_string(axis_from_fastest(dims, k));
  return s;
}

/// The metadata as one canonical string: its checksum covers every attribute a reader acts on.
std::string canonical(const Meta& m, const std::vector<Block>& blocks) {
  std::ostringstream s;
  s.precision(17);
  s << "format=" << kFormat << "\nsimulation=" << m.simulation << "\nstate_version=" << m.state_version
    << grid_lines(m.dims)
    << "\nstep=" << m.step << "\nsim_time=" << m.sim_time
    << "\nbackend=" << m.backend << "\ncuview_version=" << m.cuview_version << "\nwritten_utc=" << m.written_utc;
  for (const auto& [k, v] : m.options) s << "\noption " << k << "=" << v;
  for (const auto& [k, v] : m.params) s << "\nparam " << k << "=" << v;
  for (const auto& b : blocks) {
    s << "\nstate " << b.spec.name << " " << to_string(b.spec.dtype);
    for (auto d : b.spec.shape) s << " " << d;
  }
  return s.str();
}

// ---- attributes ----
void put(hid_t obj, const char* name, const std::string& value, const std::string& file) {
  Id type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), std::max<std::size_t>(1, value.size()));
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
  Id space(H5Screate(H5S_SCALAR), H5Sclose);
  Id attr(H5Acreate2(obj, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attr.ok() || H5Awrite(attr.get(), type.get(), value.empty() ? "" : value.data()) < 0)
    throw Error(Errc::system,
                "writing attribute '" + std::string(name) + "' of checkpoint " + file + ": " + hdf5_error());
}
template <class T>
void put(hid_t obj, const char* name, T value, hid_t file_t, hid_t mem_t, const std::string& file) {
  Id space(H5Screate(H5S_SCALAR), H5Sclose);
  Id attr(H5Acreate2(obj, name, file_t, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attr.ok() || H5Awrite(attr.get(), mem_t, &value) < 0)
    throw Error(Errc::system,
                "writing attribute '" + std::string(name) + "' of checkpoint " + file + ": " + hdf5_error());
}

struct Reader {
  std::string file;
  [[noreturn]] void damaged(const std::string& what) const {
    throw Error(Errc::bad_value, "checkpoint " + file + " is damaged or not a cuview checkpoint: " + what +
                                     "; restore an earlier checkpoint (--restore PATH) or start afresh");
  }
  std::string text(hid_t obj, const char* name) const {
    Id attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
    if (!attr.ok()) damaged("attribute '" + std::string(name) + "' is missing");
    Id type(H5Aget_type(attr.get()), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) > 0)
      damaged("attribute '" + std::string(name) + "' is not a fixed-length string");
    std::string s(H5Tget_size(type.get()), '\0');
    if (H5Aread(attr.get(), type.get(), s.data()) < 0) damaged("attribute '" + std::string(name) + "' cannot be read");
    s.resize(std::strlen(s.c_str()));
    return s;
  }
  template <class T>
  T number(hid_t obj, const char* name, hid_t mem_t) const {
    Id attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
    if (!attr.ok()) damaged("attribute '" + std::string(name) + "' is missing");
    T v{};
    if (H5Aread(attr.get(), mem_t, &v) < 0) damaged("attribute '" + std::string(name) + "' is not a number");
    return v;
  }
};

std::vector<std::string> member_names(hid_t group) {
  std::vector<std::string> names;
  H5Literate(
      group, H5_INDEX_CRT_ORDER, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
        static_cast<std::vector<std::string>*>(out)->emplace_back(name);
        return 0;
      },
      &names);
  return names;
}
std::vector<std::string> attribute_names(hid_t obj) {
  std::vector<std::string> names;
  H5Aiterate2(
      obj, H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5A_info_t*, void* out) -> herr_t {
        static_cast<std::vector<std::string>*>(out)->emplace_back(name);
        return 0;
      },
      &names);
  return names;
}

void fsync_path(const fs::path& p, int flags, const std::string& what) {
  const int fd = ::open(p.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw_errno("opening " + p.string() + " to " + what, errno);
  const int rc = ::fsync(fd), err = errno;
  ::close(fd);
  if (rc != 0) throw_errno("fsync of " + p.string() + " (" + what + ")", err);
}
}  // namespace

std::string join_options(const std::map<std::string, std::string>& options) {
  std::string s;
  for (const auto& [k, v] : options) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

std::string file_name(std::uint64_t step) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "step-%012llu.h5", static_cast<unsigned long long>(step));
  return buf;
}

std::vector<fs::path> list(const fs::path& dir) {
  static const std::regex kName(R"(step-(\d{12,20})\.h5)");
  std::vector<std::pair<std::uint64_t, fs::path>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (e.is_regular_file(ec) && std::regex_match(name, m, kName)) found.emplace_back(std::stoull(m[1]), e.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

void write(const fs::path& path, const Meta& meta, const std::vector<Block>& blocks) {
  std::lock_guard lock(hdf5_lock());
  quiet_hdf5();
  const std::string file = path.string();
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  const fs::path tmp = dir / ("." + path.filename().string() + ".tmp-" + std::to_string(::getpid()));
  struct RemoveTmp {
    const fs::path& p;
    bool keep = false;
    ~RemoveTmp() {
      std::error_code ec;
      if (!keep) fs::remove(p, ec);
    }
  } cleanup{tmp};
  {
    Id f(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
    if (!f.ok())
      throw Error(Errc::system, "cannot create checkpoint file " + tmp.string() + ": " + hdf5_error() +
                                    "; check that the directory exists and is writable");
    put(f.get(), "format", kFormat, H5T_STD_U32LE, H5T_NATIVE_UINT32, file);
    put(f.get(), "cuview_version", meta.cuview_version, file);
    put(f.get(), "written_utc", meta.written_utc, file);
    Id g(H5Gcreate2(f.get(), "checkpoint", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    put(g.get(), "simulation", meta.simulation, file);
    put(g.get(), "state_version", meta.state_version, H5T_STD_U32LE, H5T_NATIVE_UINT32, file);
    for (std::size_t k = 0; k < meta.dims.size() && k < std::size(kSideNames); ++k)
      put(g.get(), kSideNames[k], axis_from_fastest(meta.dims, k), H5T_STD_U32LE, H5T_NATIVE_UINT32, file);
    put(g.get(), "step", meta.step, H5T_STD_U64LE, H5T_NATIVE_UINT64, file);
    put(g.get(), "sim_time", meta.sim_time, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, file);
    put(g.get(), "options", join_options(meta.options), file);
    put(g.get(), "backend", meta.backend, file);
    const std::string described = canonical(meta, blocks);
    put(g.get(), "metadata_checksum", hash(described.data(), described.size()), H5T_STD_U64LE, H5T_NATIVE_UINT64, file);
    Id params(H5Gcreate2(g.get(), "parameters", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    for (const auto& [k, v] : meta.params) put(params.get(), k.c_str(), v, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, file);
    Id gcpl(H5Pcreate(H5P_GROUP_CREATE), H5Pclose);
    H5Pset_link_creation_order(gcpl.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
    Id state(H5Gcreate2(g.get(), "state", H5P_DEFAULT, gcpl.get(), H5P_DEFAULT), H5Gclose);
    for (const auto& b : blocks) {
      std::vector<hsize_t> dims(b.spec.shape.begin(), b.spec.shape.end());
      Id space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
      Id d(H5Dcreate2(state.get(), b.spec.name.c_str(), file_type(b.spec.dtype), space.get(), H5P_DEFAULT, H5P_DEFAULT,
                      H5P_DEFAULT),
           H5Dclose);
      if (!d.ok() || H5Dwrite(d.get(), memory_type(b.spec.dtype), H5S_ALL, H5S_ALL, H5P_DEFAULT, b.data.get()) < 0)
        throw Error(Errc::system, "writing dataset '" + b.spec.name + "' of checkpoint " + tmp.string() + ": " +
                                      hdf5_error() + " (is the disk full?)");
      put(d.get(), "checksum", hash(b.data.get(), b.spec.bytes()), H5T_STD_U64LE, H5T_NATIVE_UINT64, file);
      put(d.get(), "dtype", to_string(b.spec.dtype), file);
      put(d.get(), "help", b.spec.help, file);
    }
    if (H5Fflush(f.get(), H5F_SCOPE_GLOBAL) < 0)
      throw Error(Errc::system, "flushing checkpoint " + tmp.string() + ": " + hdf5_error() + " (is the disk full?)");
  }
  fsync_path(tmp, O_RDONLY, "make the checkpoint durable");
  if (::rename(tmp.c_str(), path.c_str()) != 0) throw_errno("renaming " + tmp.string() + " to " + file, errno);
  cleanup.keep = true;
  fsync_path(dir, O_RDONLY | O_DIRECTORY, "make the checkpoint's name durable");
}

Loaded read(const fs::path& path) {
  std::lock_guard lock(hdf5_lock());
  quiet_hdf5();
  const Reader r{path.string()};
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw Error(Errc::bad_value, "checkpoint " + r.file +
                                     " does not exist; give the path of a checkpoint file, or `latest` for the "
                                     "newest in --checkpoint-dir");
  if (fs::is_directory(path, ec))
    throw Error(Errc::bad_value,
                "checkpoint " + r.file + " is a directory; give a file, or `latest` with --checkpoint-dir " + r.file);
  if (const htri_t is = H5Fis_hdf5(path.c_str()); is == 0)
    r.damaged("it is not an HDF5 file (no HDF5 signature)");
  else if (is < 0)
    r.damaged("HDF5 cannot read it: " + hdf5_error());
  Id f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.ok()) r.damaged("HDF5 cannot open it: " + hdf5_error() + " (a truncated file reads like this)");
  const auto format = r.number<std::uint32_t>(f.get(), "format", H5T_NATIVE_UINT32);
  if (format != kFormat)
    throw Error(Errc::version_mismatch, "checkpoint " + r.file + " has layout version " + std::to_string(format) +
                                            "; this cuview reads version " + std::to_string(kFormat) +
                                            ": restore it with the cuview that wrote it");
  Loaded out;
  Meta& m = out.meta;
  m.cuview_version = r.text(f.get(), "cuview_version");
  m.written_utc = r.text(f.get(), "written_utc");
  Id g(H5Gopen2(f.get(), "checkpoint", H5P_DEFAULT), H5Gclose);
  if (!g.ok()) r.damaged("it has no group 'checkpoint'");
  m.simulation = r.text(g.get(), "simulation");
  m.state_version = r.number<std::uint32_t>(g.get(), "state_version", H5T_NATIVE_UINT32);
  m.dims = {r.number<std::uint32_t>(g.get(), "width", H5T_NATIVE_UINT32)};
  for (std::size_t k = 1; k < std::size(kSideNames) && H5Aexists(g.get(), kSideNames[k]) > 0; ++k)
    m.dims.insert(m.dims.begin(), r.number<std::uint32_t>(g.get(), kSideNames[k], H5T_NATIVE_UINT32));
  m.step = r.number<std::uint64_t>(g.get(), "step", H5T_NATIVE_UINT64);
  m.sim_time = r.number<double>(g.get(), "sim_time", H5T_NATIVE_DOUBLE);
  m.backend = r.text(g.get(), "backend");
  {
    std::istringstream opts(r.text(g.get(), "options"));
    for (std::string kv; opts >> kv;)
      if (const auto eq = kv.find('='); eq != std::string::npos) m.options[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  const auto meta_sum = r.number<std::uint64_t>(g.get(), "metadata_checksum", H5T_NATIVE_UINT64);
  Id params(H5Gopen2(g.get(), "parameters", H5P_DEFAULT), H5Gclose);
  if (!params.ok()) r.damaged("it has no group 'checkpoint/parameters'");
  for (const auto& name : attribute_names(params.get()))
    m.params[name] = r.number<double>(params.get(), name.c_str(), H5T_NATIVE_DOUBLE);
  Id state(H5Gopen2(g.get(), "state", H5P_DEFAULT), H5Gclose);
  if (!state.ok()) r.damaged("it has no group 'checkpoint/state'");
  for (const auto& name : member_names(state.get())) {
    Id d(H5Dopen2(state.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!d.ok()) r.damaged("dataset '" + name + "' cannot be opened: " + hdf5_error());
    Block b;
    b.spec.name = name;
    const std::string dtype = r.text(d.get(), "dtype");
    const auto t = parse_dtype(dtype);
    if (!t) r.damaged("dataset '" + name + "' has an unknown dtype '" + dtype + "'");
    b.spec.dtype = *t;
    Id space(H5Dget_space(d.get()), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 1 || rank > 8) r.damaged("dataset '" + name + "' has rank " + std::to_string(rank));
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    b.spec.shape.assign(dims.begin(), dims.end());
    const std::size_t bytes = b.spec.bytes();
    b.data =
        std::shared_ptr<std::byte>(new std::byte[std::max<std::size_t>(bytes, 1)], std::default_delete<std::byte[]>());
    if (H5Dread(d.get(), memory_type(b.spec.dtype), H5S_ALL, H5S_ALL, H5P_DEFAULT, b.data.get()) < 0)
      r.damaged("dataset '" + name + "' cannot be read: " + hdf5_error() + " (truncated?)");
    if (hash(b.data.get(), bytes) != r.number<std::uint64_t>(d.get(), "checksum", H5T_NATIVE_UINT64))
      r.damaged("dataset '" + name + "' does not match its checksum (its bytes were altered or torn)");
    out.bytes += bytes;
    out.blocks.push_back(std::move(b));
  }
  if (out.blocks.empty()) r.damaged("it holds no state");
  const std::string c = canonical(m, out.blocks);
  if (hash(c.data(), c.size()) != meta_sum)
    r.damaged("its metadata (simulation, grid, step, parameters, options) do not match their checksum");
  return out;
}

std::string mismatch(const Loaded& loaded, const Meta& meta, const std::vector<sim::StateSpec>& state) {
  const Meta& m = loaded.meta;
  auto grid = [](const Meta& x) { return axes_text(x.dims); };
  if (m.simulation != meta.simulation)
    return "it is a checkpoint of simulation '" + m.simulation + "', not '" + meta.simulation + "'; start with --sim " +
           m.simulation;
  if (m.state_version != meta.state_version)
    return "it holds state version " + std::to_string(m.state_version) + " of '" + m.simulation +
           "'; this build's is " + std::to_string(meta.state_version) + ": restore it with the cuview that wrote it (" +
           m.cuview_version + ")";
  if (m.dims != meta.dims)
    return "it was written for a " + grid(m) + " grid, not " + grid(meta) + "; start with --size " + grid(m);
  if (m.options != meta.options)
    return "it was written with simulation options '" + join_options(m.options) + "', not '" +
           join_options(meta.options) + "'; start with the same --sim-option values";
  if (loaded.blocks.size() != state.size())
    return "it holds " + std::to_string(loaded.blocks.size()) + " state buffers; '" + meta.simulation + "' has " +
           std::to_string(state.size());
  for (std::size_t i = 0; i < state.size(); ++i) {
    const auto& a = loaded.blocks[i].spec;
    const auto& b = state[i];
    if (a.name != b.name || a.dtype != b.dtype || a.shape != b.shape) {
      auto shape = [](const sim::StateSpec& s) {
        std::string t;
        for (auto d : s.shape) t += (t.empty() ? "" : "x") + std::to_string(d);
        return s.name + " (" + to_string(s.dtype) + " " + t + ")";
      };
      return "its state buffer " + shape(a) + " does not fit this run's " + shape(b);
    }
  }
  return {};
}

}  // namespace cuview::checkpoint
