// transpose_host: the host variant of `transpose` (the reference, priority 0), so
// op("transpose") works on host tensors and without a GPU.
//
//   registry.add_variant(kiln::transpose::make_transpose_host());
#pragma once
#include <memory>

#include <kiln/variant.hpp>

namespace kiln::transpose {

std::shared_ptr<const Variant> make_transpose_host();

}  // namespace kiln::transpose
