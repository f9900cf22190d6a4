#include <kiln/plugin.hpp>

#include "fixture_scale.hpp"

KILN_PLUGIN("fixture_good", "1.2.3", register_fixture_good)
