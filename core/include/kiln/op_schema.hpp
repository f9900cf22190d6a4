// OpSchema: the contract of one op name, shared by every variant of it (a family plugin, the
// vendor plugin, third-party plugins).  It names the argument roles, validates arguments into a
// Problem, and carries what the tuner and benchmarks need: the host reference, the tolerance per
// dtype, the work formula, input generation and the bucketing rule for unseen shapes.
//
// Schema functions run inside the plugin that registered them, so they return Status rather
// than throw (see errors.hpp).  Example (the add op, abridged):
//
//   auto s = std::make_shared<kiln::OpSchema>();
//   s->name = "add";
//   s->tensors = {{"a", kiln::Role::input}, {"b", kiln::Role::input}, {"c", kiln::Role::output}};
//   s->dim_names = {"m", "n"};
//   s->dtypes = {kiln::f32};
//   s->make_problem = [](const kiln::Args& args, kiln::Problem& p) {   // the real one checks b and c too
//     p.dtype = args.tensor(0).dtype;
//     p.n_dims = 2;
//     p.dims[0] = args.tensor(0).rows();
//     p.dims[1] = args.tensor(0).cols();
//     return kiln::Status::success();
//   };
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kiln/args.hpp"
#include "kiln/errors.hpp"
#include "kiln/input_distribution.hpp"
#include "kiln/problem.hpp"

namespace kiln {

enum class Role { input, output, inout };

struct TensorRole {
  std::string name;
  Role role = Role::input;
};

struct ScalarRole {
  std::string name;
  double default_value = 0.0;
};

enum class WorkUnit { flop, byte };

// The dtype and shape the tuner allocates for one tensor role of a problem.
struct TensorSpec {
  DType dtype = DType::f32;
  Shape shape;  // the logical shape the op sees (rank 3 for batches)
  // True: the tensor is passed as the transposed view of a dense row-major array of the swapped
  // shape (a column-major matrix), as ops with layout modes (gemm's ta, tb) expect.
  bool transposed = false;
};

struct OpSchema {
  std::string name;
  std::string summary;
  std::vector<TensorRole> tensors;
  std::vector<ScalarRole> scalars;
  std::vector<std::string> dim_names;  // the Problem's dims, in key order
  // Dims a shape string may leave out (e.g. gemm's tf32 = 0, topk's largest = 1).
  std::map<std::string, std::int64_t> dim_defaults;
  // Dims that are modes, not sizes (gemm's tf32 and layout flags, topk's largest: they change
  // what is computed or which variants are valid): dispatch matches them exactly and never takes
  // a "nearest" value; the dtype is always a mode.  Every other dim is a size, compared in log space (docs/architecture.md, "Dispatch").
  std::vector<std::string> mode_dims;
  std::vector<DType> dtypes;           // the problem dtypes this op accepts
  WorkUnit work_unit = WorkUnit::byte;
  // Whether make_problem handles general strides (a non-unit column stride: transposed and
  // column-major views) and rank-3 (batched) tensors.  When false the core rejects such
  // arguments before make_problem runs, naming the argument, so an op written for row-major
  // matrices never misreads a transposed view.
  bool strided_views = false;

  // Required.  Validates args (dtypes, shapes, strides) and fills p.dtype and p.dims; the core
  // has already checked the tensor count, nulls and that all tensors share one device, and fills
  // p.schema, p.device and p.align_bytes itself.
  std::function<Status(const Args& args, Problem& p)> make_problem;
  // Required.  Dense shapes and dtypes of the tensors of a problem (for the tuner and tests).
  std::function<Status(const Problem& p, std::vector<TensorSpec>& specs)> tensor_specs;
  // Required.  The host reference: computes the outputs of `args` (host memory) in place.
  std::function<Status(const Args& args, const Problem& p)> reference;
  // Required.  FLOP or bytes moved by one call, for throughput figures.
  std::function<double(const Problem& p)> work;
  // Relative error norm accepted for a problem; default by p.dtype: 1e-5 f32, 1e-12 f64,
  // 1e-2 f16/bf16, 0 for integers.
  std::function<double(const Problem& p)> tolerance;
  // Optional: scalars the tuner passes for a problem (default: the roles' defaults).
  std::function<void(const Problem& p, Args& args)> scalars_for;
  // Optional: fills input `tensor_index` (host memory) for a problem; default: uniform in [-1, 1)
  // for floats, [0, 255] for u8, [-1000, 1000] for signed ints.
  std::function<void(const Problem& p, int tensor_index, const TensorRef& host, std::uint64_t seed)> fill_input;
  // Optional, preferred over fill_input: the distribution of input `tensor_index`, drawn by
  // kiln::fill_random — on the device itself when the problem is on a GPU, so the tuner never
  // generates a large input on the host.  Default (neither set): InputDistribution::default_for.
  std::function<InputDistribution(const Problem& p, int tensor_index)> input_distribution;
  // Optional: compares outputs `got` with `expected` (both host); sets `error` to the relative
  // error measure compared with the tolerance; default: ||got - expected|| / ||expected|| over
  // every output, NaN or an unwritten (poisoned) element counting as infinite error.
  std::function<Status(const Args& got, const Args& expected, const Problem& p, double& error)> compare;
  // Optional: one element (row, col) of output `tensor_index` of the reference, in double, from
  // the inputs in `host` (in/out tensors hold their inputs).  With it the tuner may take a large
  // problem's expected outputs from a trusted variant run on the GPU (the oracle) and check that
  // oracle on a sample of elements, instead of running the whole host reference (gemm: O(k) per
  // element instead of O(m n k)).  See docs/tuning.md, "Inputs, reference and oracle".
  std::function<double(const Args& host, const Problem& p, int tensor_index, std::int64_t row, std::int64_t col)>
      reference_element;
  // Optional: the bucket of a problem for the tuning database's nearest-entry lookup; default:
  // the dtype, each size dim rounded to the nearest power of two and each mode dim exact.
  // (op() dispatch uses mode_dims and log-space distance instead; see dispatcher.hpp.)
  std::function<std::string(const Problem& p)> bucket;

  // Helpers implemented by the core ------------------------------------------------------------
  int dim_index(std::string_view dim) const;        // -1 when absent
  // A problem from positional extents in dim_names order; missing trailing dims take
  // dim_defaults, else it is an error.  The problem is then validated by the op itself: the
  // tensors tensor_specs() describes for it (their byte counts must fit in int64), with the
  // scalars scalars_for() gives, must make the same problem through make_problem().  So
  // make_problem() must reject every invalid problem, and scalars_for() must carry every mode
  // dim (tf32, largest, ...) into the scalar that make_problem() reads it from.
  // Throws ShapeError naming the expected dims or what the op rejected, DTypeError for a dtype
  // the op does not accept, DeviceError for a Device that Device::host() or Device::cuda(n) could
  // not give (the device itself need not be present).
  Problem problem_from_dims(DType dtype, const std::vector<std::int64_t>& dims, Device device) const;
  // Parses "4096x4096x4096" or "m=4096,n=4096,k=4096" (names may be mixed with positions; a dim
  // given twice is a ShapeError), then validates it like problem_from_dims.
  Problem problem_from_shape(DType dtype, std::string_view shape, Device device) const;
  // Throws like problem_from_dims unless `p` (a Problem filled in by hand, say) is one op() could
  // make for this op: schema == this, its dim count, a dtype it accepts, dims >= 0, a well-formed
  // device, and the same round trip through tensor_specs and make_problem.  Unlike
  // problem_from_dims it accepts an empty problem (every tensor empty), which op() runs as a
  // no-op.  Runtime::explain and Dispatcher::decide check hand-made problems with it.
  void check_problem(const Problem& p) const;
  std::string bucket_of(const Problem& p) const;    // bucket or the default rule
  bool is_mode_dim(int i) const;                    // dim i is listed in mode_dims
  // The problem's mode class: its dtype and mode dims, "f32|tf32=1".  Problems of one class are
  // the only ones dispatch compares by size.
  std::string mode_key(const Problem& p) const;
  double tolerance_for(const Problem& p) const;     // tolerance or the default rule
  std::string signature() const;                    // "gemm(a: in, b: in, c: inout; alpha=1, beta=0)"

 private:
  void check_dtype(DType dtype) const;
  void check_round_trip(const Problem& p, const std::string& what, bool allow_empty = false) const;
};

// Validation helpers for make_problem implementations (they return a failed Status whose
// message names the argument).
Status expect_dtype(const OpSchema& s, const Args& args, int index, DType expected);
Status expect_rank(const OpSchema& s, const Args& args, int index, int rank);
Status expect_shape(const OpSchema& s, const Args& args, int index, const Shape& expected);
Status expect_contiguous(const OpSchema& s, const Args& args, int index);

// Default fill / compare, usable from custom ones.  Both take any strides and rank 3.  The fill
// draws floats uniform in [-1, 1) and rounds them to f16 / bf16 to nearest even (kiln/half.hpp).
void default_fill(const TensorRef& host, std::uint64_t seed);
// Both tensors on the host, or both on one CUDA device (reduced there, no copy).
double relative_error(const TensorRef& got, const TensorRef& expected);  // inf on NaN/poison

// Host element access for references written in double: element (b, r, c) of a host view of any
// dtype, rank and strides.  store_element rounds to the view's dtype (f16 / bf16 through float,
// to nearest even; past the float range to +-infinity; integers truncate toward zero, and a NaN,
// an infinity or a value out of the integer type's range throws ArgumentError, writing nothing).
double load_element(const TensorRef& host, std::int64_t b, std::int64_t r, std::int64_t c);
void store_element(const TensorRef& host, std::int64_t b, std::int64_t r, std::int64_t c, double value);

// Unit roundoff of a floating dtype: 2^-24 f32, 2^-53 f64, 2^-11 f16, 2^-8 bf16 (0 for integers).
double unit_roundoff(DType t);
// The relative error norm accepted for a sum of `length` products accumulated in f32 and written
// in `out`: 2 * unit_roundoff(out) for rounding the result (the reference rounds too, so a
// correct kernel differs only where the two round a near-tie apart) plus 8 * sqrt(length) * 2^-24
// for the f32 accumulation of random-signed terms, and at least 1e-4 (the f32 gemm bound).
// bf16 output at length 8192: 7.9e-3; f16: 1.0e-3; f32: 1.0e-4.
double accumulation_tolerance(DType out, std::int64_t length);

}  // namespace kiln
