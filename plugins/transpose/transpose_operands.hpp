// The tensors of a `transpose` call in the one form every kernel takes: a row-major source
// [m x n] (row stride ld_in) and a row-major destination [n x m] (row stride ld_out), pointers
// untyped, with the element size.  Views are normalised first (the schema admits row- and
// column-major views):
//   in row-major,    out row-major     -> that transpose;
//   in column-major, out column-major  -> the transpose of the memory: in's storage is [n x m]
//                                         row-major, out's [m x n];
//   one of each                        -> no transpose at all: a 2-D copy of the storage
//                                         (`copy`, m rows of n elements; see transpose_copy.hpp).
// A view with one row or one column counts as row-major.
#pragma once
#include <algorithm>
#include <cstdint>

#include <kiln/args.hpp>

namespace kiln::transpose {

struct TransposeOperands {
  const void* in = nullptr;
  void* out = nullptr;
  std::int64_t m = 0, n = 0;  // transpose: in is m x n, out is n x m; copy: both m x n
  std::int64_t ld_in = 0, ld_out = 0;
  int elem_bytes = 4;
  bool copy = false;
  std::int64_t numel() const { return m * n; }
  template <class T> const T* in_as() const { return static_cast<const T*>(in); }
  template <class T> T* out_as() const { return static_cast<T*>(out); }
};

namespace detail {
// Row stride of a view read as row-major; a single row's stride is never stepped over.
inline std::int64_t row_major_ld(const TensorRef& t) {
  return t.rows() > 1 ? t.row_stride : std::max<std::int64_t>(1, t.cols());
}
// Column stride of a view read as column-major (its storage is the row-major transpose).
inline std::int64_t col_major_ld(const TensorRef& t) {
  return t.cols() > 1 ? t.col_stride : std::max<std::int64_t>(1, t.rows());
}
}  // namespace detail

// args = {in, out}, already validated by the schema.
inline TransposeOperands transpose_operands(const Args& args) {
  const TensorRef& in = args.tensor(0);
  const TensorRef& out = args.tensor(1);
  TransposeOperands o;
  o.in = in.data;
  o.out = out.data;
  o.elem_bytes = static_cast<int>(dtype_size(in.dtype));
  const bool in_rm = in.row_major(), out_rm = out.row_major();
  const std::int64_t m = in.rows(), n = in.cols();
  if (in_rm && out_rm) {
    o.m = m, o.n = n;
    o.ld_in = detail::row_major_ld(in), o.ld_out = detail::row_major_ld(out);
  } else if (!in_rm && !out_rm) {
    o.m = n, o.n = m;  // in's storage is n x m, out's m x n
    o.ld_in = detail::col_major_ld(in), o.ld_out = detail::col_major_ld(out);
  } else if (in_rm) {  // out column-major: out(j, i) at i * ld_out + j, in(i, j) at i * ld_in + j
    o.copy = true;
    o.m = m, o.n = n;
    o.ld_in = detail::row_major_ld(in), o.ld_out = detail::col_major_ld(out);
  } else {  // in column-major: in(i, j) at j * ld_in + i, out(j, i) at j * ld_out + i
    o.copy = true;
    o.m = n, o.n = m;
    o.ld_in = detail::col_major_ld(in), o.ld_out = detail::row_major_ld(out);
  }
  return o;
}

}  // namespace kiln::transpose
