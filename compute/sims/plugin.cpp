#include "sims/plugin.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <utility>

#include "cuview/error.hpp"

namespace cuview::sim {

namespace {
using EntryPoint = const PluginInfo* (*)();
constexpr const char* kEntry = "cuview_simulation_v1";
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
    throw Error(Errc::bad_value, what + " cannot be loaded: " + (err ? err : "dlopen failed") +
                                     " (is it a shared library for this machine, with its dependencies found?)");
  }
  auto entry = reinterpret_cast<EntryPoint>(::dlsym(handle, kEntry));
  if (entry == nullptr) {
    // A plugin built for another ABI exports another cuview_simulation_vN: name both.
    for (int v = 2; v <= 16; ++v) {
      if (::dlsym(handle, ("cuview_simulation_v" + std::to_string(v)).c_str()) != nullptr) {
        ::dlclose(handle);
        throw Error(Errc::bad_value, what + " was built for plugin entry point cuview_simulation_v" +
                                         std::to_string(v) + "; this cuview-compute (" CUVIEW_VERSION ") loads " +
                                         kEntry + " plugins of simulation ABI " + std::to_string(kPluginAbi) +
                                         ": rebuild the plugin against this cuview, or "
                                         "run it with the cuview it was built for");
      }
    }
    ::dlclose(handle);
    throw Error(Errc::bad_value, what + " is not a cuview simulation plugin: it exports no " + kEntry +
                                     " (write CUVIEW_SIMULATION_PLUGIN(...) in it; see docs/sdk.md)");
  }
  const PluginInfo* info = entry();
  if (info == nullptr || info->abi != kPluginAbi || info->make == nullptr || info->name == nullptr) {
    const std::string abi = info ? std::to_string(info->abi) : "none";
    ::dlclose(handle);
    throw Error(Errc::bad_value, what + " reports simulation ABI " + abi +
                                     " (or no factory); this cuview-compute "
                                     "loads ABI " +
                                     std::to_string(kPluginAbi) + ": rebuild the plugin against it");
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
    throw Error(Errc::bad_value,
                "plugin " + path_ + " (simulation '" + info_->name + "') failed to start: " + e.what());
  }
  if (!s) throw Error(Errc::bad_value, "plugin " + path_ + " (simulation '" + info_->name + "') made no simulation");
  return s;
}

}  // namespace cuview::sim
