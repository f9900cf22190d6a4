#include "kiln/op_schema.hpp"

#include "device_compare.hpp"
#include "device_form.hpp"
#include "tuning_db_files.hpp"  // detail::printable

#include <charconv>
#include <cstdio>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kiln/half.hpp"

namespace kiln {
namespace {

std::string role_name(Role r) {
  switch (r) {
    case Role::input: return "in";
    case Role::output: return "out";
    case Role::inout: return "inout";
  }
  return "?";
}

std::string arg_name(const OpSchema& s, int index) {
  const std::string role = index < static_cast<int>(s.tensors.size()) ? s.tensors[index].name : "#" + std::to_string(index);
  return s.name + ": argument '" + role + "'";
}

// One element pair of relative_error: false when it makes the error infinite (NaN against a
// number, an unwritten element, a mismatched infinity).
inline bool add_error_term(double g, double e, double& diff2, double& ref2) {
  if (std::isnan(e) && std::isnan(g)) return true;
  if (std::isnan(g) || std::isnan(e) || std::isinf(g) != std::isinf(e)) return false;
  if (std::isinf(e)) return g == e;
  diff2 += (g - e) * (g - e);
  ref2 += e * e;
  return true;
}

template <class T>
bool accumulate_error(const TensorRef& got, const TensorRef& expected, double& diff2, double& ref2) {
  const std::int64_t rows = got.rows(), cols = got.cols();
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* g = static_cast<const T*>(got.data) + (got.shape.rank == 2 ? r * got.row_stride : 0);
    const T* e = static_cast<const T*>(expected.data) + (expected.shape.rank == 2 ? r * expected.row_stride : 0);
    for (std::int64_t c = 0; c < cols; ++c)
      if (!add_error_term(static_cast<double>(g[c]), static_cast<double>(e[c]), diff2, ref2)) return false;
  }
  return true;
}

// Any dtypes, strides and batches (f16/bf16, column-major and rank-3 views).
bool accumulate_error_any(const TensorRef& got, const TensorRef& expected, double& diff2, double& ref2) {
  for (std::int64_t b = 0; b < got.batch(); ++b)
    for (std::int64_t r = 0; r < got.rows(); ++r)
      for (std::int64_t c = 0; c < got.cols(); ++c)
        if (!add_error_term(load_element(got, b, r, c), load_element(expected, b, r, c), diff2, ref2)) return false;
  return true;
}

// A hand-made Device no factory gives (Device{host, 9}) is refused where the problem is made, not
// later where the problem is used.  The device need not exist: plans name GPUs this machine lacks.
void check_device_form(const std::string& op, Device device) {
  if (!detail::well_formed(device)) throw DeviceError(op + ": argument 'device'" + detail::malformed_device(device));
}

std::string extents_text(const std::vector<std::int64_t>& dims) {
  std::string text;
  for (std::size_t i = 0; i < dims.size(); ++i) text += (i ? "x" : "") + std::to_string(dims[i]);
  return "extents '" + text + "'";
}

}  // namespace

int OpSchema::dim_index(std::string_view dim) const {
  for (std::size_t i = 0; i < dim_names.size(); ++i)
    if (dim_names[i] == dim) return static_cast<int>(i);
  return -1;
}

Problem OpSchema::problem_from_dims(DType dtype, const std::vector<std::int64_t>& dims, Device device) const {
  std::string expected;
  for (const auto& d : dim_names) expected += (expected.empty() ? "" : "x") + d;
  if (dims.size() > dim_names.size())
    throw ShapeError(name + ": " + std::to_string(dims.size()) + " extents given, expected " + expected);
  Problem p;
  p.schema = this;
  p.dtype = dtype;
  p.device = device;
  p.n_dims = static_cast<int>(dim_names.size());
  for (std::size_t i = 0; i < dim_names.size(); ++i) {
    if (i < dims.size()) {
      if (dims[i] < 0)
        throw ShapeError(name + ": extent '" + dim_names[i] + "' is " + std::to_string(dims[i]) + ", expected >= 0");
      p.dims[i] = dims[i];
    } else {
      auto it = dim_defaults.find(dim_names[i]);
      if (it == dim_defaults.end())
        throw ShapeError(name + ": missing extent '" + dim_names[i] + "', expected " + expected);
      p.dims[i] = it->second;
    }
  }
  check_dtype(dtype);
  check_device_form(name, device);
  check_round_trip(p, extents_text(dims));
  return p;
}

void OpSchema::check_problem(const Problem& p) const {
  if (p.schema != this)
    throw ArgumentError(name + ": the problem is of another op (its schema is not this one)");
  if (p.n_dims != static_cast<int>(dim_names.size()))
    throw ShapeError(name + ": the problem has " + std::to_string(p.n_dims) + " dims, expected " +
                     std::to_string(dim_names.size()));
  for (std::size_t i = 0; i < dim_names.size(); ++i)
    if (p.dims[i] < 0)
      throw ShapeError(name + ": extent '" + dim_names[i] + "' is " + std::to_string(p.dims[i]) + ", expected >= 0");
  check_dtype(p.dtype);
  check_device_form(name, p.device);
  check_round_trip(p, extents_text(std::vector<std::int64_t>(p.dims, p.dims + p.n_dims)), /*allow_empty=*/true);
}

Problem OpSchema::problem_from_shape(DType dtype, std::string_view shape, Device device) const {
  // The caller's text is quoted through printable(): a shape with an escape sequence must not
  // reach a terminal or a log raw.
  const std::string shown = detail::printable(std::string(shape));
  std::string expected;
  for (const auto& d : dim_names) expected += (expected.empty() ? "" : "x") + d;
  std::vector<std::int64_t> values(dim_names.size(), 0);
  std::vector<bool> given(dim_names.size(), false);
  std::size_t next = 0, i = 0, item_no = 0;
  while (i <= shape.size()) {
    std::size_t j = i;
    while (j < shape.size() && shape[j] != 'x' && shape[j] != ',') ++j;
    std::string_view item = shape.substr(i, j - i);
    ++item_no;
    if (item.empty()) {
      // Say which item: in 'm=1,,n=2' the reader should not have to find the doubled comma.
      const std::string where = shape.empty() ? "it is empty"
                                : i == shape.size() ? "it ends with '" + std::string(1, shape[i - 1]) + "'"
                                : i == 0 ? "it starts with '" + std::string(1, shape[0]) + "'"
                                : "item " + std::to_string(item_no) + " (at character " + std::to_string(i + 1) +
                                      ") is empty";
      throw ShapeError(name + ": bad shape '" + shown + "': " + where + "; expected " + expected +
                       " (e.g. 4096x4096) or name=value,...");
    }
    std::size_t slot = next;
    const std::size_t eq = item.find('=');
    if (eq != std::string_view::npos) {
      const int k = dim_index(item.substr(0, eq));
      if (k < 0) throw ShapeError(name + ": unknown dim '" + detail::printable(std::string(item.substr(0, eq))) + "' in shape, expected " + expected);
      slot = static_cast<std::size_t>(k);
      item = item.substr(eq + 1);
    } else {
      ++next;
    }
    if (slot >= dim_names.size()) throw ShapeError(name + ": too many extents in '" + shown + "', expected " + expected);
    // m=1,m=2 or 4096,m=3: which one was meant is a guess, so neither is taken.
    if (given[slot])
      throw ShapeError(name + ": dim '" + dim_names[slot] + "' is given twice in shape '" + shown +
                       "', expected " + expected);
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || ptr != item.data() + item.size() || v < 0)
      throw ShapeError(name + ": bad extent '" + detail::printable(std::string(item)) + "' for " + dim_names[slot] +
                       " in shape '" + shown + "': expected a whole number written in digits, 0 to 9223372036854775807");
    values[slot] = v;
    given[slot] = true;
    i = j + 1;
  }
  Problem out;
  out.schema = this;
  out.dtype = dtype;
  out.device = device;
  out.n_dims = static_cast<int>(dim_names.size());
  for (std::size_t k = 0; k < dim_names.size(); ++k) {
    if (given[k]) {
      out.dims[k] = values[k];
    } else {
      auto it = dim_defaults.find(dim_names[k]);
      if (it == dim_defaults.end())
        throw ShapeError(name + ": shape '" + shown + "' lacks '" + dim_names[k] + "', expected " + expected);
      out.dims[k] = it->second;
    }
  }
  check_dtype(dtype);
  check_device_form(name, device);
  check_round_trip(out, "shape '" + shown + "'");
  return out;
}

void OpSchema::check_dtype(DType dtype) const {
  bool dtype_ok = dtypes.empty();
  for (DType t : dtypes) dtype_ok = dtype_ok || t == dtype;
  if (dtype_ok) return;
  std::string known;
  for (DType t : dtypes) known += (known.empty() ? "" : ", ") + std::string(dtype_name(t));
  throw DTypeError(name + ": dtype " + std::string(dtype_name(dtype)) + " is not supported (expected " + known + ")");
}

// A problem built from extents is valid when the tensors it describes, with the scalars the tuner
// would pass, make the same problem through the op's own make_problem: the one validation every
// op already has, so a schema needs no second copy of its rules (k <= n for topk, a mode dim
// that must be 0 or 1, ...).  No memory is touched: make_problem reads shapes, dtypes, strides
// and alignment, never data.
void OpSchema::check_round_trip(const Problem& p, const std::string& what, bool allow_empty) const {
  if (!tensor_specs || !make_problem) return;  // an unregistered, partial schema (tests)
  const std::string head = name + ": " + what + " is not a valid problem: ";
  try {
    std::vector<TensorSpec> specs;
    const Status st = tensor_specs(p, specs);
    if (!st.ok()) throw ShapeError(head + st.message());
    if (specs.size() != tensors.size())
      throw ShapeError(head + "tensor_specs gave " + std::to_string(specs.size()) + " tensors for " +
                       std::to_string(tensors.size()) + " roles");
    // Each tensor gets an address range of its own (ops such as transpose refuse overlapping
    // arguments); the addresses are never dereferenced.  Together they must stay below 2^62
    // bytes, far beyond any machine, so the ranges cannot wrap.
    constexpr std::uint64_t kMaxTotalBytes = std::uint64_t(1) << 62;
    std::uint64_t next_address = 4096;
    Args args;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const TensorSpec& t = specs[i];
      if (t.shape.rank < 1 || t.shape.rank > 3 || !t.shape.fits(t.dtype)) {
        bool negative = false;
        for (int d = 0; d < t.shape.rank && d < 3; ++d) negative = negative || t.shape.dims[d] < 0;
        throw ShapeError(head + "tensor '" + tensors[i].name + "' would be " + std::string(dtype_name(t.dtype)) +
                         t.shape.to_string() +
                         (negative ? ", a negative extent" : ", more bytes than fit in int64 (sizes overflow)"));
      }
      const std::uint64_t bytes = static_cast<std::uint64_t>(t.shape.bytes(t.dtype));
      if (bytes > kMaxTotalBytes || next_address + bytes > kMaxTotalBytes)
        throw ShapeError(head + "its tensors need more than 2^62 bytes together (tensor '" + tensors[i].name +
                         "' is " + std::string(dtype_name(t.dtype)) + t.shape.to_string() + ")");
      TensorRef ref;
      ref.data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(next_address));
      next_address = (next_address + bytes + 255) / 256 * 256;
      ref.dtype = t.dtype;
      ref.shape = t.shape;
      ref.device = p.device;
      if (t.transposed && t.shape.rank >= 2) {  // the transposed view of dense row-major storage
        ref.row_stride = 1;
        ref.col_stride = t.shape.rows();
      } else {
        ref.row_stride = t.shape.cols();
      }
      ref.batch_stride = t.shape.rows() * t.shape.cols();
      args.push_tensor(ref);
    }
    // Nothing to compute, nothing to tune; and a loop over the other extents of an empty problem
    // (transpose 0x4611686018427387903) runs for ever in a host reference.
    bool all_empty = true;
    for (const TensorSpec& t : specs) all_empty = all_empty && t.shape.numel() == 0;
    if (all_empty && !allow_empty)
      throw ShapeError(head + "every tensor is empty, there is nothing to compute (a size is 0)");
    for (const ScalarRole& r : scalars) args.push_scalar(r.default_value);
    if (scalars_for) scalars_for(p, args);
    Problem derived;
    derived.schema = this;
    derived.device = p.device;
    derived.align_bytes = 16;
    const Status made = make_problem(args, derived);
    if (!made.ok()) throw ShapeError(head + made.message());
    bool same = derived.dtype == p.dtype && derived.n_dims == p.n_dims;
    for (int i = 0; same && i < p.n_dims; ++i) same = derived.dims[i] == p.dims[i];
    if (!same)
      throw ShapeError(head + "its tensors describe " + derived.key() + ", not " + p.key() +
                       " (a dim the op derives differently, or a mode outside its values)");
  } catch (const ShapeError&) {
    throw;
  } catch (const std::exception& e) {
    throw ShapeError(head + e.what());
  }
}

std::string OpSchema::bucket_of(const Problem& p) const {
  if (bucket) return bucket(p);
  std::string k(dtype_name(p.dtype));
  for (int i = 0; i < p.n_dims; ++i) {
    if (is_mode_dim(i)) {  // a mode is never rounded: tf32=0 and tf32=1 are different buckets
      k += "|" + dim_names[i] + "=" + std::to_string(p.dims[i]);
      continue;
    }
    const double v = static_cast<double>(p.dims[i] < 1 ? 1 : p.dims[i]);
    const auto rounded = static_cast<std::int64_t>(std::llround(std::exp2(std::round(std::log2(v)))));
    k += "|" + (i < static_cast<int>(dim_names.size()) ? dim_names[i] : "d" + std::to_string(i)) + "~" + std::to_string(rounded);
  }
  return k;
}

bool OpSchema::is_mode_dim(int i) const {
  if (i < 0 || i >= static_cast<int>(dim_names.size())) return false;
  for (const std::string& m : mode_dims)
    if (m == dim_names[i]) return true;
  return false;
}

std::string OpSchema::mode_key(const Problem& p) const {
  std::string k(dtype_name(p.dtype));
  for (int i = 0; i < p.n_dims; ++i)
    if (is_mode_dim(i)) k += "|" + dim_names[i] + "=" + std::to_string(p.dims[i]);
  return k;
}

double OpSchema::tolerance_for(const Problem& p) const {
  if (tolerance) return tolerance(p);
  switch (p.dtype) {
    case DType::f32: return 1e-5;
    case DType::f64: return 1e-12;
    case DType::f16:
    case DType::bf16: return 1e-2;
    default: return 0.0;
  }
}

std::string OpSchema::signature() const {
  std::string s = name + "(";
  for (std::size_t i = 0; i < tensors.size(); ++i) s += (i ? ", " : "") + tensors[i].name + ": " + role_name(tensors[i].role);
  if (!scalars.empty()) {
    s += "; ";
    for (std::size_t i = 0; i < scalars.size(); ++i) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", scalars[i].default_value);
      s += (i ? ", " : "") + scalars[i].name + "=" + buf;
    }
  }
  return s + ")";
}

Status expect_dtype(const OpSchema& s, const Args& args, int index, DType expected) {
  const DType got = args.tensor(index).dtype;
  if (got == expected) return Status::success();
  return Status::fail(ErrorKind::dtype, arg_name(s, index) + " has dtype " + std::string(dtype_name(got)) + ", expected " +
                                            std::string(dtype_name(expected)));
}

Status expect_rank(const OpSchema& s, const Args& args, int index, int rank) {
  const Shape& sh = args.tensor(index).shape;
  if (sh.rank == rank) return Status::success();
  return Status::fail(ErrorKind::shape, arg_name(s, index) + " has shape " + sh.to_string() + " (rank " +
                                            std::to_string(sh.rank) + "), expected rank " + std::to_string(rank));
}

Status expect_shape(const OpSchema& s, const Args& args, int index, const Shape& expected) {
  const Shape& sh = args.tensor(index).shape;
  if (sh == expected) return Status::success();
  return Status::fail(ErrorKind::shape, arg_name(s, index) + " has shape " + sh.to_string() + ", expected " + expected.to_string());
}

Status expect_contiguous(const OpSchema& s, const Args& args, int index) {
  if (args.tensor(index).contiguous()) return Status::success();
  return Status::fail(ErrorKind::shape, arg_name(s, index) + " must be contiguous (row stride " +
                                            std::to_string(args.tensor(index).row_stride) + " != cols)");
}

void default_fill(const TensorRef& host, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(host.dtype));
  for (std::int64_t b = 0; b < host.batch(); ++b)
    for (std::int64_t r = 0; r < host.rows(); ++r)
      for (std::int64_t c = 0; c < host.cols(); ++c) {
        void* at = static_cast<char*>(host.data) + host.offset(b, r, c) * es;
        switch (host.dtype) {
          case DType::f32: *static_cast<float*>(at) = real(rng); break;
          case DType::f64: *static_cast<double*>(at) = std::uniform_real_distribution<double>(-1.0, 1.0)(rng); break;
          case DType::f16: *static_cast<std::uint16_t*>(at) = float_to_f16(real(rng)); break;
          case DType::bf16: *static_cast<std::uint16_t*>(at) = float_to_bf16(real(rng)); break;
          case DType::i32: *static_cast<std::int32_t*>(at) = std::uniform_int_distribution<std::int32_t>(-1000, 1000)(rng); break;
          case DType::u32: *static_cast<std::uint32_t*>(at) = std::uniform_int_distribution<std::uint32_t>(0, 1000)(rng); break;
          case DType::u8: *static_cast<std::uint8_t*>(at) = static_cast<std::uint8_t>(std::uniform_int_distribution<int>(0, 255)(rng)); break;
          case DType::i64: *static_cast<std::int64_t*>(at) = std::uniform_int_distribution<std::int64_t>(-1000, 1000)(rng); break;
        }
      }
}

double load_element(const TensorRef& t, std::int64_t b, std::int64_t r, std::int64_t c) {
  const char* at = static_cast<const char*>(t.data) + t.offset(b, r, c) * static_cast<std::int64_t>(dtype_size(t.dtype));
  switch (t.dtype) {
    case DType::f32: return *reinterpret_cast<const float*>(at);
    case DType::f64: return *reinterpret_cast<const double*>(at);
    case DType::f16: return f16_to_float(*reinterpret_cast<const std::uint16_t*>(at));
    case DType::bf16: return bf16_to_float(*reinterpret_cast<const std::uint16_t*>(at));
    case DType::i32: return *reinterpret_cast<const std::int32_t*>(at);
    case DType::u32: return *reinterpret_cast<const std::uint32_t*>(at);
    case DType::u8: return *reinterpret_cast<const std::uint8_t*>(at);
    case DType::i64: return static_cast<double>(*reinterpret_cast<const std::int64_t*>(at));
  }
  return 0.0;
}

namespace {

// A double to float, to nearest even, with +-infinity past the float range (a plain cast of a
// finite double beyond it is undefined behaviour in C++).
float double_to_float(double v) {
  constexpr double kOverflow = 0x1.ffffffp127;  // halfway from FLT_MAX to 2^128: rounds to inf
  if (v >= kOverflow) return std::numeric_limits<float>::infinity();
  if (v <= -kOverflow) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(v);  // in range, infinite or NaN: defined
}

// v truncated toward zero into integer type I; a NaN, an infinity or a value whose truncation is
// outside I's range is refused (the plain cast would be undefined behaviour).
template <class I>
I truncate_to(double v, DType dtype) {
  constexpr int digits = std::numeric_limits<I>::digits;  // 31, 63 (signed); 32, 8 (unsigned)
  const double lo = std::numeric_limits<I>::is_signed ? -std::ldexp(1.0, digits) : 0.0;
  const double end = std::ldexp(1.0, digits);  // exclusive
  const double t = std::trunc(v);
  if (!(t >= lo && t < end)) {
    throw ArgumentError("store_element: argument 'value' " + scalar_text(v) + " does not fit " +
                        std::string(dtype_name(dtype)) + " (expected a finite value whose truncation lies in [" +
                        std::to_string(std::numeric_limits<I>::min()) + ", " +
                        std::to_string(std::numeric_limits<I>::max()) + "])");
  }
  return static_cast<I>(t);
}

}  // namespace

void store_element(const TensorRef& t, std::int64_t b, std::int64_t r, std::int64_t c, double v) {
  char* at = static_cast<char*>(t.data) + t.offset(b, r, c) * static_cast<std::int64_t>(dtype_size(t.dtype));
  switch (t.dtype) {
    case DType::f32: *reinterpret_cast<float*>(at) = double_to_float(v); break;
    case DType::f64: *reinterpret_cast<double*>(at) = v; break;
    case DType::f16: *reinterpret_cast<std::uint16_t*>(at) = float_to_f16(double_to_float(v)); break;
    case DType::bf16: *reinterpret_cast<std::uint16_t*>(at) = float_to_bf16(double_to_float(v)); break;
    case DType::i32: *reinterpret_cast<std::int32_t*>(at) = truncate_to<std::int32_t>(v, t.dtype); break;
    case DType::u32: *reinterpret_cast<std::uint32_t*>(at) = truncate_to<std::uint32_t>(v, t.dtype); break;
    case DType::u8: *reinterpret_cast<std::uint8_t*>(at) = truncate_to<std::uint8_t>(v, t.dtype); break;
    case DType::i64: *reinterpret_cast<std::int64_t*>(at) = truncate_to<std::int64_t>(v, t.dtype); break;
  }
}

double unit_roundoff(DType t) {
  switch (t) {
    case DType::f32: return std::ldexp(1.0, -24);
    case DType::f64: return std::ldexp(1.0, -53);
    case DType::f16: return std::ldexp(1.0, -11);
    case DType::bf16: return std::ldexp(1.0, -8);
    default: return 0.0;
  }
}

double accumulation_tolerance(DType out, std::int64_t length) {
  const double accumulate = 8.0 * std::sqrt(static_cast<double>(length < 1 ? 1 : length)) * std::ldexp(1.0, -24);
  const double round_out = out == DType::f32 || out == DType::f64 ? 0.0 : 2.0 * unit_roundoff(out);
  return std::max(1e-4, round_out + accumulate);
}

double relative_error(const TensorRef& got, const TensorRef& expected) {
  if (got.device.is_cuda() || expected.device.is_cuda()) {
    if (!(got.device == expected.device))
      throw ArgumentError("relative_error: got is on " + got.device.to_string() + ", expected on " +
                          expected.device.to_string() + "; both must be on one device");
    if (got.batch() != expected.batch()) return std::numeric_limits<double>::infinity();
    return detail::cuda_relative_error(got, expected);
  }
  if (got.numel() != expected.numel() || got.rows() != expected.rows() || got.batch() != expected.batch())
    return std::numeric_limits<double>::infinity();
  double diff2 = 0.0, ref2 = 0.0;
  bool finite = true;
  const bool unit_columns = got.shape.rank <= 2 && expected.shape.rank <= 2 && got.col_stride == 1 && expected.col_stride == 1;
  if (got.dtype == expected.dtype && unit_columns) {
    switch (got.dtype) {  // typed loops: this runs over every output element of every candidate
      case DType::f32: finite = accumulate_error<float>(got, expected, diff2, ref2); break;
      case DType::f64: finite = accumulate_error<double>(got, expected, diff2, ref2); break;
      case DType::i32: finite = accumulate_error<std::int32_t>(got, expected, diff2, ref2); break;
      case DType::u32: finite = accumulate_error<std::uint32_t>(got, expected, diff2, ref2); break;
      case DType::u8: finite = accumulate_error<std::uint8_t>(got, expected, diff2, ref2); break;
      case DType::i64: finite = accumulate_error<std::int64_t>(got, expected, diff2, ref2); break;
      default: finite = accumulate_error_any(got, expected, diff2, ref2); break;
    }
  } else {
    finite = accumulate_error_any(got, expected, diff2, ref2);
  }
  if (!finite) return std::numeric_limits<double>::infinity();
  if (diff2 == 0.0) return 0.0;
  return ref2 > 0.0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
}

}  // namespace kiln
