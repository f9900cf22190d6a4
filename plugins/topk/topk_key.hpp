// The ordering of topk, as 64-bit keys compared as unsigned integers: larger key = better.
// Shared by the host reference and the kernels (constexpr, so device code may call it with
// --expt-relaxed-constexpr), which is what makes them agree on ties, NaN and signed zeros.
//
//   std::uint32_t bits;  std::memcpy(&bits, &x, 4);
//   std::uint64_t key = composite_key(bits, /*index=*/j, /*largest=*/true);
//   index_of(key) == j;
//
// The high half orders values: bits flipped so that unsigned order is float order, -0.0 made
// +0.0 (they tie), every NaN made the largest key (NaN ranks above +inf, all NaNs tie); for
// largest = 0 it is complemented, so the smallest value is best and NaN is last.  The low half
// is ~index, so among equal values the smaller index is better.  No two elements of a row have
// equal keys, and every key is > 0 (the low half has its top bit set, index < 2^31), so 0 serves
// as "no element".
#pragma once
#include <cstdint>

namespace kiln::topk {

// Unsigned order = float order, with the NaN and signed-zero rules above.
constexpr std::uint32_t order_key(std::uint32_t bits) {
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return 0xFFFFFFFFu;  // any NaN
  if (bits == 0x80000000u) bits = 0u;                            // -0.0 -> +0.0
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

constexpr std::uint32_t rank_key(std::uint32_t bits, bool largest) {
  return largest ? order_key(bits) : ~order_key(bits);
}

constexpr std::uint64_t composite_key(std::uint32_t bits, std::uint32_t index, bool largest) {
  return (std::uint64_t(rank_key(bits, largest)) << 32) | std::uint32_t(~index);
}

constexpr std::uint32_t index_of(std::uint64_t key) { return ~std::uint32_t(key); }

inline constexpr std::uint64_t kNoElement = 0;

}  // namespace kiln::topk
