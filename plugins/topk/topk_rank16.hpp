// The 16-bit ranks of two f16 or bf16 elements at once: a 32-bit word holding two elements (the
// first in its low half) gives a word holding their ranks, each the top half of rank_key (topk_key.hpp),
// i.e. the same order, ties, NaN and signed-zero rules, computed with 32-bit integer operations on
// both halves together (no carry crosses a half).  constexpr, so the host tests check it against
// rank_key for every 16-bit pattern.
//
//   std::uint32_t r = rank16_pair(0x3F80BF80u, KeyFormat::bf16, true);  // halves: -1.0, 1.0
//   (r & 0xFFFF) == rank_key(0xBF80, true, KeyFormat::bf16) >> 16;
#pragma once
#include <cstdint>

#include "topk_key.hpp"

namespace kiln::topk {

constexpr std::uint32_t rank16_pair(std::uint32_t w, KeyFormat f, bool largest) {
  const std::uint32_t inf = f == KeyFormat::f16 ? 0x7C00u : 0x7F80u;
  const std::uint32_t mag = w & 0x7FFF7FFFu;
  // Bit 15 of a half is set where its magnitude passes infinity's (a NaN): mag + 0x7FFF - inf stays
  // below 2^16 in each half.
  const std::uint32_t nan = ((mag + (0x7FFFu - inf) * 0x00010001u) & 0x80008000u) >> 15;
  // Bit 15 of a half is set where its magnitude is 0 (mag + 0x7FFF reaches 2^15 for any other).
  const std::uint32_t zero = ~(mag + 0x7FFF7FFFu) & 0x80008000u;
  const std::uint32_t v = w & ~zero;  // -0.0 -> +0.0
  const std::uint32_t neg = (v & 0x80008000u) >> 15;
  // Negative: every bit flipped; otherwise the sign bit set; NaN: all ones.
  const std::uint32_t order = (v ^ (neg * 0x7FFFu | 0x80008000u)) | nan * 0xFFFFu;
  return largest ? order : ~order;
}

// A pre-test of a rank threshold on pairs of 16-bit elements, for filters that look for the few
// elements with rank_key(h, largest, f) >= threshold.  When the threshold's top half is at least
// 0x8000 (the best half of the order: positive values when largest, negative ones otherwise), an
// element can reach it only if its magnitude h & 0x7FFF is at least floor = (threshold >> 16) -
// 0x8000 (capped at infinity + 1, so that every NaN passes): three integer operations a pair
// (rank16_reach), no rank.  It passes more than it should (the other sign, ties below the
// threshold's low half); the exact test runs on what it passes.  `usable` is false for thresholds in
// the other half (most elements pass there).
struct Rank16Reach {
  bool usable = false;
  std::uint32_t add = 0;  // (0x8000 - floor) in both halves
};
constexpr Rank16Reach rank16_reach_of(std::uint32_t threshold, KeyFormat f) {
  const std::uint32_t top = threshold >> 16, inf = f == KeyFormat::f16 ? 0x7C00u : 0x7F80u;
  if (top < 0x8000u) return {};
  const std::uint32_t floor = top - 0x8000u < inf + 1u ? top - 0x8000u : inf + 1u;
  return {true, (0x8000u - floor) * 0x00010001u};
}
// Bit 15 of each half is set where that element of w (two 16-bit elements) may reach the
// threshold of r; OR the results of many words and test 0x80008000 once (no carry crosses a half:
// magnitude + 0x8000 - floor <= 0xFFFF).
constexpr std::uint32_t rank16_reach(std::uint32_t w, const Rank16Reach& r) { return (w & 0x7FFF7FFFu) + r.add; }

}  // namespace kiln::topk
