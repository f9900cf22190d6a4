#include "gemv_schema.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include <kiln/half.hpp>

#include "gemv_reference.hpp"

namespace kiln::gemv {
namespace {

// Byte ranges of two views overlap (same device, both non-empty).
bool overlap(const TensorRef& p, const TensorRef& q) {
  if (p.numel() == 0 || q.numel() == 0 || p.device != q.device) return false;
  const auto p0 = reinterpret_cast<std::uintptr_t>(p.data), q0 = reinterpret_cast<std::uintptr_t>(q.data);
  return p0 < q0 + static_cast<std::uintptr_t>(q.span_bytes()) && q0 < p0 + static_cast<std::uintptr_t>(p.span_bytes());
}

bool is_half(DType t) { return t == DType::f16 || t == DType::bf16; }

constexpr int kDimM = 0, kDimN = 1, kDimY16 = 2;

// y's dtype: f32, or a's dtype when y16 = 1 (f16 / bf16 inputs only).
DType y_dtype_of(const Problem& p) { return p.n_dims > kDimY16 && p.dims[kDimY16] == 1 ? p.dtype : DType::f32; }

Status dtype_error(const char* role, DType got, const std::string& expected) {
  return Status::fail(ErrorKind::dtype, std::string("gemv: argument '") + role + "' has dtype " +
                                            std::string(dtype_name(got)) + ", expected " + expected);
}

Status make_gemv_problem(const OpSchema& s, const Args& args, Problem& p) {
  const TensorRef& a = args.tensor(0);
  const TensorRef& x = args.tensor(1);
  const TensorRef& y = args.tensor(2);
  if (a.dtype != DType::f32 && !is_half(a.dtype)) return dtype_error("a", a.dtype, "f32, f16 or bf16");
  const std::string a_type(dtype_name(a.dtype));
  if (x.dtype != a.dtype) return dtype_error("x", x.dtype, a_type + " (the dtype of a: a and x share one dtype)");
  if (y.dtype != DType::f32 && y.dtype != a.dtype)
    return dtype_error("y", y.dtype, is_half(a.dtype) ? "f32 or " + a_type + " (f32 accumulation, written in f32 or "
                                                                                "the dtype of a)"
                                                      : std::string("f32"));
  if (Status st = expect_rank(s, args, 0, 2); !st.ok()) return st;
  const std::int64_t m = a.rows(), n = a.cols();
  if (Status st = expect_shape(s, args, 1, Shape::vector(n)); !st.ok()) return st;
  if (Status st = expect_shape(s, args, 2, Shape::vector(m)); !st.ok()) return st;
  // The kernels read A and x while writing y: an aliased y would be read half-updated.
  if (overlap(y, a) || overlap(y, x))
    return Status::fail(ErrorKind::argument, "gemv: argument 'y' overlaps 'a' or 'x' in memory");
  p.dtype = a.dtype;
  p.n_dims = 3;
  p.dims[kDimM] = m;
  p.dims[kDimN] = n;
  p.dims[kDimY16] = is_half(a.dtype) && y.dtype == a.dtype ? 1 : 0;
  return Status::success();
}

Status gemv_tensor_specs(const Problem& p, std::vector<TensorSpec>& specs) {
  if (p.n_dims != 3 || p.dims[kDimM] < 0 || p.dims[kDimN] < 0)
    return Status::fail(ErrorKind::shape, "gemv: a problem needs dims m >= 0, n >= 0 and y16");
  if (p.dims[kDimY16] != 0 && p.dims[kDimY16] != 1)
    return Status::fail(ErrorKind::shape, "gemv: dim y16 is 0 or 1, got " + std::to_string(p.dims[kDimY16]));
  if (p.dims[kDimY16] == 1 && !is_half(p.dtype))
    return Status::fail(ErrorKind::shape, "gemv: y16 = 1 needs f16 or bf16 inputs, this problem has " +
                                              std::string(dtype_name(p.dtype)));
  const std::int64_t m = p.dims[kDimM], n = p.dims[kDimN];
  specs = {{p.dtype, Shape::matrix(m, n)}, {p.dtype, Shape::vector(n)}, {y_dtype_of(p), Shape::vector(m)}};
  return Status::success();
}

// y[i] as the reference writes it: row i of a times x in double, rounded to f32, then to y's dtype.
double reference_row(const Args& in, const Problem& p, std::int64_t i) {
  const TensorRef& a = in.tensor(0);
  const TensorRef& x = in.tensor(1);
  double acc = 0.0;
  for (std::int64_t j = 0; j < a.cols(); ++j) acc += load_element(a, 0, i, j) * load_element(x, 0, 0, j);
  const float f = static_cast<float>(acc);
  switch (y_dtype_of(p)) {
    case DType::f16: return static_cast<double>(f16_to_float(float_to_f16(f)));
    case DType::bf16: return static_cast<double>(bf16_to_float(float_to_bf16(f)));
    default: return static_cast<double>(f);
  }
}

}  // namespace

std::shared_ptr<const OpSchema> make_gemv_schema() {
  auto s = std::make_shared<OpSchema>();
  s->name = "gemv";
  s->summary = "y = A x; A [m, n] row-major with row stride, x [n], y [m]; f32, or f16 / bf16 A and x with f32 "
               "accumulation and y in f32 or the input type";
  s->tensors = {{"a", Role::input}, {"x", Role::input}, {"y", Role::output}};
  s->dim_names = {"m", "n", "y16"};
  // "16384x16384" means y in f32; y16=1 writes y in the f16 / bf16 input type.
  s->dim_defaults = {{"y16", 0}};
  s->mode_dims = {"y16"};
  s->dtypes = {DType::f32, DType::f16, DType::bf16};
  s->work_unit = WorkUnit::byte;
  // The registry owns the schema and outlives every call, so the raw pointer stays valid (a
  // shared_ptr here would be a cycle).
  const OpSchema* self = s.get();
  s->make_problem = [self](const Args& args, Problem& p) { return make_gemv_problem(*self, args, p); };
  s->tensor_specs = gemv_tensor_specs;
  s->reference = gemv_reference;
  // y[i] as the reference writes it: O(n) (the tuner's oracle check).
  s->reference_element = [](const Args& in, const Problem& p, int, std::int64_t, std::int64_t i) {
    return reference_row(in, p, i);
  };
  // A read once, x once, y written once.
  s->work = [](const Problem& p) {
    const double m = static_cast<double>(p.dims[kDimM]), n = static_cast<double>(p.dims[kDimN]);
    return (m * n + n) * static_cast<double>(dtype_size(p.dtype)) + m * static_cast<double>(dtype_size(y_dtype_of(p)));
  };
  // f32: 1e-4 (unchanged).  f16 / bf16: the inputs and their products are exact in f32, so the
  // error is the f32 accumulation over n terms plus y's rounding (accumulation_tolerance:
  // 2 u(y) + 8 sqrt(n) 2^-24, at least 1e-4; n = 16384: 1e-4 for f32 y, 7.8e-3 for bf16 y).
  s->tolerance = [](const Problem& p) {
    return p.dtype == DType::f32 ? 1e-4 : accumulation_tolerance(y_dtype_of(p), p.dims[kDimN]);
  };
  return s;
}

}  // namespace kiln::gemv
