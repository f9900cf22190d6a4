// The counter-based generator behind kiln::fill_random, shared by the host loop
// (random_fill.cpp) and the CUDA kernel (cuda_random_fill.cu): each element is a function of
// (seed, logical index) only, computed with the same integer and IEEE operations on both sides,
// so host and device produce the same bits.  Reals: 24 random bits (f32, f16, bf16) or 53 (f64)
// scaled to [0, 1), then lo + (hi - lo) * u in double with no fused multiply-add (nvcc would
// contract it, so the device uses __dmul_rn/__dadd_rn), then rounded to the element type.
#pragma once
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define KILN_HOST_DEVICE __host__ __device__
#else
#define KILN_HOST_DEVICE
#endif

namespace kiln::detail {

// splitmix64's finaliser: a bijection on 64 bits with good avalanche.
KILN_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

KILN_HOST_DEVICE inline std::uint64_t counter_hash(std::uint64_t key, std::uint64_t index) {
  return mix64(key + (index + 1) * 0x9E3779B97F4A7C15ull);
}

// The per-tensor key of a seed.
inline std::uint64_t counter_key(std::uint64_t seed) { return mix64(seed ^ 0x6A09E667F3BCC909ull); }

KILN_HOST_DEVICE inline double scale_unit(double lo, double width, double u) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(lo, __dmul_rn(width, u));
#else
  return lo + width * u;  // ISO C++ mode (-std=c++17): no contraction into an FMA
#endif
}

// Round-to-nearest-even float -> IEEE half bits (finite inputs; overflow gives infinity).
KILN_HOST_DEVICE inline std::uint16_t half_bits(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const int exp = static_cast<int>((x >> 23) & 0xff) - 127 + 15;
  std::uint32_t man = x & 0x7fffffu;
  if (exp <= 0) {
    if (exp < -10) return static_cast<std::uint16_t>(sign);
    man |= 0x800000u;
    const int shift = 14 - exp;
    std::uint32_t h = man >> shift;
    const std::uint32_t rest = man & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (h & 1u))) h += 1;
    return static_cast<std::uint16_t>(sign | h);
  }
  if (exp >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);
  std::uint32_t h = sign | (static_cast<std::uint32_t>(exp) << 10) | (man >> 13);
  const std::uint32_t rest = man & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h += 1;
  return static_cast<std::uint16_t>(h);
}

// Element `index` of a tensor of `dtype_code` (kiln::DType as int) written to `out`.
// is_real: uniform real in [lo, lo + width); else uniform integer lo + (hash mod range).
struct CounterFill {
  std::uint64_t key;
  int dtype_code;
  bool is_real;
  double lo, width;       // reals
  std::int64_t ilo;       // integers
  std::uint64_t range;    // integers: hi - lo + 1 (0 means 2^64)
};

// Writes element `index` of the fill to `out` (an element of the fill's dtype).
KILN_HOST_DEVICE inline void counter_fill_element(const CounterFill& f, std::uint64_t index, void* out) {
  const std::uint64_t h = counter_hash(f.key, index);
  if (f.is_real) {
    // dtype codes: 0 f32, 1 f64, 2 f16, 3 bf16 (kiln::DType order)
    const bool wide = f.dtype_code == 1;
    const double u = wide ? static_cast<double>(h >> 11) * 0x1p-53 : static_cast<double>(h >> 40) * 0x1p-24;
    const double v = scale_unit(f.lo, f.width, u);
    switch (f.dtype_code) {
      case 0: *static_cast<float*>(out) = static_cast<float>(v); return;
      case 1: *static_cast<double*>(out) = v; return;
      case 2: *static_cast<std::uint16_t*>(out) = half_bits(static_cast<float>(v)); return;
      case 3: {
        const float x = static_cast<float>(v);
        std::uint32_t bits;
        std::memcpy(&bits, &x, 4);
        *static_cast<std::uint16_t*>(out) = static_cast<std::uint16_t>(bits >> 16);  // truncation, like default_fill
        return;
      }
    }
    return;
  }
  const std::uint64_t r = f.range ? h % f.range : h;
  const std::int64_t v = f.ilo + static_cast<std::int64_t>(r);
  switch (f.dtype_code) {
    case 0: *static_cast<float*>(out) = static_cast<float>(v); return;
    case 1: *static_cast<double*>(out) = static_cast<double>(v); return;
    case 4: *static_cast<std::int32_t*>(out) = static_cast<std::int32_t>(v); return;
    case 5: *static_cast<std::uint32_t*>(out) = static_cast<std::uint32_t>(v); return;
    case 6: *static_cast<std::uint8_t*>(out) = static_cast<std::uint8_t>(v); return;
    case 7: *static_cast<std::int64_t*>(out) = v; return;
    default: return;  // f16/bf16 integers are rejected by make_counter_fill
  }
}

}  // namespace kiln::detail
