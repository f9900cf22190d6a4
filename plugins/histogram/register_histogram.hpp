// Registers the histogram family: the ops `histogram` and `histogram_range`, their host
// reference variants and (with the CUDA backend) their CUDA variants.
//
//   kiln::Registry reg;
//   register_histogram(reg);            // no library load: what the tests do
#pragma once
#include <kiln/errors.hpp>
#include <kiln/registry.hpp>

// Never throws: a failed registration (e.g. a duplicate name) comes back as a Status.
kiln::Status register_histogram(kiln::Registry& registry);
