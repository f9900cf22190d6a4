// Element types kiln knows.  Example:
//   kiln::DType t = kiln::parse_dtype("f32");   // kiln::f32
//   std::size_t bytes = kiln::dtype_size(t);        // 4
//   std::string_view name = kiln::dtype_name(t);    // "f32"
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln {

enum class DType : std::uint8_t { f32, f64, f16, bf16, i32, u32, u8, i64 };

inline constexpr DType f32 = DType::f32;
inline constexpr DType f64 = DType::f64;
inline constexpr DType f16 = DType::f16;
inline constexpr DType bf16 = DType::bf16;
inline constexpr DType i32 = DType::i32;
inline constexpr DType u32 = DType::u32;
inline constexpr DType u8 = DType::u8;
inline constexpr DType i64 = DType::i64;

inline constexpr DType kAllDTypes[] = {f32, f64, f16, bf16, i32, u32, u8, i64};

constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f64: case DType::i64: return 8;
    case DType::f32: case DType::i32: case DType::u32: return 4;
    case DType::f16: case DType::bf16: return 2;
    case DType::u8: return 1;
  }
  return 0;
}

constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i32: return "i32";
    case DType::u32: return "u32";
    case DType::u8: return "u8";
    case DType::i64: return "i64";
  }
  return "?";
}

// Throws kiln::ArgumentError naming the text when it is not a dtype name.
DType parse_dtype(std::string_view name);

}  // namespace kiln
