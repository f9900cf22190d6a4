#include <kiln/plugin.hpp>

#include "fixture_ops.hpp"

KILN_PLUGIN("tuner_fault", "0.1.0", register_tuner_fault)
