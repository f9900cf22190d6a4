// The ordering of topk, as 64-bit keys compared as unsigned integers: larger key = better.
// Shared by the host reference and the kernels (constexpr, so device code may call it with
// --expt-relaxed-constexpr), which is what makes them agree on ties, NaN and signed zeros.
//
//   std::uint32_t bits;  std::memcpy(&bits, &x, 4);
//   std::uint64_t key = composite_key(bits, /*index=*/j, /*largest=*/true);
//   index_of(key) == j;
//
// f16 and bf16 keys (KeyFormat) follow the same rules through order_key16.
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

// The element formats topk ranks: f32 (bits as above) and the 16-bit floats f16 and bf16 (their
// bit pattern in the low 16 bits of `bits`).
enum class KeyFormat { f32, f16, bf16 };

// The same order for a 16-bit float whose +infinity is `inf_bits` (f16 0x7C00, bf16 0x7F80): the
// 16-bit order in the top half, so every non-NaN key stays below the NaN key 0xFFFFFFFF and the
// order and ties are those of the values (converting to f32 is exact and keeps them).
constexpr std::uint32_t order_key16(std::uint32_t h, std::uint32_t inf_bits) {
  if ((h & 0x7FFFu) > inf_bits) return 0xFFFFFFFFu;  // any NaN
  if (h == 0x8000u) h = 0u;                          // -0.0 -> +0.0
  const std::uint32_t o = (h & 0x8000u) ? (~h & 0xFFFFu) : (h | 0x8000u);
  return o << 16;
}

constexpr std::uint32_t order_key(std::uint32_t bits, KeyFormat f) {
  return f == KeyFormat::f32 ? order_key(bits) : order_key16(bits, f == KeyFormat::f16 ? 0x7C00u : 0x7F80u);
}

constexpr std::uint32_t rank_key(std::uint32_t bits, bool largest, KeyFormat f = KeyFormat::f32) {
  return largest ? order_key(bits, f) : ~order_key(bits, f);
}

constexpr std::uint64_t composite_key(std::uint32_t bits, std::uint32_t index, bool largest,
                                      KeyFormat f = KeyFormat::f32) {
  return (std::uint64_t(rank_key(bits, largest, f)) << 32) | std::uint32_t(~index);
}

// Whether `bits` (in format f) is a NaN: the compare of the outputs treats all NaNs as equal.
constexpr bool is_nan_bits(std::uint32_t bits, KeyFormat f) {
  return f == KeyFormat::f32 ? (bits & 0x7FFFFFFFu) > 0x7F800000u
                             : (bits & 0x7FFFu) > (f == KeyFormat::f16 ? 0x7C00u : 0x7F80u);
}

constexpr std::uint32_t index_of(std::uint64_t key) { return ~std::uint32_t(key); }

inline constexpr std::uint64_t kNoElement = 0;

}  // namespace kiln::topk
