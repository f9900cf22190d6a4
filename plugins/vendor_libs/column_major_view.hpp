// How a kiln matrix view looks to column-major BLAS (cuBLAS geam, cuBLASLt transforms): a
// row-major X (unit column stride) with row stride ld is the column-major X^T, cols x rows with
// leading dimension ld; a column-major X (unit row stride) with column stride ld is X itself.
// Transposes therefore need no data movement, and an op of C = op(A) is N when A and C have the
// same column-major shape, else T.
//
//   ColumnMajorView a = column_major_view(in);       // in: row-major [m x n], ld 4100
//   // a.rows == n, a.cols == m, a.ld == 4100
#pragma once
#include <algorithm>
#include <cstdint>

#include <kiln/tensor_ref.hpp>

namespace kiln::vendor {

struct ColumnMajorView {
  std::int64_t rows = 0, cols = 0, ld = 1;
  bool from_row_major = true;  // the kiln view had a unit column stride (or one column)
};

// A rank-1 or rank-2 view with a unit column stride or a unit row stride (ops that take strided
// views refuse anything else before a variant runs).  The leading dimension is at least the
// column-major row count and at least 1, as BLAS asks, even where the stride is never stepped
// over (one row or one column).
inline ColumnMajorView column_major_view(const TensorRef& t) {
  ColumnMajorView v;
  v.from_row_major = t.row_major();
  if (v.from_row_major) {
    v.rows = t.cols();
    v.cols = t.rows();
    v.ld = std::max<std::int64_t>({1, v.rows, t.rows() > 1 ? t.row_stride : v.rows});
  } else {
    v.rows = t.rows();
    v.cols = t.cols();
    v.ld = std::max<std::int64_t>({1, v.rows, t.cols() > 1 ? t.col_stride : v.rows});
  }
  return v;
}

}  // namespace kiln::vendor
