// The plugin library's one export (see kiln/plugin.hpp).
#include <kiln/plugin.hpp>

#include "register_reduction.hpp"

KILN_PLUGIN("reduction", "0.1.0", register_reduction)
