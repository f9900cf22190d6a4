#include "gemm_schema.hpp"

#include <string>

#include "gemm_reference.hpp"

namespace kiln::gemm {
namespace {

constexpr double kDefaults[] = {1.0, 0.0, 0.0};  // alpha, beta, allow_tf32

Status shape_error(const std::string& role, const TensorRef& got, const Shape& expected, const std::string& why) {
  return Status::fail(ErrorKind::shape, "gemm: " + role + " has shape " + got.shape.to_string() + ", expected " +
                                            expected.to_string() + " (" + why + ")");
}

Status make_problem(const OpSchema& s, const Args& args, Problem& p) {
  for (int i = kA; i <= kC; ++i) {
    Status st = expect_dtype(s, args, i, DType::f32);
    if (!st.ok()) return st;
    st = expect_rank(s, args, i, 2);
    if (!st.ok()) return st;
  }
  const TensorRef& a = args.tensor(kA);
  const TensorRef& b = args.tensor(kB);
  const TensorRef& c = args.tensor(kC);
  const std::int64_t m = a.rows(), k = a.cols(), n = b.cols();
  if (b.rows() != k)
    return shape_error("b", b, Shape::matrix(k, n),
                       "b is k x n and a " + a.shape.to_string() + " gives k = " + std::to_string(k));
  if (c.rows() != m || c.cols() != n)
    return shape_error("c", c, Shape::matrix(m, n),
                       "c is m x n: m = " + std::to_string(m) + " from a, n = " + std::to_string(n) + " from b");
  p.dtype = DType::f32;
  p.n_dims = 4;
  p.dims[kDimM] = m;
  p.dims[kDimN] = n;
  p.dims[kDimK] = k;
  // allow_tf32: 0 = IEEE fp32 only, 1 = TF32 rounding allowed, 2 = fp32-accurate tensor-core
  // math (3xTF32) allowed, whose results match fp32 accuracy but not IEEE inf/NaN handling.
  const double mode = gemm_scalar(args, kAllowTf32);
  if (mode != 0.0 && mode != 1.0 && mode != 2.0)
    return Status::fail(ErrorKind::argument, "gemm: scalar 'allow_tf32' is " + std::to_string(mode) +
                                                 ", expected 0 (IEEE fp32), 1 (TF32) or 2 (3xTF32, fp32-accurate)");
  p.dims[kDimTf32] = static_cast<std::int64_t>(mode);
  return Status::success();
}

}  // namespace

double gemm_scalar(const Args& args, int index) {
  return index < args.scalar_count() ? args.scalar(index) : kDefaults[index];
}

std::shared_ptr<OpSchema> make_gemm_schema() {
  auto s = std::make_shared<OpSchema>();
  s->name = "gemm";
  s->summary = "C = alpha * A * B + beta * C (f32, row-major, row strides; beta == 0 never reads C)";
  s->tensors = {{"a", Role::input}, {"b", Role::input}, {"c", Role::inout}};
  s->scalars = {{"alpha", kDefaults[kAlpha]}, {"beta", kDefaults[kBeta]}, {"allow_tf32", kDefaults[kAllowTf32]}};
  s->dim_names = {"m", "n", "k", "tf32"};
  s->dim_defaults = {{"tf32", 0}};  // "4096x4096x4096" means full f32 precision
  s->mode_dims = {"tf32"};          // a precision contract: never borrowed from a neighbour
  s->dtypes = {DType::f32};
  s->work_unit = WorkUnit::flop;

  // The schema lives as long as its functions (they are its members), so a raw pointer is safe.
  const OpSchema* self = s.get();
  s->make_problem = [self](const Args& args, Problem& p) { return make_problem(*self, args, p); };

  s->tensor_specs = [](const Problem& p, std::vector<TensorSpec>& specs) {
    const std::int64_t m = p.dims[kDimM], n = p.dims[kDimN], k = p.dims[kDimK];
    if (p.n_dims != 4 || m < 0 || n < 0 || k < 0)
      return Status::fail(ErrorKind::shape, "gemm: a problem needs dims m, n, k, tf32 >= 0");
    specs = {{DType::f32, Shape::matrix(m, k)}, {DType::f32, Shape::matrix(k, n)}, {DType::f32, Shape::matrix(m, n)}};
    return Status::success();
  };

  s->reference = [](const Args& args, const Problem&) {
    if (args.tensor_count() != 3) return Status::fail(ErrorKind::argument, "gemm reference: needs a, b, c");
    return gemm_reference(args.tensor(kA), args.tensor(kB), args.tensor(kC), gemm_scalar(args, kAlpha),
                          gemm_scalar(args, kBeta));
  };

  s->work = [](const Problem& p) {
    return 2.0 * static_cast<double>(p.dims[kDimM]) * static_cast<double>(p.dims[kDimN]) *
           static_cast<double>(p.dims[kDimK]);
  };

  // One element of C as the reference writes it (same k order, rounded to f32): O(k), so the
  // tuner can check a GPU oracle on a sample of C instead of computing all of it on the host.
  s->reference_element = [](const Args& in, const Problem& p, int, std::int64_t r, std::int64_t c) {
    const TensorRef& a = in.tensor(kA);
    const TensorRef& b = in.tensor(kB);
    const float* arow = a.as<const float>() + r * a.row_stride;
    const float* bcol = b.as<const float>() + c;
    double acc = 0.0;
    for (std::int64_t kk = 0; kk < p.dims[kDimK]; ++kk)
      acc += static_cast<double>(arow[kk]) * static_cast<double>(bcol[kk * b.row_stride]);
    const double beta = gemm_scalar(in, kBeta);
    double v = gemm_scalar(in, kAlpha) * acc;
    if (beta != 0.0) v += beta * static_cast<double>(in.tensor(kC).as<const float>()[r * in.tensor(kC).row_stride + c]);
    return static_cast<double>(static_cast<float>(v));
  };
  // TF32 keeps 10 mantissa bits: products carry ~2^-11 relative error.
  s->tolerance = [](const Problem& p) { return p.dims[kDimTf32] == 1 ? 5e-3 : 1e-4; };

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
