#include "reduction_schema.hpp"

#include <string>
#include <vector>

#include "reduction_reference.hpp"

namespace kiln::reduction {
namespace {

std::string dtype_str(DType t) { return std::string(dtype_name(t)); }

bool is_half(DType t) { return t == DType::f16 || t == DType::bf16; }

Status dtype_error(const char* op, const char* role, DType got, const std::string& expected) {
  return Status::fail(ErrorKind::dtype, std::string(op) + ": " + role + " has dtype " + dtype_str(got) +
                                            "; expected " + expected);
}

// The out16 mode dim: 1 when out has the (16-bit) input dtype, 0 when it is f32 or the f32/i32
// input's own dtype.  Half inputs always accumulate in f32.
constexpr int kDimN = 0, kDimOut16 = 1;

// out's dtype: f32 or i32 inputs write their own dtype; f16/bf16 inputs write f32 or their own.
Status check_out_dtype(const char* op, DType in, const TensorRef& out) {
  if (out.dtype == in) return Status::success();
  if (is_half(in) && out.dtype == DType::f32) return Status::success();
  return dtype_error(op, "out", out.dtype,
                     is_half(in) ? "f32 or " + dtype_str(in) + " (f32 accumulation, written in f32 or the dtype of x)"
                                 : dtype_str(in) + " (the dtype of x)");
}

DType out_dtype_of(const Problem& p) {
  return is_half(p.dtype) && p.n_dims > kDimOut16 && p.dims[kDimOut16] == 0 ? DType::f32 : p.dtype;
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

// The CUDA variants zero `out` before they accumulate into it, so an input that is the very same
// view as `out` (n == 1) would be read as 0; the core lets the very same view through to the schema.
Status refuse_in_place(const char* op, const TensorRef& out, const TensorRef& input, const char* role) {
  if (!same_view(out, input)) return Status::success();
  return Status::fail(ErrorKind::argument, std::string(op) + ": argument 'out' is the very same view as argument '" +
                                               role + "': " + op + " cannot run in place (give it an output of its own)");
}

Status make_dot_problem(const Args& args, Problem& p) {
  if (args.tensor_count() != 3)
    return Status::fail(ErrorKind::argument,
                        "dot: expected 3 tensors (x, y, out), got " + std::to_string(args.tensor_count()));
  const TensorRef& x = args.tensor(0);
  const TensorRef& y = args.tensor(1);
  const TensorRef& out = args.tensor(2);
  if (x.dtype != DType::f32 && !is_half(x.dtype)) return dtype_error("dot", "x", x.dtype, "f32, f16 or bf16");
  if (y.dtype != x.dtype)
    return dtype_error("dot", "y", y.dtype, dtype_str(x.dtype) + " (the dtype of x: x and y share one dtype)");
  if (Status s = check_out_dtype("dot", x.dtype, out); !s.ok()) return s;
  if (Status s = check_vector("dot", "x", x); !s.ok()) return s;
  if (y.shape != x.shape) return shape_error("dot", "y", y.shape, x.shape.to_string() + " (the length of x)");
  if (Status s = check_out("dot", out); !s.ok()) return s;
  if (Status s = refuse_in_place("dot", out, x, "x"); !s.ok()) return s;
  if (Status s = refuse_in_place("dot", out, y, "y"); !s.ok()) return s;
  p.dtype = x.dtype;
  p.n_dims = 2;
  p.dims[kDimN] = x.numel();
  p.dims[kDimOut16] = is_half(x.dtype) && out.dtype == x.dtype ? 1 : 0;
  return Status::success();
}

Status make_sum_problem(const Args& args, Problem& p) {
  if (args.tensor_count() != 2)
    return Status::fail(ErrorKind::argument,
                        "reduce_sum: expected 2 tensors (x, out), got " + std::to_string(args.tensor_count()));
  const TensorRef& x = args.tensor(0);
  const TensorRef& out = args.tensor(1);
  if (x.dtype != DType::f32 && x.dtype != DType::i32 && !is_half(x.dtype))
    return dtype_error("reduce_sum", "x", x.dtype, "f32, i32, f16 or bf16");
  if (Status s = check_out_dtype("reduce_sum", x.dtype, out); !s.ok()) return s;
  if (Status s = check_vector("reduce_sum", "x", x); !s.ok()) return s;
  if (Status s = check_out("reduce_sum", out); !s.ok()) return s;
  if (Status s = refuse_in_place("reduce_sum", out, x, "x"); !s.ok()) return s;
  p.dtype = x.dtype;
  p.n_dims = 2;
  p.dims[kDimN] = x.numel();
  p.dims[kDimOut16] = is_half(x.dtype) && out.dtype == x.dtype ? 1 : 0;
  return Status::success();
}

Status check_problem(const char* op, const Problem& p) {
  if (p.n_dims != 2 || p.dims[kDimN] < 0)
    return Status::fail(ErrorKind::shape, std::string(op) + ": a problem needs dims n >= 0 and out16");
  if (p.dims[kDimOut16] != 0 && p.dims[kDimOut16] != 1)
    return Status::fail(ErrorKind::shape, std::string(op) + ": dim out16 is 0 or 1, got " + std::to_string(p.dims[kDimOut16]));
  if (p.dims[kDimOut16] == 1 && !is_half(p.dtype))
    return Status::fail(ErrorKind::shape, std::string(op) + ": out16 = 1 needs f16 or bf16 inputs, this problem has " +
                                              dtype_str(p.dtype));
  return Status::success();
}

Status dot_specs(const Problem& p, std::vector<TensorSpec>& specs) {
  if (Status s = check_problem("dot", p); !s.ok()) return s;
  specs = {{p.dtype, Shape::vector(p.dims[kDimN])}, {p.dtype, Shape::vector(p.dims[kDimN])},
           {out_dtype_of(p), Shape::vector(1)}};
  return Status::success();
}

Status sum_specs(const Problem& p, std::vector<TensorSpec>& specs) {
  if (Status s = check_problem("reduce_sum", p); !s.ok()) return s;
  specs = {{p.dtype, Shape::vector(p.dims[kDimN])}, {out_dtype_of(p), Shape::vector(1)}};
  return Status::success();
}

// f32 and i32 keep their contracts (1e-4, exact).  Half inputs are exact in f32 and so are their
// products (11 + 11 significant bits fit f32's 24), so the error is the f32 accumulation's plus
// the output rounding: accumulation_tolerance (core: 2 u(out) + 8 sqrt(n) 2^-24, at least 1e-4),
// e.g. n = 2^28: 1.6e-2 with bf16 out, 8.8e-3 with f16 out, 7.8e-3 with f32 out; n = 4099: 1e-4
// with f32 out, 7.8e-3 bf16.
double half_tolerance(const Problem& p) { return accumulation_tolerance(out_dtype_of(p), p.dims[kDimN]); }

}  // namespace

std::shared_ptr<const OpSchema> make_dot_schema() {
  auto s = std::make_shared<OpSchema>();
  s->name = "dot";
  s->summary = "out[0] = sum x[i] * y[i] (f32, f16 or bf16 vectors; f32 accumulation; out f32 or the input type)";
  s->tensors = {{"x", Role::input}, {"y", Role::input}, {"out", Role::output}};
  s->dim_names = {"n", "out16"};
  // "268435456" means out in f32 (or the f32 input's own dtype); out16=1 writes f16/bf16.
  s->dim_defaults = {{"out16", 0}};
  s->mode_dims = {"out16"};
  s->dtypes = {DType::f32, DType::f16, DType::bf16};
  s->work_unit = WorkUnit::byte;
  s->make_problem = make_dot_problem;
  s->tensor_specs = dot_specs;
  s->reference = dot_reference;
  s->work = [](const Problem& p) {
    return 2.0 * static_cast<double>(p.dims[kDimN]) * static_cast<double>(dtype_size(p.dtype));
  };
  s->tolerance = [](const Problem& p) { return is_half(p.dtype) ? half_tolerance(p) : 1e-4; };
  // The same distributions as fill_input, drawn in place on the GPU by the tuner.
  s->input_distribution = [](const Problem& p, int) {
    return is_half(p.dtype) ? InputDistribution::real(-1.0, 1.0) : InputDistribution::real(0.0, 1.0);
  };
  // f32: uniform [0, 1), all terms positive, so the sum is well conditioned.  f16/bf16: uniform
  // [-1, 1), rounded: signed, so an f16 result stays far below 65504 at any n.
  s->fill_input = [](const Problem& p, int tensor_index, const TensorRef& host, std::uint64_t seed) {
    if (is_half(p.dtype))
      default_fill(host, mix_seed(seed, tensor_index));
    else
      fill_unit_interval(host, mix_seed(seed, tensor_index));
  };
  return s;
}

std::shared_ptr<const OpSchema> make_reduce_sum_schema() {
  auto s = std::make_shared<OpSchema>();
  s->name = "reduce_sum";
  s->summary = "out[0] = sum x[i] (f32; i32 wrapping modulo 2^32; f16 or bf16 with f32 accumulation, out f32 or the "
               "input type)";
  s->tensors = {{"x", Role::input}, {"out", Role::output}};
  s->dim_names = {"n", "out16"};
  s->dim_defaults = {{"out16", 0}};
  s->mode_dims = {"out16"};
  s->dtypes = {DType::f32, DType::i32, DType::f16, DType::bf16};
  s->work_unit = WorkUnit::byte;
  s->make_problem = make_sum_problem;
  s->tensor_specs = sum_specs;
  s->reference = reduce_sum_reference;
  s->work = [](const Problem& p) {
    return static_cast<double>(p.dims[kDimN]) * static_cast<double>(dtype_size(p.dtype));
  };
  s->tolerance = [](const Problem& p) {
    return p.dtype == DType::i32 ? 0.0 : is_half(p.dtype) ? half_tolerance(p) : 1e-4;
  };
  s->input_distribution = [](const Problem& p, int) {
    return p.dtype == DType::f32 ? InputDistribution::real(0.0, 1.0) : InputDistribution::default_for(p.dtype);
  };
  // f32: uniform [0, 1) (well conditioned); i32: kiln's default, uniform [-1000, 1000]; f16/bf16:
  // kiln's default, uniform [-1, 1) rounded (signed: an f16 sum stays far below 65504).
  s->fill_input = [](const Problem& p, int tensor_index, const TensorRef& host, std::uint64_t seed) {
    if (p.dtype != DType::f32)
      default_fill(host, mix_seed(seed, tensor_index));
    else
      fill_unit_interval(host, mix_seed(seed, tensor_index));
  };
  return s;
}

}  // namespace kiln::reduction
