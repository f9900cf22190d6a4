// The vendor plugin: cuBLAS and CUB wrapped as ordinary kiln variants of the family ops (gemm,
// gemv, dot, transpose, add, reduce_sum, histogram, histogram_range, topk), all marked
// VariantDesc::vendor.  It registers variants only: the family plugins own the op schemas, so a
// registry holding the vendor plugin without them reports its variants as orphans.
//
//   kiln::Registry reg;
//   register_gemm(reg);                   // the schema `gemm` and kiln's own variants
//   register_vendor(reg);                 // + gemm_cublas, gemm_cublas_tf32, ... (with CUDA)
//   kiln::Runtime rt(std::move(reg), options);
#pragma once
#include <kiln/errors.hpp>
#include <kiln/registry.hpp>

// Adds the vendor variants (none without the CUDA backend); never throws (a registry refusal
// comes back as a Status).
kiln::Status register_vendor(kiln::Registry& registry);
