// add_host: the host variant of `add` (the reference, priority 0), so op("add") works on host
// tensors and without a GPU.
//
//   registry.add_variant(kiln::elementwise::make_add_host());
#pragma once
#include <memory>

#include <kiln/variant.hpp>

namespace kiln::elementwise {

std::shared_ptr<const Variant> make_add_host();

}  // namespace kiln::elementwise
