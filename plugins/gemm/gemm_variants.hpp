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
std::shared_ptr<Variant> make_gemm_half_mma_variant();  // gemm_half_variant.cpp: f16/bf16 mma.sync
#endif
#if KILN_HAS_SM90A
std::shared_ptr<Variant> make_gemm_wgmma_variant();  // gemm_wgmma_variant.cpp: Hopper wgmma + TMA
#endif

}  // namespace kiln::gemm
