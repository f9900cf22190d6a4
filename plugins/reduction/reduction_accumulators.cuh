// Accumulators: what a thread carries while it reduces, and how two of them combine.  Every
// kernel of the family is written once against this interface:
//
//   Acc a = Acc::zero();
//   a.add(t);                  // one term (a Scalar)
//   a.add_product(x, y);       // one dot term x * y
//   a.merge(b);                // combine two partial results (trees, block partials)
//   a.shfl_xor(lane_mask);     // the partner lane's accumulator (warp shuffle trees)
//   a.result<float>();         // the value written to the output
//
// They are aggregates (no constructors), so they can live in __shared__ arrays.
#pragma once
#include <cuda_runtime.h>

#include <type_traits>

namespace kiln::reduction {

// A plain running sum in S: float, double (f32 inputs with acc_double) or unsigned (i32 inputs:
// unsigned arithmetic wraps modulo 2^32 by definition, which reads back as the int32 sum).
template <class S>
struct PlainAcc {
  using Scalar = S;
  S v;

  __device__ static PlainAcc zero() { return {S(0)}; }
  __device__ void add(S t) { v += t; }
  __device__ void add_product(float x, float y) {
    if constexpr (std::is_same_v<S, float>)
      v = __fmaf_rn(x, y, v);
    else
      v = __fma_rn(static_cast<double>(x), static_cast<double>(y), v);  // the product is exact in double
  }
  __device__ void merge(const PlainAcc& o) { v += o.v; }
  __device__ PlainAcc shfl_xor(int lane_mask) const { return {__shfl_xor_sync(0xffffffffu, v, lane_mask)}; }
  // Reads another block's partial through L2 (ld.global.cg): L1 is not coherent across SMs.
  __device__ static PlainAcc load_coherent(const PlainAcc* p) { return {__ldcg(&p->v)}; }
  template <class Out>
  __device__ Out result() const {
    return static_cast<Out>(v);
  }
};

// Compensated summation in float: the value is s + c, a float-float pair kept normalised
// (|c| <= half an ulp of s).  Each term goes through Knuth's TwoSum, which gives the rounding
// error of s + t exactly (unlike Kahan's original step it stays exact when the term is larger
// than the sum); the error joins c and FastTwoSum renormalises.  Dot terms also carry the
// rounding error of the product, exact through an FMA.  Keeping c normalised matters: a plain
// running sum of the errors (Neumaier, Sum2) loses ~1e-5 over 3e5 equal terms in float, this
// keeps ~1e-9 (simulated).  About twice float precision before the final rounding.  The
// intrinsics (__fadd_rn, ...) keep the compiler from contracting or reordering the error terms.
struct KahanAcc {
  using Scalar = float;
  float s, c;

  __device__ static KahanAcc zero() { return {0.0f, 0.0f}; }
  __device__ void add(float t) { add_with_error(t, 0.0f); }
  __device__ void add_product(float x, float y) {
    const float p = __fmul_rn(x, y);
    add_with_error(p, __fmaf_rn(x, y, -p));  // x * y - p, exactly
  }
  __device__ void merge(const KahanAcc& o) { add_with_error(o.s, o.c); }
  __device__ KahanAcc shfl_xor(int lane_mask) const {
    return {__shfl_xor_sync(0xffffffffu, s, lane_mask), __shfl_xor_sync(0xffffffffu, c, lane_mask)};
  }
  __device__ static KahanAcc load_coherent(const KahanAcc* p) { return {__ldcg(&p->s), __ldcg(&p->c)}; }
  template <class Out>
  __device__ Out result() const {
    return static_cast<Out>(__fadd_rn(s, c));
  }

  // (s + c) += t + e, where e is a small correction (the product error, or another pair's c).
  __device__ void add_with_error(float t, float e) {
    const float sum = __fadd_rn(s, t);  // TwoSum(s, t): sum + err == s + t exactly
    const float t_part = __fsub_rn(sum, s);
    const float err = __fadd_rn(__fsub_rn(s, __fsub_rn(sum, t_part)), __fsub_rn(t, t_part));
    const float lo = __fadd_rn(c, __fadd_rn(err, e));
    s = __fadd_rn(sum, lo);  // FastTwoSum(sum, lo): renormalise so c stays below half an ulp of s
    c = __fsub_rn(lo, __fsub_rn(s, sum));
  }
};

// The plain accumulator for input element type T: i32 sums in unsigned, f32 in float or double.
template <class T, bool kDouble>
using PlainAccFor = std::conditional_t<std::is_same_v<T, int>, PlainAcc<unsigned>,
                                       std::conditional_t<kDouble, PlainAcc<double>, PlainAcc<float>>>;

}  // namespace kiln::reduction
