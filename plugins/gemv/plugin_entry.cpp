// The plugin library's one export (see kiln/plugin.hpp).
#include <kiln/plugin.hpp>

#include "register_gemv.hpp"

KILN_PLUGIN("gemv", "0.1.0", register_gemv)
