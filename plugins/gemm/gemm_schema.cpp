#include "gemm_schema.hpp"

#include "kiln/half.hpp"

#include <cmath>
#include <string>

#include "gemm_reference.hpp"

namespace kiln::gemm {
namespace {

constexpr double kDefaults[] = {1.0, 0.0, 0.0};  // alpha, beta, allow_tf32
const char* const kRoles[] = {"a", "b", "c"};

Status fail(ErrorKind kind, const std::string& what) { return Status::fail(kind, "gemm: " + what); }

std::string arg(int i) { return std::string("argument '") + kRoles[i] + "'"; }

Status shape_error(int i, const TensorRef& got, const std::string& expected, const std::string& why) {
  return fail(ErrorKind::shape, arg(i) + " has shape " + got.shape.to_string() + ", expected " + expected + " (" + why + ")");
}

std::string dims_text(std::int64_t batch, bool batched, std::int64_t r, std::int64_t c) {
  return "[" + (batched ? std::to_string(batch) + "x" : std::string()) + std::to_string(r) + "x" + std::to_string(c) + "]";
}

// 0 for a row-major operand, 1 for a column-major one, -1 for neither.  A single row or column
// fits both; its unit stride decides (a transposed m x 1 view, row stride 1, is column-major).
// Only a 1 x 1 view, or a single row whose strides are both 1, is called row-major either way.
int layout_of(const TensorRef& t) {
  if (t.col_stride == 1) return 0;
  if (t.row_stride == 1 || t.rows() <= 1) return 1;
  if (t.cols() <= 1) return 0;  // one column: its column stride is never used
  return -1;
}

bool overlaps(const TensorRef& x, const TensorRef& y) {
  if (x.numel() == 0 || y.numel() == 0) return false;
  const char* x0 = static_cast<const char*>(x.data);
  const char* y0 = static_cast<const char*>(y.data);
  return x0 < y0 + y.span_bytes() && y0 < x0 + x.span_bytes();
}

Status make_problem(const Args& args, Problem& p) {
  const TensorRef& a = args.tensor(kA);
  const TensorRef& b = args.tensor(kB);
  const TensorRef& c = args.tensor(kC);
  if (a.dtype != DType::f32 && a.dtype != DType::f16 && a.dtype != DType::bf16)
    return fail(ErrorKind::dtype, arg(kA) + " has dtype " + std::string(dtype_name(a.dtype)) + ", expected f32, f16 or bf16");
  if (b.dtype != a.dtype)
    return fail(ErrorKind::dtype, arg(kB) + " has dtype " + std::string(dtype_name(b.dtype)) + ", expected " +
                                      std::string(dtype_name(a.dtype)) + " (a and b share one dtype)");
  if (c.dtype != DType::f32 && c.dtype != a.dtype)
    return fail(ErrorKind::dtype, arg(kC) + " has dtype " + std::string(dtype_name(c.dtype)) + ", expected f32" +
                                      (a.dtype == DType::f32 ? std::string() : " or " + std::string(dtype_name(a.dtype))));
  for (int i = kA; i <= kC; ++i) {
    const int rank = args.tensor(i).shape.rank;
    if (rank != 2 && rank != 3)
      return fail(ErrorKind::shape, arg(i) + " has shape " + args.tensor(i).shape.to_string() + " (rank " +
                                        std::to_string(rank) + "), expected rank 2, or 3 for a batch");
  }
  const bool batched = c.shape.rank == 3;
  const std::int64_t batch = c.batch();
  for (int i : {kA, kB})
    if (args.tensor(i).shape.rank == 3 && !batched)
      return fail(ErrorKind::shape, arg(i) + " is batched (" + args.tensor(i).shape.to_string() +
                                        ") but c is not: give c a batch dimension too");
  const std::int64_t m = a.rows(), k = a.cols(), n = b.cols();
  if (a.shape.rank == 3 && a.batch() != batch)
    return shape_error(kA, a, dims_text(batch, true, m, k), "a batched a has c's batch " + std::to_string(batch));
  if (b.rows() != k || (b.shape.rank == 3 && b.batch() != batch))
    return shape_error(kB, b, dims_text(batch, b.shape.rank == 3, k, n),
                       "b is k x n and a " + a.shape.to_string() + " gives k = " + std::to_string(k));
  if (c.rows() != m || c.cols() != n)
    return shape_error(kC, c, dims_text(batch, batched, m, n),
                       "c is m x n: m = " + std::to_string(m) + " from a, n = " + std::to_string(n) + " from b");
  const int ta = layout_of(a), tb = layout_of(b);
  for (int i : {kA, kB})
    if ((i == kA ? ta : tb) < 0)
      return fail(ErrorKind::shape, arg(i) + " has strides " + std::to_string(args.tensor(i).row_stride) + " (rows) and " +
                                        std::to_string(args.tensor(i).col_stride) +
                                        " (columns), expected row-major (column stride 1) or column-major (row stride 1)");
  if (!c.row_major())
    return fail(ErrorKind::shape, arg(kC) + " has column stride " + std::to_string(c.col_stride) +
                                      ", expected a row-major c (column stride 1); for a column-major result compute "
                                      "C^T = B^T A^T with transposed views of all three");
  if (batched && batch > 1 && c.batch_stride == 0)
    return fail(ErrorKind::shape, arg(kC) + " has batch stride 0: an output cannot broadcast");
  for (int i : {kA, kB})
    if (overlaps(c, args.tensor(i)))
      return fail(ErrorKind::argument, arg(kC) + " overlaps " + arg(i) + " in memory: c is written while a and b are "
                                           "read, so they must be apart");
  // allow_tf32: 0 = IEEE fp32 only, 1 = TF32 rounding allowed, 2 = fp32-accurate tensor-core
  // math (3xTF32) allowed, whose results match fp32 accuracy but not IEEE inf/NaN handling.
  const double mode = gemm_scalar(args, kAllowTf32);
  if (mode != 0.0 && mode != 1.0 && mode != 2.0)
    return fail(ErrorKind::argument, "scalar 'allow_tf32' is " + std::to_string(mode) +
                                         ", expected 0 (IEEE fp32), 1 (TF32) or 2 (3xTF32, fp32-accurate)");
  if (mode != 0.0 && a.dtype != DType::f32)
    return fail(ErrorKind::argument, "scalar 'allow_tf32' is " + std::to_string(mode) + ", expected 0 for " +
                                         std::string(dtype_name(a.dtype)) + " inputs (TF32 applies to f32 only)");
  p.dtype = a.dtype;
  p.n_dims = kGemmDims;
  p.dims[kDimM] = m;
  p.dims[kDimN] = n;
  p.dims[kDimK] = k;
  p.dims[kDimTf32] = static_cast<std::int64_t>(mode);
  p.dims[kDimBatch] = batch;
  p.dims[kDimTa] = ta;
  p.dims[kDimTb] = tb;
  p.dims[kDimC16] = c.dtype == DType::f32 ? 0 : 1;
  if (a.dtype == DType::f32) p.dims[kDimC16] = 0;
  return Status::success();
}

Status tensor_specs(const Problem& p, std::vector<TensorSpec>& specs) {
  const std::int64_t m = p.dims[kDimM], n = p.dims[kDimN], k = p.dims[kDimK], batch = p.dims[kDimBatch];
  if (p.n_dims != kGemmDims || m < 0 || n < 0 || k < 0 || batch < 1)
    return Status::fail(ErrorKind::shape, "gemm: a problem needs dims m, n, k >= 0 and batch >= 1");
  for (int i : {kDimTa, kDimTb, kDimC16})
    if (p.dims[i] != 0 && p.dims[i] != 1)
      return Status::fail(ErrorKind::shape, "gemm: dims ta, tb and c16 are 0 or 1, got " + std::to_string(p.dims[i]));
  if (p.dims[kDimC16] == 1 && p.dtype == DType::f32)
    return Status::fail(ErrorKind::shape, "gemm: c16 = 1 needs f16 or bf16 inputs");
  auto shape = [&](std::int64_t r, std::int64_t c) {
    return batch > 1 ? Shape::batched(batch, r, c) : Shape::matrix(r, c);
  };
  specs = {{p.dtype, shape(m, k), p.dims[kDimTa] == 1},
           {p.dtype, shape(k, n), p.dims[kDimTb] == 1},
           {gemm_out_dtype(p), shape(m, n), false}};
  return Status::success();
}

}  // namespace

double gemm_scalar(const Args& args, int index) {
  return index < args.scalar_count() ? args.scalar(index) : kDefaults[index];
}

bool gemm_is_plain_f32(const Problem& p, std::string& why) {
  if (p.dtype != DType::f32) {
    why = "computes f32 inputs only, this problem has " + std::string(dtype_name(p.dtype));
    return false;
  }
  if (p.n_dims > kDimBatch && p.dims[kDimBatch] != 1) {
    why = "computes one product, this problem has batch = " + std::to_string(p.dims[kDimBatch]);
    return false;
  }
  if (p.n_dims > kDimTb && (p.dims[kDimTa] != 0 || p.dims[kDimTb] != 0)) {
    why = "reads row-major A and B only, this problem has ta = " + std::to_string(p.dims[kDimTa]) +
          ", tb = " + std::to_string(p.dims[kDimTb]);
    return false;
  }
  return true;
}

std::string gemm_bucket(const Problem& p) {
  auto pow2 = [](std::int64_t v) {
    const double x = static_cast<double>(v < 1 ? 1 : v);
    return std::to_string(static_cast<std::int64_t>(std::llround(std::exp2(std::round(std::log2(x))))));
  };
  std::string k(dtype_name(p.dtype));
  const char* names[] = {"m", "n", "k", "tf32", "batch", "ta", "tb", "c16"};
  for (int i = 0; i < p.n_dims && i < kGemmDims; ++i) {
    const bool mode = i == kDimTf32 || i == kDimTa || i == kDimTb || i == kDimC16;
    k += std::string("|") + names[i] + (mode ? "=" + std::to_string(p.dims[i]) : "~" + pow2(p.dims[i]));
  }
  return k;
}

std::shared_ptr<OpSchema> make_gemm_schema() {
  auto s = std::make_shared<OpSchema>();
  s->name = "gemm";
  s->summary = "C = alpha * A * B + beta * C (A, B f32, f16 or bf16, row- or column-major; C f32 or the input type; "
               "f32 accumulation; batched with broadcast; beta == 0 never reads C)";
  s->tensors = {{"a", Role::input}, {"b", Role::input}, {"c", Role::inout}};
  s->scalars = {{"alpha", kDefaults[kAlpha]}, {"beta", kDefaults[kBeta]}, {"allow_tf32", kDefaults[kAllowTf32]}};
  s->dim_names = {"m", "n", "k", "tf32", "batch", "ta", "tb", "c16"};
  // "4096x4096x4096" means one row-major product at full f32 precision, C in f32.
  s->dim_defaults = {{"tf32", 0}, {"batch", 1}, {"ta", 0}, {"tb", 0}, {"c16", 0}};
  // Precision and layouts are contracts, never borrowed from a neighbour; m, n, k, batch are sizes.
  s->mode_dims = {"tf32", "ta", "tb", "c16"};
  s->dtypes = {DType::f32, DType::bf16, DType::f16};
  s->work_unit = WorkUnit::flop;
  s->strided_views = true;
  s->make_problem = make_problem;
  s->tensor_specs = tensor_specs;

  s->reference = [](const Args& args, const Problem&) {
    if (args.tensor_count() != 3) return Status::fail(ErrorKind::argument, "gemm reference: needs a, b, c");
    return gemm_reference(args.tensor(kA), args.tensor(kB), args.tensor(kC), gemm_scalar(args, kAlpha),
                          gemm_scalar(args, kBeta));
  };

  s->work = [](const Problem& p) {
    return 2.0 * static_cast<double>(p.dims[kDimM]) * static_cast<double>(p.dims[kDimN]) *
           static_cast<double>(p.dims[kDimK]) * static_cast<double>(p.n_dims > kDimBatch ? p.dims[kDimBatch] : 1);
  };

  // One element of C (batch 0) as the reference writes it (same k order, rounded to C's dtype):
  // O(k), so the tuner can check a GPU oracle on a sample of C instead of computing all of it on
  // the host.  load_element reads any dtype, layout and batch stride.
  s->reference_element = [](const Args& in, const Problem& p, int, std::int64_t r, std::int64_t c) {
    const TensorRef& a = in.tensor(kA);
    const TensorRef& b = in.tensor(kB);
    double acc = 0.0;
    for (std::int64_t kk = 0; kk < p.dims[kDimK]; ++kk) acc += load_element(a, 0, r, kk) * load_element(b, 0, kk, c);
    const double beta = gemm_scalar(in, kBeta);
    double v = gemm_scalar(in, kAlpha) * acc;
    if (beta != 0.0) v += beta * load_element(in.tensor(kC), 0, r, c);
    const float f = static_cast<float>(v);
    switch (gemm_out_dtype(p)) {
      case DType::f16: return static_cast<double>(f16_to_float(float_to_f16(f)));
      case DType::bf16: return static_cast<double>(bf16_to_float(float_to_bf16(f)));
      default: return static_cast<double>(f);
    }
  };
  // TF32 keeps 10 mantissa bits: products carry ~2^-11 relative error.  Half inputs are exact in
  // the f32 accumulators, so their error is the accumulation's plus the output rounding
  // (accumulation_tolerance: 7.9e-3 for bf16 C at k = 8192, 2.0e-3 for f16 C, 1e-4 for f32 C).
  s->tolerance = [](const Problem& p) {
    if (p.dims[kDimTf32] == 1 && p.dtype == DType::f32) return 5e-3;
    return accumulation_tolerance(gemm_out_dtype(p), p.dims[kDimK]);
  };
  s->bucket = gemm_bucket;

  // The tuner's arguments must re-derive the same problem, so allow_tf32 follows the tf32 dim.
  s->scalars_for = [](const Problem& p, Args& args) {
    while (args.scalar_count() < 3) args.push_scalar(kDefaults[args.scalar_count()]);
    args.set_scalar(kAlpha, kDefaults[kAlpha]);
    args.set_scalar(kBeta, kDefaults[kBeta]);
    args.set_scalar(kAllowTf32, static_cast<double>(p.dims[kDimTf32]));
  };
  return s;
}

}  // namespace kiln::gemm
