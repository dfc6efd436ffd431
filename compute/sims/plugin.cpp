#include "sims/plugin.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <cctype>
#include <cstdlib>
#include <memory>
#include <utility>

#include "cuview/error.hpp"
#include "cuview/extent.hpp"

namespace cuview::sim {

namespace {
using EntryPoint = const PluginInfo* (*)();
constexpr const char* kEntry = "cuview_simulation_v1";

bool in_symbol(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

/// dlerror()'s text with each mangled C++ name (`_ZN6advect3gpu9fill_flowEiPf...`) written as the
/// declaration it names (`advect::gpu::fill_flow(int, float*, ...)`), as the plugin's author wrote it.
std::string demangled(const std::string& text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 2, "_Z") != 0 || (i > 0 && in_symbol(text[i - 1]))) {
      out += text[i++];
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && in_symbol(text[end])) ++end;
    const std::string token = text.substr(i, end - i);
    int status = -1;
    const std::unique_ptr<char, decltype(&std::free)> name(
        abi::__cxa_demangle(token.c_str(), nullptr, nullptr, &status), &std::free);
    out += status == 0 && name ? name.get() : token;
    i = end;
  }
  return out;
}
}  // namespace

Plugin Plugin::load(const std::string& path) {
  const std::string what = "plugin " + path;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error(Errc::bad_value, what +
                                     " does not exist; give the path of a shared library built against cuview "
                                     "(see docs/sdk.md), or a built-in name (cuview-ctl sims lists them)");
  // A relative name without a slash would be searched on the library path: always load the file named.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = ::dlerror();
    std::string why = err ? demangled(err) : "dlopen failed";
    if (why.rfind(file + ": ", 0) == 0) why.erase(0, file.size() + 2);  // the file is named once, below
    const std::string hint =
        why.find("undefined symbol") != std::string::npos
            ? " (the plugin calls it but does not contain it: compile the file that defines it into the plugin "
              "— a .cu file needs CUDA enabled in the plugin's CMake project, see docs/sdk.md — or link the "
              "library it comes from)"
            : " (is it a shared library for this machine, with its dependencies found?)";
    throw Error(Errc::bad_value, what + " cannot be loaded: " + why + hint);
  }
  auto entry = reinterpret_cast<EntryPoint>(::dlsym(handle, kEntry));
  if (entry == nullptr) {
    // A plugin built for another ABI exports another cuview_simulation_vN: name both.
    for (int v = 2; v <= 16; ++v) {
      if (::dlsym(handle, ("cuview_simulation_v" + std::to_string(v)).c_str()) != nullptr) {
        ::dlclose(handle);
        throw Error(Errc::bad_value, what + " was built for plugin entry point cuview_simulation_v" +
                                         std::to_string(v) + "; this cuview-compute (" CUVIEW_VERSION ") loads " +
                                         kEntry + " plugins of simulation ABI " + std::to_string(kOldestPluginAbi) +
                                         " to " + std::to_string(kPluginAbi) +
                                         ": rebuild the plugin against this cuview, or "
                                         "run it with the cuview it was built for");
      }
    }
    ::dlclose(handle);
    throw Error(Errc::bad_value, what + " is not a cuview simulation plugin: it exports no " + kEntry +
                                     " (write CUVIEW_SIMULATION_PLUGIN(...) in it; see docs/sdk.md)");
  }
  const PluginInfo* info = entry();
  if (info == nullptr || info->abi < kOldestPluginAbi || info->abi > kPluginAbi || info->make == nullptr ||
      info->name == nullptr) {
    const std::string abi = info ? std::to_string(info->abi) : "none";
    ::dlclose(handle);
    throw Error(Errc::bad_value, what + " reports simulation ABI " + abi +
                                     " (or no factory); this cuview-compute "
                                     "loads ABI " +
                                     std::to_string(kOldestPluginAbi) + " to " + std::to_string(kPluginAbi) +
                                     ": rebuild the plugin against it");
  }
  // `axes` exists from ABI 8 on; a plugin of 7 does not have it (Plugin::axes says 2).
  if (info->abi >= 8 && (info->axes < 1 || info->axes > kMaxAxes)) {
    const std::string axes = std::to_string(info->axes);
    ::dlclose(handle);
    throw Error(Errc::bad_value, what + " declares a grid of " + axes + " axes; a plugin's grid has 1 to " +
                                     std::to_string(kMaxAxes) + " (CUVIEW_SIMULATION_PLUGIN_AXES(..., AXES); " +
                                     "--size W, WxH or WxHxD): see docs/sdk.md");
  }
  return Plugin(handle, info, path);
}

Plugin::Plugin(Plugin&& o) noexcept
    : handle_(std::exchange(o.handle_, nullptr)), info_(std::exchange(o.info_, nullptr)), path_(std::move(o.path_)) {}

Plugin& Plugin::operator=(Plugin&& o) noexcept {
  if (this != &o) {
    if (handle_ != nullptr) ::dlclose(handle_);
    handle_ = std::exchange(o.handle_, nullptr);
    info_ = std::exchange(o.info_, nullptr);
    path_ = std::move(o.path_);
  }
  return *this;
}

Plugin::~Plugin() {
  if (handle_ != nullptr) ::dlclose(handle_);
}

std::unique_ptr<Simulation> Plugin::make(Executor& executor, const SimulationConfig& config) const {
  std::unique_ptr<Simulation> s;
  try {
    s = info_->make(executor, config);
  } catch (const std::exception& e) {
    throw PluginFailed(Errc::bad_value, "simulation '" + std::string(info_->name) + "' (plugin " + path_ +
                                            ") failed in make(): " + e.what());
  }
  if (!s)
    throw PluginFailed(Errc::bad_value, "simulation '" + std::string(info_->name) + "' (plugin " + path_ +
                                            "): make() returned no simulation");
  return s;
}

}  // namespace cuview::sim
