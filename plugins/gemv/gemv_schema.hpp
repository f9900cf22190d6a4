// The contract of the `gemv` op: y = A x; f32, or f16 / bf16 A and x (one dtype) accumulated in
// f32 with y in f32 or the input dtype.  A is [m, n] row-major with a row stride (pitched and
// sub-matrix views work), x is [n], y is [m].  Problem dims {m, n, y16} (y16, a mode: 1 when y is
// in the half input dtype); work (m*n + n) * sizeof(a) + m * sizeof(y) bytes; tolerance 1e-4 for
// f32, accumulation_tolerance(y dtype, n) for half inputs (relative error norm).
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
