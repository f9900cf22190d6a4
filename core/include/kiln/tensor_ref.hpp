// TensorRef: the non-owning view every op takes.  Rank 1 ({n}) or rank 2 ({rows, cols}); a
// rank-2 view has a row stride in elements (>= cols), so pitched allocations and sub-matrices of
// larger arrays work directly.  Memory kiln did not allocate is wrapped the same way:
//
//   float* d_ptr = ...;                                          // from cudaMalloc, torch, ...
//   auto a = kiln::TensorRef::matrix(d_ptr, kiln::f32, rows, cols, /*row_stride=*/ld,
//                                    kiln::Device::cuda(0));
#pragma once
#include <cstdint>
#include <string>

#include "kiln/device.hpp"
#include "kiln/dtype.hpp"

namespace kiln {

struct Shape {
  int rank = 0;
  std::int64_t dims[2] = {0, 0};

  static Shape vector(std::int64_t n) { return Shape{1, {n, 0}}; }
  static Shape matrix(std::int64_t rows, std::int64_t cols) { return Shape{2, {rows, cols}}; }
  // Element count.  Throws ShapeError when it does not fit in int64 (extents from a shape string
  // or a file can be anything); a TensorRef or Buffer that exists always fits.
  std::int64_t numel() const;
  // Bytes of a dense tensor of this shape and dtype; ShapeError when they do not fit in int64.
  std::int64_t bytes(DType dtype) const;
  // The same checks without throwing: false for a negative extent or a count past int64.
  bool fits(DType dtype) const;
  std::int64_t rows() const { return rank == 2 ? dims[0] : 1; }
  std::int64_t cols() const { return rank == 2 ? dims[1] : dims[0]; }
  bool operator==(const Shape& o) const {
    return rank == o.rank && dims[0] == o.dims[0] && (rank < 2 || dims[1] == o.dims[1]);
  }
  bool operator!=(const Shape& o) const { return !(*this == o); }
  std::string to_string() const;  // "[4096]" or "[4096x4096]"
};

struct TensorRef {
  void* data = nullptr;
  DType dtype = DType::f32;
  Shape shape;
  std::int64_t row_stride = 0;  // elements between consecutive rows; == cols for dense, n for rank 1
  Device device;

  // Throws ArgumentError if `data` is null while numel > 0, or ShapeError for a negative
  // extent, a row stride smaller than cols, or a span whose byte count does not fit in int64.
  static TensorRef vector(void* data, DType dtype, std::int64_t n, Device device);
  static TensorRef matrix(void* data, DType dtype, std::int64_t rows, std::int64_t cols,
                          std::int64_t row_stride, Device device);

  std::int64_t rows() const { return shape.rows(); }
  std::int64_t cols() const { return shape.cols(); }
  std::int64_t numel() const { return shape.numel(); }
  bool contiguous() const { return shape.rank < 2 || row_stride == shape.dims[1]; }
  // Bytes spanned from data to one past the last element (ShapeError past int64; the factory
  // functions refuse such a view, so one made by them always fits).
  std::int64_t span_bytes() const;
  // The same without throwing: false (bytes 0) when the span or the element count overflows.
  bool span_fits(std::int64_t& bytes) const;
  template <class T> T* as() const { return static_cast<T*>(data); }
  std::string to_string() const;  // "f32[4096x4096] stride 4096 on cuda:0"
};

}  // namespace kiln
