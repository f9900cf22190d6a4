// Typed views of memory the caller owns: the dtype is deduced from the element type, extents may
// be any integer type (std::size_t included), and const memory makes an input view without a
// const_cast in the caller's code.  Host vectors are host views; a pointer names its device.
//
//   std::vector<float> a(64 * 32, 1.0f), b(32 * 16, 0.5f), c(64 * 16);
//   const std::vector<float>& in = a;
//   kiln::TensorRef av = kiln::view(in, 64, 32);                 // f32, 64 x 32, host, an input
//   kiln::TensorRef cv = kiln::view(c, 64, 16);                  // f32, 64 x 16, host
//   kiln::TensorRef flat = kiln::view(c);                        // f32, 1024 elements
//   std::size_t rows = 64, cols = 16, ld = 20;
//   std::vector<double> padded(rows * ld);
//   kiln::TensorRef pv = kiln::view(padded.data(), rows, cols, ld, kiln::Device::host());  // row stride 20
//   std::vector<kiln::Half> h(8, kiln::Half(1.0f));
//   kiln::TensorRef hv = kiln::view(h.data(), h.size(), kiln::Device::host());  // f16, 8 elements
//
// Device memory from elsewhere (cudaMalloc, a framework's tensor): kiln::view(ptr, rows, cols,
// kiln::Device::cuda(0)).  A view of const memory (a const pointer or vector) is read_only: an
// input; op() refuses it as an output and kiln::copy as a destination (ArgumentError).  A
// temporary vector has no view (deleted overloads): it would be freed before the view is used.
// Extents that are negative or past int64 throw ShapeError naming the extent.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/device.hpp"
#include "kiln/dtype.hpp"
#include "kiln/errors.hpp"
#include "kiln/half.hpp"
#include "kiln/tensor_ref.hpp"

namespace kiln {

// The DType of an element type; a type kiln has no dtype for does not compile.
template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<Half> { static constexpr DType value = DType::f16; };
template <> struct dtype_of<BFloat16> { static constexpr DType value = DType::bf16; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<std::uint32_t> { static constexpr DType value = DType::u32; };
template <> struct dtype_of<std::uint8_t> { static constexpr DType value = DType::u8; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::i64; };
namespace detail {
// Stand-ins for `long long` / `long` where that type is already int64_t or int32_t (one of the
// two 64-bit types is, depending on the platform), so each integer type is specialised once.
template <int> struct not_a_distinct_type;
template <class T, class Same1, class Same2, int N>
using distinct_or_placeholder =
    std::conditional_t<std::is_same_v<T, Same1> || std::is_same_v<T, Same2>, not_a_distinct_type<N>, T>;
}  // namespace detail
template <> struct dtype_of<detail::distinct_or_placeholder<long long, std::int64_t, std::int32_t, 0>> {
  static constexpr DType value = DType::i64;
};
template <> struct dtype_of<detail::distinct_or_placeholder<long, std::int64_t, std::int32_t, 1>> {
  static constexpr DType value = sizeof(long) == 8 ? DType::i64 : DType::i32;
};
template <class T> inline constexpr DType dtype_of_v = dtype_of<std::remove_cv_t<T>>::value;

namespace detail {

// An extent of any integer type as int64, or ShapeError naming it.
template <class I> std::int64_t view_extent(I value, const char* what) {
  static_assert(std::is_integral_v<I>, "kiln::view: extents must be integers");
  if constexpr (std::is_signed_v<I>) {
    if (value < 0) throw ShapeError(std::string("kiln::view: ") + what + " is negative (" + std::to_string(value) + ")");
  } else {
    if (static_cast<std::uint64_t>(value) > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      throw ShapeError(std::string("kiln::view: ") + what + " " + std::to_string(value) + " does not fit in int64");
  }
  return static_cast<std::int64_t>(value);
}

// TensorRef holds a void*: a view of const memory is marked read_only (an input: op() and
// kiln::copy refuse to write it).
template <class T> void* view_data(T* data) { return const_cast<std::remove_cv_t<T>*>(data); }
template <class T> TensorRef marked(TensorRef t) {
  t.read_only = std::is_const_v<T>;
  return t;
}

}  // namespace detail

// `n` elements at `data` on `device` (a rank-1 view).
template <class T, class N>
TensorRef view(T* data, N n, Device device) {
  return detail::marked<T>(
      TensorRef::vector(detail::view_data(data), dtype_of_v<T>, detail::view_extent(n, "n"), device));
}

// A dense row-major rows x cols matrix at `data` on `device`.
template <class T, class R, class C>
TensorRef view(T* data, R rows, C cols, Device device) {
  const std::int64_t c = detail::view_extent(cols, "cols");
  return detail::marked<T>(
      TensorRef::matrix(detail::view_data(data), dtype_of_v<T>, detail::view_extent(rows, "rows"), c, c, device));
}

// A row-major rows x cols matrix whose rows are `ld` elements apart (ld >= cols).
template <class T, class R, class C, class L>
TensorRef view(T* data, R rows, C cols, L ld, Device device) {
  return detail::marked<T>(TensorRef::matrix(detail::view_data(data), dtype_of_v<T>, detail::view_extent(rows, "rows"),
                                             detail::view_extent(cols, "cols"), detail::view_extent(ld, "ld"), device));
}

// A host vector as a rank-1 host view of all its elements.
template <class T, class A>
TensorRef view(std::vector<T, A>& v) {
  return view(v.data(), v.size(), Device::host());
}
template <class T, class A>
TensorRef view(const std::vector<T, A>& v) {
  return view(v.data(), v.size(), Device::host());
}

namespace detail {
// `data` (a vector's, const or not) as a dense row-major rows x cols host matrix of `size` elements.
template <class T, class R, class C>
TensorRef vector_matrix(T* data, std::size_t size, R rows, C cols) {
  const std::int64_t r = view_extent(rows, "rows"), c = view_extent(cols, "cols");
  if (r != 0 && c > std::numeric_limits<std::int64_t>::max() / r)
    throw ShapeError("kiln::view: rows x cols does not fit in int64");
  if (static_cast<std::uint64_t>(r * c) != size)
    throw ShapeError("kiln::view: a vector of " + std::to_string(size) + " elements is not " + std::to_string(r) +
                     " x " + std::to_string(c));
  return marked<T>(TensorRef::matrix(view_data(data), dtype_of_v<T>, r, c, c, Device::host()));
}
}  // namespace detail

// A host vector as a dense row-major rows x cols host matrix; ShapeError unless it holds exactly
// rows * cols elements.  A const vector gives a read-only view.
template <class T, class A, class R, class C>
TensorRef view(const std::vector<T, A>& v, R rows, C cols) {
  return detail::vector_matrix(v.data(), v.size(), rows, cols);
}
template <class T, class A, class R, class C>
TensorRef view(std::vector<T, A>& v, R rows, C cols) {
  return detail::vector_matrix(v.data(), v.size(), rows, cols);
}

// A temporary vector is freed at the end of the statement, so a view of it would dangle
// (`kiln::view(std::vector<float>(n))`): name the vector first.
template <class T, class A> TensorRef view(std::vector<T, A>&& v) = delete;
template <class T, class A> TensorRef view(const std::vector<T, A>&& v) = delete;
template <class T, class A, class R, class C> TensorRef view(std::vector<T, A>&& v, R rows, C cols) = delete;
template <class T, class A, class R, class C> TensorRef view(const std::vector<T, A>&& v, R rows, C cols) = delete;

}  // namespace kiln
