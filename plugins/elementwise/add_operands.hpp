// The three tensors of an `add` call as raw pointers, an m x n extent and row strides (elements),
// the form every kernel takes.  Dense operands may be collapsed to one row of m*n elements, which
// keeps 1-D kernels free of row arithmetic.
#pragma once
#include <cstdint>

#include <kiln/args.hpp>

namespace kiln::elementwise {

struct AddOperands {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  std::int64_t m = 0, n = 0;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  std::int64_t numel() const { return m * n; }
};

// args = {a, b, c}, already validated by the schema (same shape and dtype).
inline AddOperands add_operands(const Args& args, bool collapse_dense) {
  const TensorRef& a = args.tensor(0);
  const TensorRef& b = args.tensor(1);
  const TensorRef& c = args.tensor(2);
  AddOperands o;
  o.a = a.data;
  o.b = b.data;
  o.c = c.data;
  o.m = c.rows();
  o.n = c.cols();
  // A rank-1 tensor is one row; its row_stride is n but is never stepped over.
  const bool one_row = o.m <= 1;
  o.stride_a = one_row ? o.n : a.row_stride;
  o.stride_b = one_row ? o.n : b.row_stride;
  o.stride_c = one_row ? o.n : c.row_stride;
  if (collapse_dense && !one_row && o.stride_a == o.n && o.stride_b == o.n && o.stride_c == o.n) {
    o.n = o.m * o.n;
    o.m = 1;
    o.stride_a = o.stride_b = o.stride_c = o.n;
  }
  return o;
}

}  // namespace kiln::elementwise
