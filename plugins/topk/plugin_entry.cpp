// The topk plugin's exported entry (libkiln_topk.so).
#include <kiln/plugin.hpp>

#include "register_topk.hpp"

KILN_PLUGIN("topk", "0.1.0", register_topk)
