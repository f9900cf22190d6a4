// The gemm op: C = alpha * A * B + beta * C on row-major f32 matrices with row strides.
//
//   rt.op("gemm")({a, b, c}, stream);                               // alpha = 1, beta = 0
//   rt.op("gemm")(kiln::Args({a, b, c}, {2.0, 0.5}), stream);       // alpha = 2, beta = 0.5
//   rt.op("gemm")(kiln::Args({a, b, c}, {1.0, 0.0, 1.0}), stream);  // TF32 tensor cores allowed
//
// Tensors: a [m, k] in, b [k, n] in, c [m, n] inout.  Scalars: alpha = 1, beta = 0,
// allow_tf32 = 0.  Problem dims {m, n, k, tf32}.  With beta == 0 C is never read.
#pragma once
#include <memory>

#include "kiln/args.hpp"
#include "kiln/op_schema.hpp"

namespace kiln::gemm {

// Indices of the tensor and scalar roles.
inline constexpr int kA = 0, kB = 1, kC = 2;
inline constexpr int kAlpha = 0, kBeta = 1, kAllowTf32 = 2;
// Indices of the problem dims.
inline constexpr int kDimM = 0, kDimN = 1, kDimK = 2, kDimTf32 = 3;

std::shared_ptr<OpSchema> make_gemm_schema();

// Scalar `index` of `args`, or its role's default (alpha 1, beta 0, allow_tf32 0) when the
// caller passed fewer scalars.
double gemm_scalar(const Args& args, int index);

}  // namespace kiln::gemm
