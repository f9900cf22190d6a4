// The kiln logger ("kiln", spdlog).  Level from KILN_LOG_LEVEL (trace|debug|info|warn|error|off),
// default warn.  The dispatch hot path logs at debug at most.
#pragma once
#include <memory>

#include <spdlog/spdlog.h>

namespace kiln {
std::shared_ptr<spdlog::logger> logger();
}  // namespace kiln
