#include "kiln/log.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/sinks/sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include "logger.hpp"
#include "spelling.hpp"
#include "tuning_db_files.hpp"

namespace kiln {
namespace {

constexpr LogLevel kLevels[] = {LogLevel::trace, LogLevel::debug,    LogLevel::info, LogLevel::warn,
                                LogLevel::error, LogLevel::critical, LogLevel::off};

spdlog::level::level_enum to_spdlog(LogLevel level) {
  switch (level) {
    case LogLevel::trace: return spdlog::level::trace;
    case LogLevel::debug: return spdlog::level::debug;
    case LogLevel::info: return spdlog::level::info;
    case LogLevel::warn: return spdlog::level::warn;
    case LogLevel::error: return spdlog::level::err;
    case LogLevel::critical: return spdlog::level::critical;
    case LogLevel::off: break;
  }
  return spdlog::level::off;
}

LogLevel from_spdlog(spdlog::level::level_enum level) {
  for (LogLevel l : kLevels)
    if (to_spdlog(l) == level) return l;
  return LogLevel::off;
}

// Standard error, or the user's callback once one is set: one sink, so switching is a pointer
// swap under the sink's lock rather than a change of the logger's sink list while it logs.
//
// The callback runs under that lock.  A callback that logs through kiln (directly, or by calling
// something that logs) or sets the callback re-entered the lock on the same thread and hung the
// program; now a message logged from inside the callback goes to standard error, and a callback
// set from inside it takes over once the running one returns.
class CallbackOrStderrSink final : public spdlog::sinks::sink {
 public:
  explicit CallbackOrStderrSink(bool colour)
      : stderr_(std::make_shared<spdlog::sinks::stderr_color_sink_mt>(colour ? spdlog::color_mode::automatic
                                                                              : spdlog::color_mode::never)) {}

  void log(const spdlog::details::log_msg& msg) override {
    if (in_callback_) {  // this thread holds mutex_, inside the callback
      stderr_->log(msg);
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (callback_) {
      in_callback_ = true;
      try {
        callback_(from_spdlog(msg.level), std::string_view(msg.payload.data(), msg.payload.size()));
      } catch (...) {
        // The callback must not throw; if it does, the message is lost, not the program.
      }
      in_callback_ = false;
      if (pending_) {  // set from inside the callback: replace it now that it has returned
        callback_ = std::move(*pending_);
        pending_.reset();
      }
      return;
    }
    stderr_->log(msg);
  }
  void flush() override {
    if (in_callback_) {
      stderr_->flush();
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!callback_) stderr_->flush();
  }
  void set_pattern(const std::string& pattern) override { stderr_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
    stderr_->set_formatter(std::move(formatter));
  }
  void set_callback(LogCallback callback) {
    if (in_callback_) {  // this thread holds mutex_; the running callback must not be destroyed
      pending_ = std::move(callback);
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    callback_ = std::move(callback);
  }

 private:
  // Whether this thread is inside the callback (there is one sink per process).
  static thread_local bool in_callback_;
  std::mutex mutex_;
  std::shared_ptr<spdlog::sinks::stderr_color_sink_mt> stderr_;
  LogCallback callback_;
  std::optional<LogCallback> pending_;  // written and read only by the thread holding mutex_
};

thread_local bool CallbackOrStderrSink::in_callback_ = false;

struct KilnLog {
  std::shared_ptr<CallbackOrStderrSink> sink;
  std::shared_ptr<spdlog::logger> logger;
};

// KILN_LOG_LEVEL in any case; an unknown value keeps the default and says so: a typo must not
// silence every message, errors included.
void apply_level_from_env(spdlog::logger& l) {
  const char* env = std::getenv("KILN_LOG_LEVEL");
  if (!env || !*env) return;
  if (const auto level = parse_log_level(env)) {
    l.set_level(to_spdlog(*level));
    return;
  }
  std::string value = env;
  for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  l.warn("KILN_LOG_LEVEL='{}' is not a log level{} (expected trace, debug, info, warn, error, critical or off); "
         "logging at warn",
         detail::printable(env), detail::did_you_mean(value, {"trace", "debug", "info", "warn", "error", "critical", "off"}));
}

KilnLog& kiln_log() {
  static KilnLog instance = [] {
    // NO_COLOR (https://no-color.org): set and not empty means no colour codes.
    const char* no_color = std::getenv("NO_COLOR");
    const bool plain = no_color && *no_color;
    KilnLog log;
    log.sink = std::make_shared<CallbackOrStderrSink>(!plain);
    // Not registered with spdlog's registry: a program that uses spdlog itself keeps its own
    // "kiln" name free and its own defaults.
    log.logger = std::make_shared<spdlog::logger>("kiln", log.sink);
    log.logger->set_level(spdlog::level::warn);
    apply_level_from_env(*log.logger);
    return log;
  }();
  return instance;
}

}  // namespace

const char* log_level_name(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::trace: return "trace";
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warn: return "warn";
    case LogLevel::error: return "error";
    case LogLevel::critical: return "critical";
    case LogLevel::off: return "off";
  }
  return "off";
}

std::optional<LogLevel> parse_log_level(std::string_view name) noexcept {
  const auto equals = [&](std::string_view word) {
    return name.size() == word.size() &&
           std::equal(name.begin(), name.end(), word.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == static_cast<unsigned char>(b);
           });
  };
  if (equals("warning")) return LogLevel::warn;
  if (equals("err")) return LogLevel::error;
  for (LogLevel l : kLevels)
    if (equals(log_level_name(l))) return l;
  return std::nullopt;
}

std::shared_ptr<spdlog::logger> logger() { return kiln_log().logger; }

bool is_log_level(LogLevel level) noexcept {
  return static_cast<int>(level) >= static_cast<int>(LogLevel::trace) &&
         static_cast<int>(level) <= static_cast<int>(LogLevel::off);
}

void set_log_level(LogLevel level) noexcept {
  // A value outside the enum (a cast from a config integer) is ignored: to_spdlog reads it as
  // `off`, which silenced every message, errors included.
  if (!is_log_level(level)) return;
  kiln_log().logger->set_level(to_spdlog(level));
}

LogLevel log_level() noexcept { return from_spdlog(kiln_log().logger->level()); }

void set_log_callback(LogCallback callback) { kiln_log().sink->set_callback(std::move(callback)); }

bool log_enabled(LogLevel level) noexcept {
  // off, and a LogLevel cast from a number outside the enum (to_spdlog maps it to off), is never
  // written: spdlog would print it as "[off] ...".
  const spdlog::level::level_enum l = to_spdlog(level);
  return l != spdlog::level::off && kiln_log().logger->should_log(l);
}

void log_message(LogLevel level, std::string_view message) noexcept {
  if (!log_enabled(level)) return;
  try {
    kiln_log().logger->log(to_spdlog(level), "{}", message);
  } catch (...) {
    // Logging never throws into the caller (a plugin's code may call this).
  }
}

}  // namespace kiln
