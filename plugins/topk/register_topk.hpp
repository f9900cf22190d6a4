// Registers the topk family: the op `topk`, its host reference variant and (with the CUDA
// backend) its CUDA variants.
//
//   kiln::Registry reg;
//   register_topk(reg);                 // no library load: what the tests do
#pragma once
#include <kiln/errors.hpp>
#include <kiln/registry.hpp>

// Never throws: a failed registration (e.g. a duplicate name) comes back as a Status.
kiln::Status register_topk(kiln::Registry& registry);
