#include "reduction_schema.hpp"

#include <string>
#include <vector>

#include "reduction_reference.hpp"

namespace kiln::reduction {
namespace {

std::string dtype_str(DType t) { return std::string(dtype_name(t)); }

Status dtype_error(const char* op, const char* role, DType got, const std::string& expected) {
  return Status::fail(ErrorKind::dtype, std::string(op) + ": " + role + " has dtype " + dtype_str(got) +
                                            "; expected " + expected);
}

Status shape_error(const char* op, const char* role, const Shape& got, const std::string& expected) {
  return Status::fail(ErrorKind::shape, std::string(op) + ": " + role + " has shape " + got.to_string() +
                                            "; expected " + expected);
}

// x (and y) must be vectors [n]; out the one-element vector [1].
Status check_vector(const char* op, const char* role, const TensorRef& t) {
  if (t.shape.rank != 1) return shape_error(op, role, t.shape, "a vector [n] (rank 1)");
  return Status::success();
}

Status check_out(const char* op, const TensorRef& out) {
  if (out.shape != Shape::vector(1)) return shape_error(op, "out", out.shape, "[1]");
  return Status::success();
}

Status make_dot_problem(const Args& args, Problem& p) {
  if (args.tensor_count() != 3)
    return Status::fail(ErrorKind::argument,
                        "dot: expected 3 tensors (x, y, out), got " + std::to_string(args.tensor_count()));
  const TensorRef& x = args.tensor(0);
  const TensorRef& y = args.tensor(1);
  const TensorRef& out = args.tensor(2);
  if (x.dtype != DType::f32) return dtype_error("dot", "x", x.dtype, "f32");
  if (y.dtype != DType::f32) return dtype_error("dot", "y", y.dtype, "f32");
  if (out.dtype != DType::f32) return dtype_error("dot", "out", out.dtype, "f32");
  if (Status s = check_vector("dot", "x", x); !s.ok()) return s;
  if (y.shape != x.shape) return shape_error("dot", "y", y.shape, x.shape.to_string() + " (the length of x)");
  if (Status s = check_out("dot", out); !s.ok()) return s;
  p.dtype = DType::f32;
  p.n_dims = 1;
  p.dims[0] = x.numel();
  return Status::success();
}

Status make_sum_problem(const Args& args, Problem& p) {
  if (args.tensor_count() != 2)
    return Status::fail(ErrorKind::argument,
                        "reduce_sum: expected 2 tensors (x, out), got " + std::to_string(args.tensor_count()));
  const TensorRef& x = args.tensor(0);
  const TensorRef& out = args.tensor(1);
  if (x.dtype != DType::f32 && x.dtype != DType::i32) return dtype_error("reduce_sum", "x", x.dtype, "f32 or i32");
  if (out.dtype != x.dtype) return dtype_error("reduce_sum", "out", out.dtype, dtype_str(x.dtype) + " (the dtype of x)");
  if (Status s = check_vector("reduce_sum", "x", x); !s.ok()) return s;
  if (Status s = check_out("reduce_sum", out); !s.ok()) return s;
  p.dtype = x.dtype;
  p.n_dims = 1;
  p.dims[0] = x.numel();
  return Status::success();
}

Status check_problem(const char* op, const Problem& p) {
  if (p.n_dims != 1 || p.dims[0] < 0)
    return Status::fail(ErrorKind::shape, std::string(op) + ": a problem needs one dim n >= 0");
  return Status::success();
}

Status dot_specs(const Problem& p, std::vector<TensorSpec>& specs) {
  if (Status s = check_problem("dot", p); !s.ok()) return s;
  specs = {{DType::f32, Shape::vector(p.dims[0])}, {DType::f32, Shape::vector(p.dims[0])},
           {DType::f32, Shape::vector(1)}};
  return Status::success();
}

Status sum_specs(const Problem& p, std::vector<TensorSpec>& specs) {
  if (Status s = check_problem("reduce_sum", p); !s.ok()) return s;
  specs = {{p.dtype, Shape::vector(p.dims[0])}, {p.dtype, Shape::vector(1)}};
  return Status::success();
}

}  // namespace

std::shared_ptr<const OpSchema> make_dot_schema() {
  auto s = std::make_shared<OpSchema>();
  s->name = "dot";
  s->summary = "out[0] = sum x[i] * y[i] (f32 vectors)";
  s->tensors = {{"x", Role::input}, {"y", Role::input}, {"out", Role::output}};
  s->dim_names = {"n"};
  s->dtypes = {DType::f32};
  s->work_unit = WorkUnit::byte;
  s->make_problem = make_dot_problem;
  s->tensor_specs = dot_specs;
  s->reference = dot_reference;
  s->work = [](const Problem& p) { return 2.0 * static_cast<double>(p.dims[0]) * 4.0; };
  s->tolerance = [](const Problem&) { return 1e-4; };
  // The same distributions as fill_input, drawn in place on the GPU by the tuner.
  s->input_distribution = [](const Problem&, int) { return InputDistribution::real(0.0, 1.0); };
  // Uniform [0, 1): all terms positive, so the sum is well conditioned.
  s->fill_input = [](const Problem&, int tensor_index, const TensorRef& host, std::uint64_t seed) {
    fill_unit_interval(host, mix_seed(seed, tensor_index));
  };
  return s;
}

std::shared_ptr<const OpSchema> make_reduce_sum_schema() {
  auto s = std::make_shared<OpSchema>();
  s->name = "reduce_sum";
  s->summary = "out[0] = sum x[i] (f32, or i32 wrapping modulo 2^32)";
  s->tensors = {{"x", Role::input}, {"out", Role::output}};
  s->dim_names = {"n"};
  s->dtypes = {DType::f32, DType::i32};
  s->work_unit = WorkUnit::byte;
  s->make_problem = make_sum_problem;
  s->tensor_specs = sum_specs;
  s->reference = reduce_sum_reference;
  s->work = [](const Problem& p) {
    return static_cast<double>(p.dims[0]) * static_cast<double>(dtype_size(p.dtype));
  };
  s->tolerance = [](const Problem& p) { return p.dtype == DType::i32 ? 0.0 : 1e-4; };
  s->input_distribution = [](const Problem& p, int) {
    return p.dtype == DType::i32 ? InputDistribution::default_for(DType::i32) : InputDistribution::real(0.0, 1.0);
  };
  // f32: uniform [0, 1) (well conditioned); i32: kiln's default, uniform [-1000, 1000].
  s->fill_input = [](const Problem& p, int tensor_index, const TensorRef& host, std::uint64_t seed) {
    if (p.dtype == DType::i32)
      default_fill(host, mix_seed(seed, tensor_index));
    else
      fill_unit_interval(host, mix_seed(seed, tensor_index));
  };
  return s;
}

}  // namespace kiln::reduction
