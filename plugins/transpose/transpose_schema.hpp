// The contract of the `transpose` op: out = in^T for any 2- or 4-byte dtype (f16, bf16, f32, i32;
// both tensors the same).  in is [m, n], out is [n, m]; each is row-major (unit column stride:
// pitched, offset and sub-matrix views) or column-major (unit row stride: a transposed view), so
// a transposed view on one side makes the op a copy.  Out of place only.  Problem dims {m, n}
// (the layouts are not part of the key); work 2 * m * n * element size bytes; exact (tolerance 0).
//
//   std::shared_ptr<const kiln::OpSchema> s = kiln::transpose::make_transpose_schema();
//   registry.add_op(s);
//   rt.op("transpose")({in, out}, stream);
#pragma once
#include <memory>

#include <kiln/op_schema.hpp>

namespace kiln::transpose {

std::shared_ptr<const OpSchema> make_transpose_schema();

}  // namespace kiln::transpose
