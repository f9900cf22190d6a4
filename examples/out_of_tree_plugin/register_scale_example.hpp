// Adds the op `scale` and its variants to a registry.  The plugin entry calls it; a test can call
// it directly, without loading the library.
#pragma once
#include <kiln/registry.hpp>

namespace scale_example {
kiln::Status register_scale_example(kiln::Registry& registry) noexcept;
}  // namespace scale_example
