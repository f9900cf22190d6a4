// The tensors of a `transpose` call as raw pointers, extents and row strides (elements), the form
// every kernel takes.
#pragma once
#include <cstdint>

#include <kiln/args.hpp>

namespace kiln::transpose {

struct TransposeOperands {
  const float* in = nullptr;
  float* out = nullptr;
  std::int64_t m = 0, n = 0;  // in is m x n, out is n x m
  std::int64_t ld_in = 0, ld_out = 0;
  std::int64_t numel() const { return m * n; }
};

// args = {in, out}, already validated by the schema.
inline TransposeOperands transpose_operands(const Args& args) {
  const TensorRef& in = args.tensor(0);
  const TensorRef& out = args.tensor(1);
  TransposeOperands o;
  o.in = in.as<const float>();
  o.out = out.as<float>();
  o.m = in.rows();
  o.n = in.cols();
  o.ld_in = in.row_stride;
  o.ld_out = out.row_stride;
  return o;
}

}  // namespace kiln::transpose
