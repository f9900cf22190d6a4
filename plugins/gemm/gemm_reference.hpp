// The host reference of gemm: C = alpha * A * B + beta * C in double accumulation, on host
// tensors of any gemm layout.  It is the tuner's oracle and the gemm_host variant.
//
//   kiln::Status s = kiln::gemm::gemm_reference(a, b, c, /*alpha=*/1.0, /*beta=*/0.0);
#pragma once
#include "kiln/errors.hpp"
#include "kiln/tensor_ref.hpp"

namespace kiln::gemm {

// a is m x k, b is k x n, c is m x n, all on the host; a and b f32, f16 or bf16 (one type), c f32
// or that type, each with any strides, rank 3 for batches (a rank-2 a or b, or batch stride 0, is
// shared by every batch entry).  The result is rounded once, to c's dtype (to nearest even).  With
// beta == 0 C is not read.  Blocked over rows of C and over k so that a panel of B stays in cache
// while it is reused, and spread over the host's threads above 2e7 multiply-adds; 512^3 takes a
// fraction of a second.  Deterministic (independent of the thread count).  Never throws.
Status gemm_reference(const TensorRef& a, const TensorRef& b, const TensorRef& c, double alpha, double beta) noexcept;

}  // namespace kiln::gemm
