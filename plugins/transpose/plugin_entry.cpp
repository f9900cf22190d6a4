// The plugin library's one export (see kiln/plugin.hpp).
#include <kiln/plugin.hpp>

#include "register_transpose.hpp"

KILN_PLUGIN("transpose", "0.1.0", register_transpose)
