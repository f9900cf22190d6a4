// gemv_host: the host variant of `gemv` (the reference, priority 0), so op("gemv") works on host
// tensors and without a GPU.
//
//   registry.add_variant(kiln::gemv::make_gemv_host());
#pragma once
#include <memory>

#include <kiln/variant.hpp>

namespace kiln::gemv {

std::shared_ptr<const Variant> make_gemv_host();

}  // namespace kiln::gemv
