// The contract of the `gemv` op: y = A x, f32.  A is [m, n] row-major with a row stride (pitched
// and sub-matrix views work), x is [n], y is [m].  Problem dims {m, n}; work (m*n + n + m) * 4
// bytes; tolerance 1e-4 (relative error norm).
//
//   std::shared_ptr<const kiln::OpSchema> s = kiln::gemv::make_gemv_schema();
//   registry.add_op(s);
//   rt.op("gemv")({a, x, y}, stream);
#pragma once
#include <memory>

#include <kiln/op_schema.hpp>

namespace kiln::gemv {

std::shared_ptr<const OpSchema> make_gemv_schema();

}  // namespace kiln::gemv
