// Overflow-checked size arithmetic for extents that come from users, shape strings and files.
// Each returns false instead of wrapping (signed overflow is undefined behaviour, and a wrapped
// byte count allocates a small buffer that is then written far past its end).
#pragma once
#include <cstddef>
#include <cstdint>

namespace kiln::detail {

inline bool mul_fits(std::int64_t a, std::int64_t b, std::int64_t& out) { return !__builtin_mul_overflow(a, b, &out); }
inline bool add_fits(std::int64_t a, std::int64_t b, std::int64_t& out) { return !__builtin_add_overflow(a, b, &out); }
inline bool mul_fits(std::size_t a, std::size_t b, std::size_t& out) { return !__builtin_mul_overflow(a, b, &out); }

}  // namespace kiln::detail
