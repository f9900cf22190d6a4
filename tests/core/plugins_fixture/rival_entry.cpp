#include <kiln/plugin.hpp>

#include "fixture_scale.hpp"

KILN_PLUGIN("fixture_rival", "0.1.0", register_fixture_rival)
