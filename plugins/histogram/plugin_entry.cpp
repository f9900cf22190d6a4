// The histogram plugin's exported entry (libkiln_histogram.so).
#include <kiln/plugin.hpp>

#include "register_histogram.hpp"

KILN_PLUGIN("histogram", "0.1.0", register_histogram)
