#include "transpose_schema.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "transpose_reference.hpp"

namespace kiln::transpose {
namespace {

// Byte ranges of two views overlap (same device, both non-empty).
bool overlap(const TensorRef& p, const TensorRef& q) {
  if (p.numel() == 0 || q.numel() == 0 || p.device != q.device) return false;
  const auto p0 = reinterpret_cast<std::uintptr_t>(p.data), q0 = reinterpret_cast<std::uintptr_t>(q.data);
  return p0 < q0 + static_cast<std::uintptr_t>(q.span_bytes()) && q0 < p0 + static_cast<std::uintptr_t>(p.span_bytes());
}

bool accepted_dtype(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::i32; }

// A layout the kernels read: a unit column stride (row-major, rows may be padded) or a unit row
// stride (column-major: a transposed view).  One row or one column has either.
bool has_unit_stride(const TensorRef& t) { return t.row_major() || t.rows() <= 1 || t.row_stride == 1; }

Status make_transpose_problem(const OpSchema& s, const Args& args, Problem& p) {
  const TensorRef& in = args.tensor(0);
  if (!accepted_dtype(in.dtype))
    return Status::fail(ErrorKind::dtype, "transpose: argument 'in' has dtype " + std::string(dtype_name(in.dtype)) +
                                              "; expected one of f32, f16, bf16, i32");
  if (Status st = expect_dtype(s, args, 1, in.dtype); !st.ok())
    return Status::fail(ErrorKind::dtype, st.message() + " (the dtype of 'in')");
  if (Status st = expect_rank(s, args, 0, 2); !st.ok()) return st;
  const std::int64_t m = in.rows(), n = in.cols();
  if (Status st = expect_shape(s, args, 1, Shape::matrix(n, m)); !st.ok()) return st;
  const char* const names[2] = {"in", "out"};
  for (int i = 0; i < 2; ++i) {
    const TensorRef& t = args.tensor(i);
    if (!has_unit_stride(t))
      return Status::fail(ErrorKind::shape, std::string("transpose: argument '") + names[i] + "' has row stride " +
                                                std::to_string(t.row_stride) + " and column stride " +
                                                std::to_string(t.col_stride) +
                                                "; expected a row-major (column stride 1) or column-major (row "
                                                "stride 1) view");
  }
  if (overlap(args.tensor(0), args.tensor(1)))
    return Status::fail(ErrorKind::argument, "transpose: arguments 'in' and 'out' overlap in memory "
                                             "(in-place transpose is not supported)");
  p.dtype = in.dtype;
  p.n_dims = 2;
  p.dims[0] = m;
  p.dims[1] = n;
  return Status::success();
}

Status transpose_tensor_specs(const Problem& p, std::vector<TensorSpec>& specs) {
  if (p.n_dims != 2 || p.dims[0] < 0 || p.dims[1] < 0)
    return Status::fail(ErrorKind::shape, "transpose: a problem needs dims m >= 0 and n >= 0");
  const std::int64_t m = p.dims[0], n = p.dims[1];
  specs = {{p.dtype, Shape::matrix(m, n)}, {p.dtype, Shape::matrix(n, m)}};
  return Status::success();
}

}  // namespace

std::shared_ptr<const OpSchema> make_transpose_schema() {
  auto s = std::make_shared<OpSchema>();
  s->name = "transpose";
  s->summary = "out = in^T (f32, f16, bf16, i32); in [m, n], out [n, m], row- or column-major views, out of place";
  s->tensors = {{"in", Role::input}, {"out", Role::output}};
  s->dim_names = {"m", "n"};
  s->dtypes = {DType::f32, DType::f16, DType::bf16, DType::i32};
  // Transposed (column-major) views are accepted: one on either side makes the op a copy.
  s->strided_views = true;
  s->work_unit = WorkUnit::byte;
  // The registry owns the schema and outlives every call, so the raw pointer stays valid (a
  // shared_ptr here would be a cycle).
  const OpSchema* self = s.get();
  s->make_problem = [self](const Args& args, Problem& p) { return make_transpose_problem(*self, args, p); };
  s->tensor_specs = transpose_tensor_specs;
  s->reference = transpose_reference;
  // out[r][c] = in[c][r].
  s->reference_element = [](const Args& in, const Problem&, int, std::int64_t r, std::int64_t c) {
    return load_element(in.tensor(0), 0, c, r);
  };
  // Every element read once and written once.
  s->work = [](const Problem& p) {
    return 2.0 * static_cast<double>(p.dims[0]) * static_cast<double>(p.dims[1]) *
           static_cast<double>(dtype_size(p.dtype));
  };
  // A copy: exact.
  s->tolerance = [](const Problem&) { return 0.0; };
  return s;
}

}  // namespace kiln::transpose
