#include "kiln/log.hpp"

#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

#include <spdlog/sinks/stdout_color_sinks.h>

#include "spelling.hpp"

namespace kiln {
namespace {

// KILN_LOG_LEVEL in any case; "warning" and "err" as spdlog spells them too.  An unknown value
// keeps the default and says so: a typo must not silence every message, errors included.
void apply_level_from_env(spdlog::logger& l) {
  const char* env = std::getenv("KILN_LOG_LEVEL");
  if (!env || !*env) return;
  std::string value = env;
  for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::vector<std::pair<std::string, spdlog::level::level_enum>> levels = {
      {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug},       {"info", spdlog::level::info},
      {"warn", spdlog::level::warn},   {"warning", spdlog::level::warn},      {"error", spdlog::level::err},
      {"err", spdlog::level::err},     {"critical", spdlog::level::critical}, {"off", spdlog::level::off}};
  for (const auto& [name, level] : levels)
    if (value == name) {
      l.set_level(level);
      return;
    }
  l.warn("KILN_LOG_LEVEL='{}' is not a log level{} (expected trace, debug, info, warn, error, critical or off); "
         "logging at warn",
         env, detail::did_you_mean(value, {"trace", "debug", "info", "warn", "error", "critical", "off"}));
}

}  // namespace

std::shared_ptr<spdlog::logger> logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    auto existing = spdlog::get("kiln");
    if (existing) return existing;
    // NO_COLOR (https://no-color.org): set and not empty means no colour codes.
    const char* no_color = std::getenv("NO_COLOR");
    const bool plain = no_color && *no_color;
    auto l = spdlog::stderr_color_mt("kiln", plain ? spdlog::color_mode::never : spdlog::color_mode::automatic);
    l->set_level(spdlog::level::warn);
    apply_level_from_env(*l);
    return l;
  }();
  return instance;
}

}  // namespace kiln
