// kiln's log: levels, where messages go, and how plugin code writes one.  No logging library
// shows through this header (kiln logs through spdlog inside libkiln).
//
//   kiln::RuntimeOptions opts;
//   opts.log_level = kiln::LogLevel::info;               // else KILN_LOG_LEVEL, default warn
//   opts.log_callback = [](kiln::LogLevel level, std::string_view message) {
//     std::cerr << "[kiln " << kiln::log_level_name(level) << "] " << message << "\n";
//   };
//   kiln::Runtime rt(opts);
//
//   // in a plugin (which links libkiln): one line through the same log
//   kiln::log_message(kiln::LogLevel::warn, "my_variant: falling back to the scalar kernel");
#pragma once
#include <functional>
#include <optional>
#include <string_view>

namespace kiln {

enum class LogLevel { trace, debug, info, warn, error, critical, off };

// "trace", ..., "off".
const char* log_level_name(LogLevel level) noexcept;
// The level named `name` in any case ("warning" and "err" too); nothing for an unknown name.
std::optional<LogLevel> parse_log_level(std::string_view name) noexcept;

// Receives every message at or above the level instead of standard error.  It may be called from
// any thread kiln works on, one call at a time; it must not throw (a message it throws on is
// lost).  A message logged from inside it, by it or by kiln code it calls, goes to standard error;
// set_log_callback called from inside it takes effect once it returns.
using LogCallback = std::function<void(LogLevel level, std::string_view message)>;

// The log is one per process.  Its level starts at KILN_LOG_LEVEL (default warn); messages go to
// standard error (coloured on a terminal unless NO_COLOR is set) until a callback is set.
// RuntimeOptions::log_level and ::log_callback call these.
// A value outside LogLevel is ignored (RuntimeOptions::log_level throws ArgumentError for one).
void set_log_level(LogLevel level) noexcept;
LogLevel log_level() noexcept;
// An empty callback restores standard error.
void set_log_callback(LogCallback callback);

// Whether a message at `level` would be written (build costly messages only when it is).
bool log_enabled(LogLevel level) noexcept;
// Writes one message at `level`; never throws.
void log_message(LogLevel level, std::string_view message) noexcept;

}  // namespace kiln
