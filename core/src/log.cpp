#include "kiln/log.hpp"

#include <cstdlib>
#include <mutex>

#include <spdlog/sinks/stdout_color_sinks.h>

namespace kiln {

std::shared_ptr<spdlog::logger> logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    auto existing = spdlog::get("kiln");
    if (existing) return existing;
    auto l = spdlog::stderr_color_mt("kiln");
    l->set_level(spdlog::level::warn);
    if (const char* lvl = std::getenv("KILN_LOG_LEVEL")) l->set_level(spdlog::level::from_str(lvl));
    return l;
  }();
  return instance;
}

}  // namespace kiln
