#include "kiln/tensor_ref.hpp"

#include "checked_math.hpp"
#include "kiln/errors.hpp"

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
  return detail::mul_fits(s.dims[0], s.dims[1], n);
}

}  // namespace

std::int64_t Shape::numel() const {
  std::int64_t n = 0;
  if (!count_of(*this, n)) throw ShapeError("shape " + to_string() + " has more elements than fit in int64");
  return n;
}

bool Shape::fits(DType dtype) const {
  if (rank < 0 || rank > 2 || dims[0] < 0 || (rank == 2 && dims[1] < 0)) return false;
  std::int64_t n = 0, bytes = 0;
  return count_of(*this, n) && detail::mul_fits(n, static_cast<std::int64_t>(dtype_size(dtype)), bytes);
}

std::int64_t Shape::bytes(DType dtype) const {
  if (!fits(dtype)) {
    if (dims[0] < 0 || (rank == 2 && dims[1] < 0)) throw ShapeError("shape " + to_string() + " has a negative extent");
    throw ShapeError("shape " + to_string() + " of " + std::string(dtype_name(dtype)) +
                     " needs more bytes than fit in int64");
  }
  return numel() * static_cast<std::int64_t>(dtype_size(dtype));
}

std::string Shape::to_string() const {
  if (rank == 0) return "[]";
  if (rank == 1) return "[" + std::to_string(dims[0]) + "]";
  return "[" + std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "]";
}

TensorRef TensorRef::vector(void* data, DType dtype, std::int64_t n, Device device) {
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

bool TensorRef::span_fits(std::int64_t& bytes) const {
  bytes = 0;
  if (!shape.fits(dtype)) return false;
  if (shape.numel() == 0) return true;
  std::int64_t elems = cols();
  if (shape.rank == 2) {
    std::int64_t before_last = 0;
    if (row_stride < 0 || !detail::mul_fits(rows() - 1, row_stride, before_last) ||
        !detail::add_fits(before_last, cols(), elems))
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
  if (shape.rank == 2 && row_stride != cols()) s += " stride " + std::to_string(row_stride);
  return s + " on " + device.to_string();
}

}  // namespace kiln
