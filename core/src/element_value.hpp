// One element of any kiln dtype read as a double, for code compiled both for the host and by
// nvcc (the device-side relative error in cuda_relative_error.cu).
#pragma once
#include <cstdint>
#include <cstring>

#include "counter_rng.hpp"  // KILN_HOST_DEVICE

namespace kiln::detail {

KILN_HOST_DEVICE inline float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  std::uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      int e = -1;
      std::uint32_t m = man;
      do {
        ++e;
        m <<= 1;
      } while ((m & 0x400) == 0);
      bits = sign | ((127 - 15 - e) << 23) | ((m & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// dtype_code: kiln::DType as int (f32, f64, f16, bf16, i32, u32, u8, i64).
KILN_HOST_DEVICE inline double element_value(const void* base, std::int64_t i, int dtype_code) {
  switch (dtype_code) {
    case 0: return static_cast<const float*>(base)[i];
    case 1: return static_cast<const double*>(base)[i];
    case 2: return half_bits_to_float(static_cast<const std::uint16_t*>(base)[i]);
    case 3: {
      const std::uint32_t bits = static_cast<std::uint32_t>(static_cast<const std::uint16_t*>(base)[i]) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case 4: return static_cast<const std::int32_t*>(base)[i];
    case 5: return static_cast<const std::uint32_t*>(base)[i];
    case 6: return static_cast<const std::uint8_t*>(base)[i];
    case 7: return static_cast<double>(static_cast<const std::int64_t*>(base)[i]);
  }
  return 0.0;
}

}  // namespace kiln::detail
