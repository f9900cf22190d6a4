// The plugin library's one export (see kiln/plugin.hpp).
#include <kiln/plugin.hpp>

#include "register_vendor.hpp"

KILN_PLUGIN("vendor", "0.1.0", register_vendor)
