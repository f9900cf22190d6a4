// The CUDA variants of `gemv` (built only with the CUDA backend).  Each lives in its own .cu file
// next to the kernel it launches; register_gemv() adds them.
//
//   #if KILN_HAS_CUDA
//   registry.add_variant(kiln::gemv::make_gemv_warp_per_row());
//   #endif
#pragma once
#include <memory>

#include <kiln/variant.hpp>

namespace kiln::gemv {

std::shared_ptr<const Variant> make_gemv_warp_per_row();    // gemv_warp_per_row.cu, priority 30
std::shared_ptr<const Variant> make_gemv_half_warp_per_row();  // gemv_half_warp_per_row.cu, priority 30, f16/bf16
std::shared_ptr<const Variant> make_gemv_smem_x();          // gemv_smem_x.cu, priority 20
std::shared_ptr<const Variant> make_gemv_row_per_thread();  // gemv_row_per_thread.cu, priority 10

}  // namespace kiln::gemv
