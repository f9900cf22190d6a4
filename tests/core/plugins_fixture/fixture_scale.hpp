// Test-only plugins for the plugin loader test: the op fixture_scale (y = factor * x, f32
// vectors) with one host variant.  The good plugin registers it; the rival registers the same op
// name again, so the loader must refuse it as a clash.
#pragma once
#include <kiln/registry.hpp>

kiln::Status register_fixture_good(kiln::Registry& registry) noexcept;
kiln::Status register_fixture_rival(kiln::Registry& registry) noexcept;
