// The CUDA variants of `transpose` (built only with the CUDA backend); register_transpose() adds
// them.
//
//   #if KILN_HAS_CUDA
//   registry.add_variant(kiln::transpose::make_transpose_tiled_multirow());
//   #endif
#pragma once
#include <memory>

#include <kiln/variant.hpp>

namespace kiln::transpose {

std::shared_ptr<const Variant> make_transpose_skinny();             // transpose_skinny.cu, priority 55
std::shared_ptr<const Variant> make_transpose_tiled_multirow();     // transpose_tiled_multirow.cu, priority 50
std::shared_ptr<const Variant> make_transpose_tiled_padded();       // transpose_tiled_padded.cu, priority 40
std::shared_ptr<const Variant> make_transpose_write_coalesced();    // transpose_1d.cu, priority 30
std::shared_ptr<const Variant> make_transpose_naive_2d();           // transpose_naive_2d.cu, priority 20
std::shared_ptr<const Variant> make_transpose_read_coalesced();     // transpose_1d.cu, priority 10

}  // namespace kiln::transpose
