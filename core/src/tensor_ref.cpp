#include "kiln/tensor_ref.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "byte_ranges.hpp"
#include "checked_math.hpp"
#include "kiln/errors.hpp"
#include "kiln/problem.hpp"
#include "view_check.hpp"

namespace kiln {
namespace {

// Element count of a shape whose extents are >= 0; false when it does not fit in int64.
bool count_of(const Shape& s, std::int64_t& n) {
  if (s.rank == 0) {
    n = 0;
    return true;
  }
  if (s.rank == 1) {
    n = s.dims[0];
    return true;
  }
  if (s.rank == 2) return detail::mul_fits(s.dims[0], s.dims[1], n);
  std::int64_t rc = 0;
  return detail::mul_fits(s.dims[1], s.dims[2], rc) && detail::mul_fits(s.dims[0], rc, n);
}

bool has_negative_extent(const Shape& s) {
  for (int i = 0; i < s.rank && i < 3; ++i)
    if (s.dims[i] < 0) return true;
  return false;
}

}  // namespace

std::int64_t Shape::numel() const {
  // A Shape made by hand: a rank past dims[] counted three of its extents, a negative extent
  // gave a negative count.
  if (rank < 0 || rank > 3) throw ShapeError("shape of rank " + std::to_string(rank) + ": expected rank 0 to 3");
  if (has_negative_extent(*this)) throw ShapeError("shape " + to_string() + " has a negative extent");
  std::int64_t n = 0;
  if (!count_of(*this, n)) throw ShapeError("shape " + to_string() + " has more elements than fit in int64");
  return n;
}

bool Shape::fits(DType dtype) const {
  if (rank < 0 || rank > 3 || has_negative_extent(*this)) return false;
  std::int64_t n = 0, bytes = 0;
  return count_of(*this, n) && detail::mul_fits(n, static_cast<std::int64_t>(dtype_size(dtype)), bytes);
}

std::int64_t Shape::bytes(DType dtype) const {
  if (!fits(dtype)) {
    if (has_negative_extent(*this)) throw ShapeError("shape " + to_string() + " has a negative extent");
    throw ShapeError("shape " + to_string() + " of " + std::string(dtype_name(dtype)) +
                     " needs more bytes than fit in int64");
  }
  return numel() * static_cast<std::int64_t>(dtype_size(dtype));
}

std::string Shape::to_string() const {
  if (rank == 0) return "[]";
  if (rank < 0 || rank > 3) return "[rank " + std::to_string(rank) + "]";  // a hand-made Shape: no extents to show
  if (rank == 1) return "[" + std::to_string(dims[0]) + "]";
  if (rank == 3)
    return "[" + std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" + std::to_string(dims[2]) + "]";
  return "[" + std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "]";
}

TensorRef TensorRef::vector(void* data, DType dtype, std::int64_t n, Device device) {
  detail::check_dtype(dtype, "TensorRef::vector");
  if (n < 0) throw ShapeError("TensorRef::vector: length must be >= 0, got " + std::to_string(n));
  if (!data && n > 0) throw ArgumentError("TensorRef::vector: data is a null pointer for " + std::to_string(n) + " elements");
  if (!Shape::vector(n).fits(dtype))
    throw ShapeError("TensorRef::vector: " + std::to_string(n) + " elements of " + std::string(dtype_name(dtype)) +
                     " need more bytes than fit in int64");
  TensorRef t;
  t.data = data;
  t.dtype = dtype;
  t.shape = Shape::vector(n);
  t.row_stride = n;
  t.device = device;
  return t;
}

TensorRef TensorRef::matrix(void* data, DType dtype, std::int64_t rows, std::int64_t cols, std::int64_t row_stride,
                            Device device) {
  detail::check_dtype(dtype, "TensorRef::matrix");
  if (rows < 0 || cols < 0)
    throw ShapeError("TensorRef::matrix: extents must be >= 0, got " + std::to_string(rows) + "x" + std::to_string(cols));
  if (row_stride < cols)
    throw ShapeError("TensorRef::matrix: row_stride " + std::to_string(row_stride) + " is smaller than cols " +
                     std::to_string(cols));
  TensorRef t;
  t.data = data;
  t.dtype = dtype;
  t.shape = Shape::matrix(rows, cols);
  t.row_stride = row_stride;
  t.device = device;
  std::int64_t span = 0;
  if (!t.span_fits(span))
    throw ShapeError("TensorRef::matrix: " + t.shape.to_string() + " with row stride " + std::to_string(row_stride) +
                     " of " + std::string(dtype_name(dtype)) + " spans more bytes than fit in int64");
  if (!data && t.numel() > 0) throw ArgumentError("TensorRef::matrix: data is a null pointer");
  return t;
}

TensorRef TensorRef::col_major(void* data, DType dtype, std::int64_t rows, std::int64_t cols, std::int64_t col_stride,
                               Device device) {
  detail::check_dtype(dtype, "TensorRef::col_major");
  if (rows < 0 || cols < 0)
    throw ShapeError("TensorRef::col_major: extents must be >= 0, got " + std::to_string(rows) + "x" + std::to_string(cols));
  if (col_stride < rows)
    throw ShapeError("TensorRef::col_major: col_stride " + std::to_string(col_stride) + " is smaller than rows " +
                     std::to_string(rows));
  return strided(data, dtype, rows, cols, 1, col_stride, device);
}

TensorRef TensorRef::strided(void* data, DType dtype, std::int64_t rows, std::int64_t cols, std::int64_t row_stride,
                             std::int64_t col_stride, Device device) {
  detail::check_dtype(dtype, "TensorRef::strided");
  if (rows < 0 || cols < 0)
    throw ShapeError("TensorRef::strided: extents must be >= 0, got " + std::to_string(rows) + "x" + std::to_string(cols));
  TensorRef t;
  t.data = data;
  t.dtype = dtype;
  t.shape = Shape::matrix(rows, cols);
  t.row_stride = row_stride;
  t.col_stride = col_stride;
  t.device = device;
  std::int64_t span = 0;
  if (!t.shape.fits(dtype)) throw ShapeError("TensorRef::strided: " + t.shape.to_string() + " has more bytes than fit in int64");
  const std::string why = t.strides_error();
  if (!why.empty()) throw ShapeError("TensorRef::strided: " + why);
  if (!t.span_fits(span)) throw ShapeError("TensorRef::strided: " + t.to_string() + " spans more bytes than fit in int64");
  if (!data && t.numel() > 0) throw ArgumentError("TensorRef::strided: data is a null pointer");
  return t;
}

TensorRef TensorRef::transposed() const {
  if (shape.rank < 2) throw ShapeError("TensorRef::transposed: needs a matrix (rank 2 or 3), got " + shape.to_string());
  TensorRef t = *this;
  const int r = shape.rank == 3 ? 1 : 0;
  std::swap(t.shape.dims[r], t.shape.dims[r + 1]);
  std::swap(t.row_stride, t.col_stride);
  return t;
}

TensorRef TensorRef::batched(std::int64_t batch, std::int64_t stride) const {
  if (shape.rank != 2) throw ShapeError("TensorRef::batched: needs a rank-2 view, got " + shape.to_string());
  if (batch < 0) throw ShapeError("TensorRef::batched: batch must be >= 0, got " + std::to_string(batch));
  TensorRef t = *this;
  t.shape = Shape::batched(batch, rows(), cols());
  t.batch_stride = stride;
  if (!t.shape.fits(dtype)) throw ShapeError("TensorRef::batched: " + t.shape.to_string() + " has more bytes than fit in int64");
  const std::string why = t.strides_error();
  if (!why.empty()) throw ShapeError("TensorRef::batched: " + why);
  std::int64_t span = 0;
  if (!t.span_fits(span)) throw ShapeError("TensorRef::batched: " + t.to_string() + " spans more bytes than fit in int64");
  return t;
}

TensorRef TensorRef::matrix_at(std::int64_t b) const {
  if (shape.rank != 3) return *this;
  if (b < 0 || b >= batch())  // the pointer would point outside the view
    throw ShapeError("TensorRef::matrix_at: entry " + std::to_string(b) + " of a batch of " + std::to_string(batch()));
  TensorRef t = *this;
  t.data = static_cast<char*>(data) + b * batch_stride * static_cast<std::int64_t>(dtype_size(dtype));
  t.shape = Shape::matrix(rows(), cols());
  t.batch_stride = 0;
  return t;
}

std::string TensorRef::strides_error() const {
  if (shape.rank < 2 || numel() == 0) return "";  // an empty view addresses nothing
  const std::int64_t r = rows(), c = cols();
  if (r > 1 && row_stride < 1) return "row stride " + std::to_string(row_stride) + " must be >= 1";
  if (c > 1 && col_stride < 1) return "column stride " + std::to_string(col_stride) + " must be >= 1";
  // Two elements share an address unless one stride steps over the whole extent of the other.
  // The products are checked: a hand-made stride near 2^63 overflowed them (undefined); one past
  // int64 is larger than any stride, so the comparison it stands in is true.
  const std::int64_t rs = r > 1 ? row_stride : 0, cs = c > 1 ? col_stride : 0;
  std::int64_t cols_span = 0, rows_span = 0;
  const bool rows_below = !detail::mul_fits(c, cs, cols_span) || rs < cols_span;
  const bool cols_below = !detail::mul_fits(r, rs, rows_span) || cs < rows_span;
  if (r > 1 && c > 1 && rows_below && cols_below)
    return "strides " + std::to_string(row_stride) + " (rows) and " + std::to_string(col_stride) +
           " (columns) overlap: a " + std::to_string(r) + "x" + std::to_string(c) +
           " matrix needs row stride >= cols * column stride or column stride >= rows * row stride";
  if (shape.rank == 3 && batch() > 1) {
    if (batch_stride < 0) return "batch stride " + std::to_string(batch_stride) + " must be >= 0 (0 broadcasts)";
    std::int64_t row_part = 0, col_part = 0, matrix_span = 0;
    if (!detail::mul_fits(r - 1, rs, row_part) || !detail::mul_fits(c - 1, cs, col_part) ||
        !detail::add_fits(row_part, col_part, matrix_span) || !detail::add_fits(matrix_span, 1, matrix_span))
      return "one matrix spans more elements than fit in int64";
    if (batch_stride > 0 && batch_stride < matrix_span)
      return "batch stride " + std::to_string(batch_stride) + " is smaller than one matrix's span of " +
             std::to_string(matrix_span) + " elements, so batch entries overlap";
  }
  return "";
}

int TensorRef::alignment() const {
  int align = alignment_of(reinterpret_cast<std::uintptr_t>(data));
  const auto stride_align = [&](std::int64_t stride) {
    align = std::min(align, alignment_of(static_cast<std::uintptr_t>(stride) * dtype_size(dtype)));
  };
  if (shape.rank >= 2) {
    if (rows() > 1 && (row_major() || row_stride != 1)) stride_align(row_stride);
    if (cols() > 1 && col_stride != 1) stride_align(col_stride);
    if (shape.rank == 3 && batch() > 1 && batch_stride != 0) stride_align(batch_stride);
  }
  return align;
}

bool TensorRef::span_fits(std::int64_t& bytes) const {
  bytes = 0;
  if (!shape.fits(dtype)) return false;
  // An empty view spans nothing (a zero extent; fits() has ruled out negative ones).  Tested per
  // extent rather than by numel(): this runs on every op() call.
  if (shape.rank == 0) return true;
  for (int i = 0; i < shape.rank; ++i)
    if (shape.dims[i] == 0) return true;
  std::int64_t elems = cols();
  if (shape.rank >= 2) {
    // 1 + (rows - 1) * row_stride + (cols - 1) * col_stride [+ (batch - 1) * batch_stride]
    std::int64_t r = 0, c = 0, b = 0, sum = 0;
    if (row_stride < 0 || col_stride < 0 || batch_stride < 0 || !detail::mul_fits(rows() - 1, row_stride, r) ||
        !detail::mul_fits(cols() - 1, col_stride, c) ||
        !detail::mul_fits(shape.rank == 3 ? batch() - 1 : 0, batch_stride, b) || !detail::add_fits(r, c, sum) ||
        !detail::add_fits(sum, b, sum) || !detail::add_fits(sum, 1, elems))
      return false;
  }
  return detail::mul_fits(elems, static_cast<std::int64_t>(dtype_size(dtype)), bytes);
}

std::int64_t TensorRef::span_bytes() const {
  std::int64_t bytes = 0;
  if (!span_fits(bytes))
    throw ShapeError("tensor " + to_string() + " spans more bytes than fit in int64");
  return bytes;
}

std::string TensorRef::to_string() const {
  std::string s = std::string(dtype_name(dtype)) + shape.to_string();
  if (shape.rank >= 2 && col_stride != 1)
    s += " strides " + std::to_string(row_stride) + "," + std::to_string(col_stride);
  else if (shape.rank >= 2 && row_stride != cols())
    s += " stride " + std::to_string(row_stride);
  if (shape.rank == 3 && batch_stride != rows() * cols()) s += " batch stride " + std::to_string(batch_stride);
  return s + " on " + device.to_string();
}

bool views_overlap(const TensorRef& a, const TensorRef& b) {
  std::int64_t a_bytes = 0, b_bytes = 0;
  // A span that does not fit is refused by op() before any schema looks at pointers.
  if (a.device != b.device || !a.span_fits(a_bytes) || !b.span_fits(b_bytes)) return false;
  return detail::byte_ranges_overlap(a.data, a_bytes, b.data, b_bytes);
}

bool same_view(const TensorRef& a, const TensorRef& b) {
  if (a.data != b.data || a.dtype != b.dtype || a.device != b.device || a.shape != b.shape) return false;
  if (a.shape.rank >= 2 && (a.row_stride != b.row_stride || a.col_stride != b.col_stride)) return false;
  return a.shape.rank < 3 || a.batch_stride == b.batch_stride;
}

}  // namespace kiln
