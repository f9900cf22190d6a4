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

}  // namespace kiln::topk
