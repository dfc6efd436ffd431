#include "publisher/publisher_log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>  // stderr_color_sink_mt too
#include <spdlog/spdlog.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <utility>

#include "cuview/error.hpp"

namespace cuview {
namespace {

constexpr std::array<std::pair<std::string_view, spdlog::level::level_enum>, 6> kLevels{{
    {"trace", spdlog::level::trace},
    {"debug", spdlog::level::debug},
    {"info", spdlog::level::info},
    {"warn", spdlog::level::warn},
    {"error", spdlog::level::err},
    {"off", spdlog::level::off},
}};

spdlog::level::level_enum level_of(const std::string& text, const std::string& from) {
  for (const auto& [name, level] : kLevels)
    if (text == name) return level;
  throw Error(Errc::bad_value, from + "=" + text + " is not a log level; use trace, debug, info, warn, error or off");
}

}  // namespace

spdlog::logger& publisher_log() {
  static const std::shared_ptr<spdlog::logger> logger = [] {
    if (auto theirs = spdlog::get("cuview")) return theirs;
    auto ours = std::make_shared<spdlog::logger>("cuview", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    try {
      spdlog::initialize_logger(ours);
    } catch (const spdlog::spdlog_ex&) {
      if (auto theirs = spdlog::get("cuview")) return theirs;  // registered meanwhile by another thread
    }
    return ours;
  }();
  return *logger;
}

void set_publisher_log_level(const std::string& level, const std::string& option) {
  const char* env = std::getenv("CUVIEW_LOG");
  if (env != nullptr && *env != '\0') {
    publisher_log().set_level(level_of(env, "CUVIEW_LOG"));
  } else if (!level.empty()) {
    publisher_log().set_level(level_of(level, option));
  }
}

}  // namespace cuview
