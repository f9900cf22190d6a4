// The one symbol kiln looks for in the library.
#include <kiln/plugin.hpp>

#include "register_scale_example.hpp"

KILN_PLUGIN("scale_example", "0.1.0", scale_example::register_scale_example)
