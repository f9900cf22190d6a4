#include "kiln/tensor_ref.hpp"

#include "kiln/errors.hpp"

namespace kiln {

std::string Shape::to_string() const {
  if (rank == 0) return "[]";
  if (rank == 1) return "[" + std::to_string(dims[0]) + "]";
  return "[" + std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "]";
}

TensorRef TensorRef::vector(void* data, DType dtype, std::int64_t n, Device device) {
  if (n < 0) throw ShapeError("TensorRef::vector: length must be >= 0, got " + std::to_string(n));
  if (!data && n > 0) throw ArgumentError("TensorRef::vector: data is a null pointer for " + std::to_string(n) + " elements");
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
  if (!data && rows * cols > 0) throw ArgumentError("TensorRef::matrix: data is a null pointer");
  TensorRef t;
  t.data = data;
  t.dtype = dtype;
  t.shape = Shape::matrix(rows, cols);
  t.row_stride = row_stride;
  t.device = device;
  return t;
}

std::int64_t TensorRef::span_bytes() const {
  if (numel() == 0) return 0;
  const std::int64_t elems = shape.rank == 2 ? (rows() - 1) * row_stride + cols() : cols();
  return elems * static_cast<std::int64_t>(dtype_size(dtype));
}

std::string TensorRef::to_string() const {
  std::string s = std::string(dtype_name(dtype)) + shape.to_string();
  if (shape.rank == 2 && row_stride != cols()) s += " stride " + std::to_string(row_stride);
  return s + " on " + device.to_string();
}

}  // namespace kiln
