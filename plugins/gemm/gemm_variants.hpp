// The gemm variants.  gemm_host (the reference, always present) and, in builds with the CUDA
// backend, the CUDA ladder: naive -> row per block -> tiled -> tiled with A transposed ->
// register blocked, plus the Kahan-compensated tiled kernel and the TF32 tensor-core kernel.
#pragma once
#include <memory>
#include <vector>

#include "kiln/variant.hpp"

namespace kiln::gemm {

std::shared_ptr<Variant> make_gemm_host_variant();

#if KILN_HAS_CUDA
std::vector<std::shared_ptr<Variant>> make_gemm_cuda_variants();
#endif

}  // namespace kiln::gemm
