// The sort key of topk_cub_sort: a 32-bit unsigned key whose ascending order is the topk order
// of the op contract, so one stable ascending radix sort of (key, index) pairs, indices in
// increasing order, yields the contract's output order including its ties:
//   - largest = 1: larger values first; largest = 0: smaller values first;
//   - NaN ranks above +inf (every NaN the same: first with largest = 1, last with largest = 0);
//   - -0.0 and +0.0 are equal;
//   - equal keys keep their input order (radix sort is stable): the smaller index first.
//
//   topk_key(1.0f, true) < topk_key(0.5f, true);   topk_key(-0.0f, true) == topk_key(0.0f, true)
#pragma once
#include <cstdint>
#include <cstring>

#include "vendor_host_device.hpp"

namespace kiln::vendor {

KILN_VENDOR_HD inline std::uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

// The usual order-preserving map from IEEE floats to unsigned integers (negative: flip all bits;
// positive: set the sign bit), after making every NaN the positive quiet NaN (above +inf) and -0
// the +0.  Ascending key = ascending value.
KILN_VENDOR_HD inline std::uint32_t ascending_key(float x) {
  // Tested on the bits, so no compiler float mode (fast-math) can change the NaN rule.
  std::uint32_t u = float_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) u = 0x7fc00000u;  // any NaN: one key, above +inf
  else if (u == 0x80000000u) u = 0u;                      // -0 == +0
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// Ascending order of this key is the output order of topk (largest = true: descending values).
KILN_VENDOR_HD inline std::uint32_t topk_key(float x, bool largest) {
  const std::uint32_t k = ascending_key(x);
  return largest ? ~k : k;
}

}  // namespace kiln::vendor
