// The contract of the `transpose` op: out = in^T, f32.  in is [m, n], out is [n, m], both
// row-major with their own row strides (pitched and sub-matrix views work); out-of-place only.
// Problem dims {m, n}; work 2 * m * n * 4 bytes; exact (tolerance 0).
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
