// The plugin library's one export (see kiln/plugin.hpp).
#include <kiln/plugin.hpp>

#include "register_elementwise.hpp"

KILN_PLUGIN("elementwise", "0.1.0", register_elementwise)
