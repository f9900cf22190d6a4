#include "add_schema.hpp"

#include <cstdint>
#include <string>

#include "add_reference.hpp"

namespace kiln::elementwise {
namespace {

const char* const kRoles[3] = {"a", "b", "c"};

bool accepted_dtype(DType t) {
  return t == DType::f32 || t == DType::f64 || t == DType::i32 || t == DType::f16 || t == DType::bf16;
}

Status make_add_problem(const Args& args, Problem& p) {
  if (args.tensor_count() != 3)
    return Status::fail(ErrorKind::argument,
                        "add: expected 3 tensors (a, b, c), got " + std::to_string(args.tensor_count()));
  const TensorRef& a = args.tensor(0);
  if (!accepted_dtype(a.dtype))
    return Status::fail(ErrorKind::dtype, "add: a has dtype " + std::string(dtype_name(a.dtype)) +
                                              "; expected one of f32, f64, i32, f16, bf16");
  if (a.shape.rank != 1 && a.shape.rank != 2)
    return Status::fail(ErrorKind::shape, "add: a must have rank 1 [n] or rank 2 [m x n], got rank " +
                                              std::to_string(a.shape.rank));
  for (int i = 0; i < 3; ++i) {
    const TensorRef& t = args.tensor(i);
    if (t.dtype != a.dtype)
      return Status::fail(ErrorKind::dtype, std::string("add: ") + kRoles[i] + " has dtype " +
                                                std::string(dtype_name(t.dtype)) + "; expected " +
                                                std::string(dtype_name(a.dtype)) + " (the dtype of a)");
    if (t.shape != a.shape)
      return Status::fail(ErrorKind::shape, std::string("add: ") + kRoles[i] + " has shape " + t.shape.to_string() +
                                                "; expected " + a.shape.to_string() + " (the shape of a)");
    if (t.shape.rank == 2 && t.row_stride < t.cols())
      return Status::fail(ErrorKind::shape, std::string("add: ") + kRoles[i] + " has row stride " +
                                                std::to_string(t.row_stride) + ", smaller than its " +
                                                std::to_string(t.cols()) + " columns");
  }
  p.dtype = a.dtype;
  p.n_dims = 2;
  p.dims[0] = a.rows();  // 1 for rank 1
  p.dims[1] = a.cols();
  return Status::success();
}

Status add_tensor_specs(const Problem& p, std::vector<TensorSpec>& specs) {
  if (p.n_dims != 2 || p.dims[0] < 0 || p.dims[1] < 0)
    return Status::fail(ErrorKind::shape, "add: a problem needs dims m >= 0 and n >= 0");
  const TensorSpec spec{p.dtype, Shape::matrix(p.dims[0], p.dims[1])};
  specs.assign(3, spec);
  return Status::success();
}

}  // namespace

std::shared_ptr<const OpSchema> make_add_schema() {
  auto s = std::make_shared<OpSchema>();
  s->name = "add";
  s->summary = "c = a + b, elementwise (f16/bf16 added in fp32); rank 1 or 2, row strides honoured";
  s->tensors = {{"a", Role::input}, {"b", Role::input}, {"c", Role::output}};
  s->dim_names = {"m", "n"};
  s->dtypes = {DType::f32, DType::f64, DType::i32, DType::f16, DType::bf16};
  s->work_unit = WorkUnit::byte;
  s->make_problem = make_add_problem;
  s->tensor_specs = add_tensor_specs;
  s->reference = add_reference;
  // c[r][j] as the reference writes it (i32 wraps modulo 2^32).
  s->reference_element = [](const Args& in, const Problem& p, int, std::int64_t r, std::int64_t j) -> double {
    const TensorRef& a = in.tensor(0);
    const TensorRef& b = in.tensor(1);
    const std::int64_t ia = r * a.row_stride + j, ib = r * b.row_stride + j;
    switch (p.dtype) {
      case DType::f64: return a.as<const double>()[ia] + b.as<const double>()[ib];
      case DType::f16:
      case DType::bf16:
        return add_half_element(p.dtype, a.as<const std::uint16_t>()[ia], b.as<const std::uint16_t>()[ib]);
      case DType::i32:
        return static_cast<std::int32_t>(static_cast<std::uint32_t>(a.as<const std::int32_t>()[ia]) +
                                         static_cast<std::uint32_t>(b.as<const std::int32_t>()[ib]));
      default: return static_cast<double>(a.as<const float>()[ia] + b.as<const float>()[ib]);
    }
  };
  // Two reads and one write per element.
  s->work = [](const Problem& p) {
    return 3.0 * static_cast<double>(p.dims[0]) * static_cast<double>(p.dims[1]) *
           static_cast<double>(dtype_size(p.dtype));
  };
  // a + b is one rounding per element, done the same way on the host and the GPU; the ops contract
  // allows 1e-7 for f32 and f64 all the same, and one unit roundoff of the output for f16 and
  // bf16 (2^-11, 2^-8: room for a vendor baseline that rounds a tie differently).
  s->tolerance = [](const Problem& p) {
    if (p.dtype == DType::i32) return 0.0;
    if (p.dtype == DType::f16 || p.dtype == DType::bf16) return unit_roundoff(p.dtype);
    return 1e-7;
  };
  return s;
}

}  // namespace kiln::elementwise
