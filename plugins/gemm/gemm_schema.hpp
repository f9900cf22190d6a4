// The gemm op: C = alpha * A * B + beta * C, A and B in f32, f16 or bf16 (one type), C in f32 or
// the input type, accumulation in f32 (double in the host reference), each of A and B row- or
// column-major, optionally batched.
//
//   rt.op("gemm")({a, b, c}, stream);                               // alpha = 1, beta = 0
//   rt.op("gemm")(kiln::Args({a, b, c}, {2.0, 0.5}), stream);       // alpha = 2, beta = 0.5
//   rt.op("gemm")(kiln::Args({a, b, c}, {1.0, 0.0, 1.0}), stream);  // TF32 tensor cores allowed
//   rt.op("gemm")({x, w.transposed(), y}, stream);                  // Y = X * W^T, no copy
//   rt.op("gemm")({a.batched(8, m * k), b.batched(8, 0), c.batched(8, m * n)}, stream);
//
// Tensors: a [m, k] in, b [k, n] in, c [m, n] inout, or rank 3 ([batch, ...]) for batches; a
// rank-2 a or b (or batch stride 0) is shared by every batch entry; c must be row-major and may
// not broadcast or overlap a or b.  Scalars: alpha = 1, beta = 0, allow_tf32 = 0 (f32 only).
// With beta == 0 C is never read.
//
// Problem dims, in key order: m, n, k (sizes), tf32 (mode), batch (size, default 1), ta and tb
// (modes: 1 when A or B is column-major), c16 (mode: 1 when C has the 16-bit input type, 0 when
// it is f32).  The problem dtype is the input dtype.  Sizes bucket by powers of two; modes match
// exactly (gemm_bucket).  "4096x4096x4096" means tf32 = 0, batch = 1, ta = tb = 0, c16 = 0.
#pragma once
#include <memory>
#include <string>

#include "kiln/args.hpp"
#include "kiln/op_schema.hpp"

namespace kiln::gemm {

// Indices of the tensor and scalar roles.
inline constexpr int kA = 0, kB = 1, kC = 2;
inline constexpr int kAlpha = 0, kBeta = 1, kAllowTf32 = 2;
// Indices of the problem dims.
inline constexpr int kDimM = 0, kDimN = 1, kDimK = 2, kDimTf32 = 3, kDimBatch = 4, kDimTa = 5, kDimTb = 6, kDimC16 = 7;
inline constexpr int kGemmDims = 8;

std::shared_ptr<OpSchema> make_gemm_schema();

// Scalar `index` of `args`, or its role's default (alpha 1, beta 0, allow_tf32 0) when the
// caller passed fewer scalars.
double gemm_scalar(const Args& args, int index);

// The output dtype of a problem: the input dtype when c16 = 1, else f32.
inline DType gemm_out_dtype(const Problem& p) { return p.dims[kDimC16] ? p.dtype : DType::f32; }

// Whether a problem is the plain f32 row-major unbatched product the SIMT and TF32 kernels compute;
// otherwise `why` says what they lack (for Variant::supports()).
bool gemm_is_plain_f32(const Problem& p, std::string& why);

// The bucket for nearest-entry lookup: the modes (dtype, tf32, ta, tb, c16) exactly, the sizes
// (m, n, k, batch) rounded to the nearest power of two.
std::string gemm_bucket(const Problem& p);

}  // namespace kiln::gemm
