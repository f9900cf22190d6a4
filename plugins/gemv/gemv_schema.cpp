#include "gemv_schema.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "gemv_reference.hpp"

namespace kiln::gemv {
namespace {

// Byte ranges of two views overlap (same device, both non-empty).
bool overlap(const TensorRef& p, const TensorRef& q) {
  if (p.numel() == 0 || q.numel() == 0 || p.device != q.device) return false;
  const auto p0 = reinterpret_cast<std::uintptr_t>(p.data), q0 = reinterpret_cast<std::uintptr_t>(q.data);
  return p0 < q0 + static_cast<std::uintptr_t>(q.span_bytes()) && q0 < p0 + static_cast<std::uintptr_t>(p.span_bytes());
}

Status make_gemv_problem(const OpSchema& s, const Args& args, Problem& p) {
  for (int i = 0; i < 3; ++i)
    if (Status st = expect_dtype(s, args, i, DType::f32); !st.ok()) return st;
  if (Status st = expect_rank(s, args, 0, 2); !st.ok()) return st;
  const std::int64_t m = args.tensor(0).rows(), n = args.tensor(0).cols();
  if (Status st = expect_shape(s, args, 1, Shape::vector(n)); !st.ok()) return st;
  if (Status st = expect_shape(s, args, 2, Shape::vector(m)); !st.ok()) return st;
  // The kernels read A and x while writing y: an aliased y would be read half-updated.
  if (overlap(args.tensor(2), args.tensor(0)) || overlap(args.tensor(2), args.tensor(1)))
    return Status::fail(ErrorKind::argument, "gemv: argument 'y' overlaps 'a' or 'x' in memory");
  p.dtype = DType::f32;
  p.n_dims = 2;
  p.dims[0] = m;
  p.dims[1] = n;
  return Status::success();
}

Status gemv_tensor_specs(const Problem& p, std::vector<TensorSpec>& specs) {
  if (p.n_dims != 2 || p.dims[0] < 0 || p.dims[1] < 0)
    return Status::fail(ErrorKind::shape, "gemv: a problem needs dims m >= 0 and n >= 0");
  const std::int64_t m = p.dims[0], n = p.dims[1];
  specs = {{DType::f32, Shape::matrix(m, n)}, {DType::f32, Shape::vector(n)}, {DType::f32, Shape::vector(m)}};
  return Status::success();
}

}  // namespace

std::shared_ptr<const OpSchema> make_gemv_schema() {
  auto s = std::make_shared<OpSchema>();
  s->name = "gemv";
  s->summary = "y = A x (f32); A [m, n] row-major with row stride, x [n], y [m]";
  s->tensors = {{"a", Role::input}, {"x", Role::input}, {"y", Role::output}};
  s->dim_names = {"m", "n"};
  s->dtypes = {DType::f32};
  s->work_unit = WorkUnit::byte;
  // The registry owns the schema and outlives every call, so the raw pointer stays valid (a
  // shared_ptr here would be a cycle).
  const OpSchema* self = s.get();
  s->make_problem = [self](const Args& args, Problem& p) { return make_gemv_problem(*self, args, p); };
  s->tensor_specs = gemv_tensor_specs;
  s->reference = gemv_reference;
  // A read once, x once, y written once.
  // y[i] as the reference writes it (a row of a times x in double, rounded to f32): O(n).
  s->reference_element = [](const Args& in, const Problem&, int, std::int64_t, std::int64_t i) {
    const TensorRef& a = in.tensor(0);
    const float* row = a.as<const float>() + i * a.row_stride;
    const float* x = in.tensor(1).as<const float>();
    double acc = 0.0;
    for (std::int64_t j = 0; j < a.cols(); ++j) acc += static_cast<double>(row[j]) * static_cast<double>(x[j]);
    return static_cast<double>(static_cast<float>(acc));
  };
  s->work = [](const Problem& p) {
    const double m = static_cast<double>(p.dims[0]), n = static_cast<double>(p.dims[1]);
    return (m * n + n + m) * 4.0;
  };
  s->tolerance = [](const Problem&) { return 1e-4; };
  return s;
}

}  // namespace kiln::gemv
