// The spdlog logger behind kiln/log.hpp, for kiln's own sources (the core, the tuner, the CLI):
// format strings there are spdlog's.  Private: no public header includes spdlog.
#pragma once
#include <memory>

#include <spdlog/spdlog.h>

#include "kiln/log.hpp"

namespace kiln {
// Whether `level` is one of LogLevel's values (not an integer cast into it).
bool is_log_level(LogLevel level) noexcept;
// The "kiln" logger: level from KILN_LOG_LEVEL (or set_log_level), to standard error or the
// callback of set_log_callback.
std::shared_ptr<spdlog::logger> logger();
}  // namespace kiln
