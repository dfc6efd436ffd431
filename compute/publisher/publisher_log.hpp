// The publisher library's log. A library writes to stderr, never to the program's stdout, at the
// level the program chose, and leaves spdlog's default logger (which the program may use) alone:
// its lines go through a logger of its own, "cuview" (docs/sdk.md "Logging").
#pragma once

#include <spdlog/logger.h>

#include <string>

namespace cuview {

/// The library's logger: the one the program registered with spdlog as "cuview", else one made
/// here that writes to stderr (registered, so it takes the pattern and level spdlog was given).
/// Thread-safe.
spdlog::logger& publisher_log();

/// Sets its level from CUVIEW_LOG when that is set (the environment wins: it is for debugging a
/// program without rebuilding it), else from `level` (PublisherOptions::log) when not empty; else
/// leaves it. Throws Error(bad_value) naming `option` or CUVIEW_LOG for a level that is not one.
void set_publisher_log_level(const std::string& level, const std::string& option);

}  // namespace cuview
