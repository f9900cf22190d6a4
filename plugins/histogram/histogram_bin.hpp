// The bin rules of the two ops, shared by the host reference and the kernels so that both use
// exactly the same float arithmetic (histogram_range's contract fixes the formula).
//
//   RangeParams r;                                  // from the scalars lo, hi and the bin count
//   make_range_params(0.0, 1.0, 10, r);             // lo = 0, hi = 1, 10 bins
//   range_bin(0.25f, r) == 2; range_bin(1.0f, r) == -1 (x >= hi is not counted)
#pragma once
#include <cmath>
#include <cstdint>

// Host and device compilation of the same function; C++ alone cannot express the CUDA
// execution-space qualifiers.
#if defined(__CUDACC__)
#define KILN_HISTOGRAM_HD __host__ __device__
#else
#define KILN_HISTOGRAM_HD
#endif

namespace kiln::histogram {

inline constexpr int kByteBins = 256;

struct RangeParams {
  float lo = 0.0f;
  float hi = 1.0f;
  float scale = 1.0f;  // (float)bins / (hi - lo), computed once in float on the host
  int bins = 1;
};

// Why the scalars cannot make a range (nullptr when they can).  Checked on the doubles, before
// any conversion: a double outside float's range converted to float is undefined behaviour
// (1e300 became inf, or anything), and a NaN passed on as a NaN bound.
inline const char* range_params_error(double lo, double hi, std::int64_t bins) {
  constexpr double kFloatMax = 3.4028234663852886e38;  // FLT_MAX
  if (!std::isfinite(lo) || lo < -kFloatMax || lo > kFloatMax)
    return "scalar 'lo' must be a finite number within float's range (|lo| <= 3.40282e+38)";
  if (!std::isfinite(hi) || hi < -kFloatMax || hi > kFloatMax)
    return "scalar 'hi' must be a finite number within float's range (|hi| <= 3.40282e+38)";
  if (bins < 1 || bins > 2147483647) return "the bin count must be between 1 and 2^31 - 1";
  const float lo_f = static_cast<float>(lo);
  const float hi_f = static_cast<float>(hi);
  if (!(lo_f < hi_f)) return "scalars 'lo' and 'hi' must satisfy lo < hi once converted to float";
  const float width = hi_f - lo_f;
  const float scale = static_cast<float>(bins) / width;
  if (!std::isfinite(width) || !std::isfinite(scale) || !(scale > 0.0f))
    return "hi - lo and (float)bins / (hi - lo) must be finite and positive in float";
  return nullptr;
}

// Converts the scalars to float and derives the scale.  Returns false (and leaves `out` alone)
// when range_params_error() names a reason.
inline bool make_range_params(double lo, double hi, std::int64_t bins, RangeParams& out) {
  if (range_params_error(lo, hi, bins)) return false;
  const float lo_f = static_cast<float>(lo);
  const float hi_f = static_cast<float>(hi);
  out = RangeParams{lo_f, hi_f, static_cast<float>(bins) / (hi_f - lo_f), static_cast<int>(bins)};
  return true;
}

// The bin of x, or -1 when x is outside [lo, hi) or NaN (NaN fails both comparisons).
// x < hi bounds (x - lo) * scale by bins * (1 + 2^-23), so the conversion cannot overflow.
KILN_HISTOGRAM_HD inline int range_bin(float x, const RangeParams& r) {
  if (!(x >= r.lo && x < r.hi)) return -1;
  const int b = static_cast<int>(floorf((x - r.lo) * r.scale));
  return b < r.bins - 1 ? b : r.bins - 1;
}

}  // namespace kiln::histogram
