// Host conversions between float and the 16-bit float types, bit-exact with the CUDA toolkit's
// __float2half_rn / __float2bfloat16_rn and __half2float / __bfloat162float, and needing no CUDA
// header (the host build has none).  Values are carried as their bit patterns (std::uint16_t),
// which is how kiln stores f16 and bf16 elements.
//
//   std::uint16_t h = kiln::float_to_f16(1.0f / 3.0f);    // 0x3555, rounded to nearest even
//   float back = kiln::f16_to_float(h);                   // 0.333251953125f
//   std::uint16_t b = kiln::float_to_bf16(1.0f / 3.0f);   // 0x3eab
//
// Both directions handle signed zeros, subnormals, infinities and NaN: a NaN converts to the
// canonical 0x7fff (what CUDA produces), a finite float too large for f16 (>= 65520) to infinity.
//
// kiln::Half and kiln::BFloat16 are those bit patterns as element types, so typed views deduce
// f16 and bf16 (kiln/view.hpp):
//
//   std::vector<kiln::Half> x(1024, kiln::Half(0.5f));       // f16 elements, from float
//   kiln::TensorRef xv = kiln::view(x);                      // dtype f16, 1024 elements
//   float first = static_cast<float>(x[0]);                  // 0.5f
//   kiln::BFloat16 y = kiln::BFloat16::from_bits(0x3eab);    // 1/3 rounded to bf16
#pragma once
#include <cstdint>
#include <cstring>

namespace kiln {

inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float float_from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Round to nearest, ties to even.
inline std::uint16_t float_to_f16(float f) {
  const std::uint32_t x = float_bits(f);
  const std::uint32_t u = x & 0x7fffffffu;
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  std::uint32_t result, remainder;  // remainder: the dropped bits, left-aligned in 32 bits
  if (u >= 0x7f800000u) {           // inf or NaN
    return static_cast<std::uint16_t>(u == 0x7f800000u ? (sign | 0x7c00u) : 0x7fffu);
  } else if (u > 0x477fefffu) {     // >= 65520: rounds to infinity
    return static_cast<std::uint16_t>(sign | 0x7c00u);
  } else if (u >= 0x38800000u) {    // normal in f16 (>= 2^-14)
    remainder = u << 19;
    result = sign | ((u - 0x38000000u) >> 13);
  } else if (u <= 0x33000000u) {    // <= 2^-25 (half the smallest subnormal): rounds to zero
    return static_cast<std::uint16_t>(sign);
  } else {                          // subnormal in f16
    const std::uint32_t shift = 0x7eu - (u >> 23);
    const std::uint32_t mantissa = (u & 0x7fffffu) | 0x800000u;
    remainder = mantissa << (32u - shift);
    result = sign | (mantissa >> shift);
  }
  if (remainder > 0x80000000u || (remainder == 0x80000000u && (result & 1u))) ++result;
  return static_cast<std::uint16_t>(result);
}

inline float f16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 31) return float_from_bits(sign | 0x7f800000u | (man << 13));  // inf, NaN (payload kept)
  if (exp != 0) return float_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
  if (man == 0) return float_from_bits(sign);
  // Subnormal: man * 2^-24, exact in float.
  const float v = static_cast<float>(man) * 5.9604644775390625e-8f;
  return sign ? -v : v;
}

// Round to nearest, ties to even.
inline std::uint16_t float_to_bf16(float f) {
  const std::uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;  // NaN
  std::uint32_t result = x >> 16;
  const std::uint32_t remainder = x << 16;
  if (remainder > 0x80000000u || (remainder == 0x80000000u && (result & 1u))) ++result;
  return static_cast<std::uint16_t>(result);
}

inline float bf16_to_float(std::uint16_t b) { return float_from_bits(static_cast<std::uint32_t>(b) << 16); }

// An f16 element: its IEEE binary16 bit pattern.  Converts from and to float explicitly (round to
// nearest even), so no arithmetic happens in 16 bits by accident.
struct Half {
  std::uint16_t bits = 0;
  Half() = default;
  explicit Half(float f) : bits(float_to_f16(f)) {}
  static Half from_bits(std::uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return f16_to_float(bits); }
  // Bitwise: +0 and -0 differ, a NaN equals its own bit pattern.
  friend bool operator==(Half a, Half b) { return a.bits == b.bits; }
  friend bool operator!=(Half a, Half b) { return a.bits != b.bits; }
};

// A bf16 element: the upper 16 bits of a float.
struct BFloat16 {
  std::uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float f) : bits(float_to_bf16(f)) {}
  static BFloat16 from_bits(std::uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return bf16_to_float(bits); }
  friend bool operator==(BFloat16 a, BFloat16 b) { return a.bits == b.bits; }
  friend bool operator!=(BFloat16 a, BFloat16 b) { return a.bits != b.bits; }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "kiln's 16-bit floats are their bit patterns");

}  // namespace kiln
