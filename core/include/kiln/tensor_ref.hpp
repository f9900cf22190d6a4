// TensorRef: the non-owning view every op takes.  Rank 1 ({n}), rank 2 ({rows, cols}) or rank 3
// ({batch, rows, cols}).  A matrix has a row stride and a column stride in elements, so pitched
// allocations, sub-matrices of larger arrays and transposes (the same memory with the strides
// swapped) are views, not copies; a rank-3 view adds a batch stride (0 broadcasts one matrix to
// every batch entry).  Memory kiln did not allocate is wrapped the same way:
//
//   void* d_ptr = device_memory;        // from cudaMalloc, torch, ...; typed: kiln::view (view.hpp)
//   kiln::Device dev = kiln::Device::cuda(0);
//   std::int64_t rows = 512, cols = 256, ld = 320;
//   auto a = kiln::TensorRef::matrix(d_ptr, kiln::f32, rows, cols, /*row_stride=*/ld, dev);
//   auto at = a.transposed();                  // cols x rows, row stride 1, column stride ld
//   auto w = kiln::TensorRef::col_major(d_ptr, kiln::bf16, rows, cols, /*col_stride=*/ld, dev);
//   auto x = a.batched(/*batch=*/8, /*batch_stride=*/rows * ld);   // 8 x rows x cols
//
// Ops accept general strides and rank 3 only where their schema says so (OpSchema::strided_views);
// elsewhere the core rejects them with an error naming the argument.
#pragma once
#include <cstdint>
#include <string>

#include "kiln/device.hpp"
#include "kiln/dtype.hpp"

namespace kiln {

struct Shape {
  int rank = 0;
  std::int64_t dims[3] = {0, 0, 0};  // rank 3: {batch, rows, cols}

  static Shape vector(std::int64_t n) { return Shape{1, {n, 0, 0}}; }
  static Shape matrix(std::int64_t rows, std::int64_t cols) { return Shape{2, {rows, cols, 0}}; }
  static Shape batched(std::int64_t batch, std::int64_t rows, std::int64_t cols) { return Shape{3, {batch, rows, cols}}; }
  // Element count.  Throws ShapeError when it does not fit in int64 (extents from a shape string
  // or a file can be anything), for a negative extent and for a rank outside 0 to 3 (a Shape
  // filled in by hand); a TensorRef or Buffer that a factory made always has a count.
  std::int64_t numel() const;
  // Bytes of a dense tensor of this shape and dtype; ShapeError when they do not fit in int64.
  std::int64_t bytes(DType dtype) const;
  // The same checks without throwing: false for a negative extent or a count past int64.
  bool fits(DType dtype) const;
  std::int64_t batch() const { return rank == 3 ? dims[0] : 1; }
  std::int64_t rows() const { return rank == 3 ? dims[1] : rank == 2 ? dims[0] : 1; }
  std::int64_t cols() const { return rank == 3 ? dims[2] : rank == 2 ? dims[1] : dims[0]; }
  bool operator==(const Shape& o) const {
    if (rank != o.rank) return false;
    for (int i = 0; i < rank && i < 3; ++i)
      if (dims[i] != o.dims[i]) return false;
    return true;
  }
  bool operator!=(const Shape& o) const { return !(*this == o); }
  std::string to_string() const;  // "[4096]", "[4096x4096]" or "[8x4096x4096]"
};

struct TensorRef {
  void* data = nullptr;
  DType dtype = DType::f32;
  // A view of const memory (kiln::view of a const pointer or vector): an input only, refused as
  // an output by op() and as the destination of kiln::copy.  It sits in DType's padding, so the
  // fields after it keep their offsets.
  bool read_only = false;
  Shape shape;
  std::int64_t row_stride = 0;  // elements between consecutive rows; == cols for dense, n for rank 1
  Device device;
  std::int64_t col_stride = 1;    // elements between consecutive columns; 1 for row-major
  std::int64_t batch_stride = 0;  // rank 3: elements between consecutive matrices; 0 broadcasts

  // Throws ArgumentError if `data` is null while numel > 0, or ShapeError for a negative
  // extent, a row stride smaller than cols, or a span whose byte count does not fit in int64.
  static TensorRef vector(void* data, DType dtype, std::int64_t n, Device device);
  static TensorRef matrix(void* data, DType dtype, std::int64_t rows, std::int64_t cols,
                          std::int64_t row_stride, Device device);

  // A column-major matrix: element (r, c) at data[r + c * col_stride], col_stride >= rows.
  static TensorRef col_major(void* data, DType dtype, std::int64_t rows, std::int64_t cols,
                             std::int64_t col_stride, Device device);
  // Any non-overlapping 2-D strides (both >= 1; see strides_error()).
  static TensorRef strided(void* data, DType dtype, std::int64_t rows, std::int64_t cols,
                           std::int64_t row_stride, std::int64_t col_stride, Device device);

  std::int64_t batch() const { return shape.batch(); }
  std::int64_t rows() const { return shape.rows(); }
  std::int64_t cols() const { return shape.cols(); }
  std::int64_t numel() const { return shape.numel(); }
  // Dense row-major: unit column stride, row stride == cols, batches packed.
  bool contiguous() const {
    if (shape.rank < 2) return true;
    if (col_stride != 1 || row_stride != cols()) return false;
    return shape.rank == 2 || batch() <= 1 || batch_stride == rows() * cols();
  }
  // Unit column stride (rows may be padded): what the row-major kernels read.
  bool row_major() const { return shape.rank < 2 || col_stride == 1 || cols() <= 1; }
  // Unit row stride with columns apart by at least rows: a column-major matrix.
  bool col_major_layout() const { return shape.rank >= 2 && row_stride == 1 && col_stride >= rows(); }
  // The leading dimension of a row-major (row_stride) or column-major (col_stride) matrix.
  std::int64_t leading_dim() const { return row_major() ? row_stride : col_stride; }

  // The transpose as a view: rows and cols swapped, and their strides (rank 2 or 3).
  TensorRef transposed() const;
  // A rank-3 view repeating this matrix's layout `batch` times, `batch_stride` elements apart
  // (0: every entry is this matrix).  Throws ShapeError for a rank other than 2, a negative
  // batch or stride, or a stride so small that the matrices overlap.
  TensorRef batched(std::int64_t batch, std::int64_t batch_stride) const;
  // The rank-2 view of batch entry `b` (rank 3; ShapeError unless 0 <= b < batch()), or this view
  // (rank 2).
  TensorRef matrix_at(std::int64_t b) const;
  // Offset in elements of (b, r, c) from data.
  std::int64_t offset(std::int64_t b, std::int64_t r, std::int64_t c) const {
    return (shape.rank == 3 ? b * batch_stride : 0) + (shape.rank >= 2 ? r * row_stride + c * col_stride : c);
  }
  // Why these strides cannot describe a view ("" when they can): zero or negative strides, or
  // two elements at one address (a batch stride of 0 is allowed: a broadcast input).
  std::string strides_error() const;

  // The alignment class of this view: the largest power of two <= 16 dividing the data pointer
  // and, in bytes, every stride a kernel steps by — the row stride of a row-major matrix (any
  // matrix with rows > 1 unless its rows are the unit-stride dimension), the column stride when
  // it is not 1, and a non-zero batch stride.  Problem::align_bytes is the minimum over the args.
  int alignment() const;

  // Bytes spanned from data to one past the last element (ShapeError past int64; the factory
  // functions refuse such a view, so one made by them always fits).
  std::int64_t span_bytes() const;
  // The same without throwing: false (bytes 0) when the span or the element count overflows.
  bool span_fits(std::int64_t& bytes) const;
  template <class T> T* as() const { return static_cast<T*>(data); }
  std::string to_string() const;  // "f32[4096x4096] stride 4096 on cuda:0"
};

// Whether two views share a byte of memory, judged by their spans (so two interleaved views of
// one matrix count as overlapping): false for views on different devices or an empty view.
// Ops refuse an output that overlaps another argument, except an elementwise op given the very
// same view as input and output (in place, see same_view).
bool views_overlap(const TensorRef& a, const TensorRef& b);
// The same memory with the same layout: data, dtype, shape and the strides the rank uses.
bool same_view(const TensorRef& a, const TensorRef& b);

}  // namespace kiln
