// Whether two byte ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte: the test behind
// views_overlap() and op()'s per-call overlap check (which keeps the spans of a bound layout
// instead of computing them again).  An empty range overlaps nothing.
#pragma once
#include <cstdint>

namespace kiln::detail {

inline bool byte_ranges_overlap(const void* a, std::int64_t a_bytes, const void* b, std::int64_t b_bytes) noexcept {
  if (a_bytes <= 0 || b_bytes <= 0) return false;
  const auto a0 = reinterpret_cast<std::uintptr_t>(a), b0 = reinterpret_cast<std::uintptr_t>(b);
  return a0 < b0 + static_cast<std::uintptr_t>(b_bytes) && b0 < a0 + static_cast<std::uintptr_t>(a_bytes);
}

}  // namespace kiln::detail
