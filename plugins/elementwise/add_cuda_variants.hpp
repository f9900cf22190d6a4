// The CUDA variants of `add` (built only with the CUDA backend).  Each lives in its own .cu file
// next to the kernels it launches; the register function adds them.
//
//   #if KILN_HAS_CUDA
//   registry.add_variant(kiln::elementwise::make_add_vectorized());
//   #endif
#pragma once
#include <memory>

#include <kiln/variant.hpp>

namespace kiln::elementwise {

std::shared_ptr<const Variant> make_add_grid_stride();  // add_grid_stride.cu, priority 20
std::shared_ptr<const Variant> make_add_2d();           // add_2d.cu, priority 10
std::shared_ptr<const Variant> make_add_vectorized();   // add_vectorized.cu, priority 30
std::shared_ptr<const Variant> make_add_streaming();    // add_streaming.cu, priority 40

}  // namespace kiln::elementwise
