#include "reduction_reference.hpp"

#include <cstring>
#include <limits>
#include <random>
#include <string>

#include <kiln/half.hpp>
#include <kiln/op_schema.hpp>

namespace kiln::reduction {
namespace {

Status expect_host(const char* what, const Args& args) {
  for (int i = 0; i < args.tensor_count(); ++i)
    if (!args.tensor(i).device.is_host())
      return Status::fail(ErrorKind::device, std::string(what) + " reference: tensors must be in host memory, got " +
                                                 args.tensor(i).to_string());
  return Status::success();
}

// Four independent double partial sums: the same accuracy as one, four times the add throughput
// (the host reference of n = 2^28 runs in the tuner).
template <class Term>
double sum_terms(std::int64_t n, Term term) {
  double s[4] = {0.0, 0.0, 0.0, 0.0};
  std::int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s[0] += term(i);
    s[1] += term(i + 1);
    s[2] += term(i + 2);
    s[3] += term(i + 3);
  }
  for (; i < n; ++i) s[0] += term(i);
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// Element i of a host f16 / bf16 vector as a double (exact).
struct HalfElements {
  const std::uint16_t* bits;
  bool bf16;
  double operator()(std::int64_t i) const {
    return static_cast<double>(bf16 ? bf16_to_float(bits[i]) : f16_to_float(bits[i]));
  }
};

HalfElements half_elements(const TensorRef& t) { return {t.as<const std::uint16_t>(), t.dtype == DType::bf16}; }

bool is_half(DType t) { return t == DType::f16 || t == DType::bf16; }

}  // namespace

// A double rounded to float as IEEE arithmetic does, to nearest even, with a magnitude past
// float's range going to +-inf as the GPU kernels' f32 accumulators do.  static_cast<float> of a
// finite double outside float's range is undefined behaviour (a dot of two vectors of 1e38 has a
// double sum of 1e76); NaN stays NaN.
float saturate_to_float(double v) {
  // Halfway between FLT_MAX and 2^128: from here on, round-to-nearest-even gives infinity.
  constexpr double kOverflow = 0x1.ffffffp127;
  if (v >= kOverflow) return std::numeric_limits<float>::infinity();
  if (v <= -kOverflow) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(v);  // in range, infinite or NaN: defined
}

namespace {

// The sum as the device variants write it: rounded to float once (they accumulate in f32 and
// the reference's double sum stands for the exact one), then, for an f16 / bf16 out, rounded
// to that dtype from the float (store_element: to nearest even).
void write_result(const TensorRef& out, double total) {
  store_element(out, 0, 0, 0, static_cast<double>(saturate_to_float(total)));
}

}  // namespace

Status dot_reference(const Args& args, const Problem& problem) {
  (void)problem;
  if (args.tensor_count() != 3)
    return Status::fail(ErrorKind::argument, "dot reference: expected 3 tensors (x, y, out)");
  if (Status s = expect_host("dot", args); !s.ok()) return s;
  if (is_half(args.tensor(0).dtype)) {
    const HalfElements x = half_elements(args.tensor(0)), y = half_elements(args.tensor(1));
    write_result(args.tensor(2), sum_terms(args.tensor(0).numel(), [x, y](std::int64_t i) { return x(i) * y(i); }));
    return Status::success();
  }
  const float* x = args.tensor(0).as<const float>();
  const float* y = args.tensor(1).as<const float>();
  const std::int64_t n = args.tensor(0).numel();
  const double total =
      sum_terms(n, [x, y](std::int64_t i) { return static_cast<double>(x[i]) * static_cast<double>(y[i]); });
  *args.tensor(2).as<float>() = saturate_to_float(total);
  return Status::success();
}

Status reduce_sum_reference(const Args& args, const Problem& problem) {
  if (args.tensor_count() != 2)
    return Status::fail(ErrorKind::argument, "reduce_sum reference: expected 2 tensors (x, out)");
  if (Status s = expect_host("reduce_sum", args); !s.ok()) return s;
  const TensorRef& x = args.tensor(0);
  const std::int64_t n = x.numel();
  switch (problem.dtype) {
    case DType::f32: {
      const float* xs = x.as<const float>();
      *args.tensor(1).as<float>() =
          saturate_to_float(sum_terms(n, [xs](std::int64_t i) { return static_cast<double>(xs[i]); }));
      return Status::success();
    }
    case DType::i32: {
      const std::int32_t* xs = x.as<const std::int32_t>();
      // Unsigned arithmetic wraps modulo 2^32 by definition (signed overflow would be undefined);
      // the bits are the two's complement int32 sum.
      std::uint32_t total = 0;
      for (std::int64_t i = 0; i < n; ++i) total += static_cast<std::uint32_t>(xs[i]);
      std::int32_t result;
      std::memcpy(&result, &total, sizeof(result));
      *args.tensor(1).as<std::int32_t>() = result;
      return Status::success();
    }
    case DType::f16:
    case DType::bf16: {
      const HalfElements xs = half_elements(x);
      write_result(args.tensor(1), sum_terms(n, xs));
      return Status::success();
    }
    default:
      return Status::fail(ErrorKind::dtype, "reduce_sum reference: dtype " + std::string(dtype_name(problem.dtype)) +
                                                " is not supported (f32, i32, f16, bf16)");
  }
}

void fill_unit_interval(const TensorRef& host, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::int64_t rows = host.rows(), cols = host.cols();
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = host.as<float>() + r * host.row_stride;
    for (std::int64_t j = 0; j < cols; ++j) row[j] = static_cast<float>(rng() >> 40) * 0x1p-24f;
  }
}

std::uint64_t mix_seed(std::uint64_t seed, int tensor_index) {
  // splitmix64 of (seed, index): neighbouring seeds and indices give unrelated streams.
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(tensor_index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace kiln::reduction
