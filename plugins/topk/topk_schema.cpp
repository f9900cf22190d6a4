#include "topk_schema.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <kiln/dtype.hpp>
#include <kiln/errors.hpp>

#include "topk_key.hpp"
#include "topk_reference.hpp"

namespace kiln::topk {
namespace {

std::string shape_text(std::int64_t rows, std::int64_t cols, int rank) {
  return rank == 1 ? "[" + std::to_string(cols) + "]" : "[" + std::to_string(rows) + "x" + std::to_string(cols) + "]";
}

// Exact comparison: values bit for bit (any NaN equals any NaN), indices equal.  The error is
// the fraction of mismatched output elements.
Status compare_topk(const Args& got, const Args& expected, const Problem& p, double& error) {
  const std::int64_t rows = p.dims[0], k = p.dims[2];
  const KeyFormat format = p.dtype == f16 ? KeyFormat::f16 : p.dtype == bf16 ? KeyFormat::bf16 : KeyFormat::f32;
  const std::size_t size = dtype_size(p.dtype);
  auto bits = [size](const TensorRef& t, std::int64_t r, std::int64_t i) {
    const auto* at = static_cast<const unsigned char*>(t.data) + (r * t.row_stride + i) * std::int64_t(size);
    std::uint32_t b = 0;
    if (size == 4) {
      std::memcpy(&b, at, 4);
    } else {
      std::uint16_t h;
      std::memcpy(&h, at, 2);
      b = h;
    }
    return b;
  };
  std::int64_t bad = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int32_t* gi = got.tensor(2).as<const std::int32_t>() + r * got.tensor(2).row_stride;
    const std::int32_t* ei = expected.tensor(2).as<const std::int32_t>() + r * expected.tensor(2).row_stride;
    for (std::int64_t i = 0; i < k; ++i) {
      const std::uint32_t gb = bits(got.tensor(1), r, i), eb = bits(expected.tensor(1), r, i);
      const bool same_value = gb == eb || (is_nan_bits(gb, format) && is_nan_bits(eb, format));
      if (!same_value) ++bad;
      if (gi[i] != ei[i]) ++bad;
    }
  }
  const double total = double(rows) * double(k) * 2.0;
  error = total > 0 ? double(bad) / total : 0.0;
  return Status::success();
}

// Nearest power of two of an extent (log scale), for bucketing unseen shapes.
std::int64_t round_pow2(std::int64_t v) {
  if (v <= 1) return v < 1 ? 0 : 1;
  return std::int64_t(1) << std::int64_t(std::llround(std::log2(double(v))));
}

}  // namespace

std::shared_ptr<OpSchema> make_topk_schema() {
  auto s = std::make_shared<OpSchema>();
  const OpSchema* self = s.get();
  s->name = "topk";
  s->summary = "k best elements of each row, best first (ties: smaller index; NaN above +inf)";
  s->tensors = {{"x", Role::input}, {"values", Role::output}, {"indices", Role::output}};
  s->scalars = {{"largest", 1.0}};
  s->dim_names = {"rows", "n", "k", "largest"};
  s->dim_defaults = {{"largest", 1}};  // "1x67108864x100" means the largest 100
  s->mode_dims = {"largest"};
  s->dtypes = {f32, f16, bf16};
  s->work_unit = WorkUnit::byte;
  s->make_problem = [self](const Args& args, Problem& p) -> Status {
    const DType t = args.tensor(0).dtype;
    if (t != f32 && t != f16 && t != bf16) {
      return Status::fail(ErrorKind::dtype, "topk: x is " + std::string(dtype_name(t)) + "; expected f32, f16 or bf16");
    }
    Status st = expect_dtype(*self, args, 1, t);  // values: the dtype of x
    if (st.ok()) st = expect_dtype(*self, args, 2, i32);
    if (!st.ok()) return st;
    const TensorRef& x = args.tensor(0);
    const TensorRef& values = args.tensor(1);
    const int rank = x.shape.rank;
    if (rank != 1 && rank != 2) {
      return Status::fail(ErrorKind::shape, "topk: x is " + x.shape.to_string() + "; expected [rows x n] or [n]");
    }
    // k == n would write a row's values over the row while it is still being selected from; the
    // core lets the very same view through to the schema, as it does for add's in-place c == a.
    if (same_view(values, x)) {
      return Status::fail(ErrorKind::argument,
                          "topk: argument 'values' is the very same view as argument 'x': topk cannot run in place "
                          "(give it an output of its own)");
    }
    const std::int64_t rows = x.rows(), n = x.cols();
    if (values.shape.rank != rank || values.rows() != rows) {
      return Status::fail(ErrorKind::shape, "topk: values is " + values.shape.to_string() + "; expected " +
                                                shape_text(rows, values.cols(), rank) +
                                                " (rows of x by k, same rank as x)");
    }
    const std::int64_t k = values.cols();
    st = expect_shape(*self, args, 2, values.shape);
    if (!st.ok()) return st;
    if (k < 1 || k > n) {
      return Status::fail(ErrorKind::shape, "topk: k = " + std::to_string(k) +
                                                " (columns of values) must be between 1 and n = " + std::to_string(n) +
                                                " (columns of x)");
    }
    if (n > std::numeric_limits<std::int32_t>::max()) {
      return Status::fail(ErrorKind::shape, "topk: n = " + std::to_string(n) + " exceeds 2^31 - 1 (indices are i32)");
    }
    const double largest = args.scalar_count() > 0 ? args.scalar(0) : 1.0;
    if (largest != 0.0 && largest != 1.0) {
      return Status::fail(ErrorKind::argument,
                          "topk: scalar largest = " + scalar_text(largest) + "; expected 1 (largest) or 0 (smallest)");
    }
    p.dtype = t;
    p.n_dims = 4;
    p.dims[0] = rows;
    p.dims[1] = n;
    p.dims[2] = k;
    p.dims[3] = largest != 0.0 ? 1 : 0;
    return Status::success();
  };
  s->tensor_specs = [](const Problem& p, std::vector<TensorSpec>& specs) -> Status {
    specs = {{p.dtype, Shape::matrix(p.dims[0], p.dims[1])},
             {p.dtype, Shape::matrix(p.dims[0], p.dims[2])},
             {i32, Shape::matrix(p.dims[0], p.dims[2])}};
    return Status::success();
  };
  s->reference = topk_reference;
  s->work = [](const Problem& p) { return double(p.dims[0]) * double(p.dims[1]) * double(dtype_size(p.dtype)); };
  s->tolerance = [](const Problem&) { return 0.0; };
  s->compare = compare_topk;
  s->scalars_for = [](const Problem& p, Args& args) {
    if (args.scalar_count() < 1) args.resize_scalars(1);
    args.set_scalar(0, double(p.dims[3]));
  };
  s->bucket = [](const Problem& p) {
    return std::string(dtype_name(p.dtype)) + "|rows=" + std::to_string(round_pow2(p.dims[0])) + "|n=" + std::to_string(round_pow2(p.dims[1])) +
           "|k=" + std::to_string(round_pow2(p.dims[2])) + "|largest=" + std::to_string(p.dims[3]);
  };
  return s;
}

}  // namespace kiln::topk
