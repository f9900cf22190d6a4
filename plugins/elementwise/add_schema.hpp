// The contract of the `add` op: c = a + b, elementwise, for rank-1 or rank-2 tensors of one
// dtype and shape (f32, f64, i32).  Problem dims {m, n}; a rank-1 tensor of length n is m=1.
//
//   std::shared_ptr<const kiln::OpSchema> s = kiln::elementwise::make_add_schema();
//   registry.add_op(s);
#pragma once
#include <memory>

#include <kiln/op_schema.hpp>

namespace kiln::elementwise {

std::shared_ptr<const OpSchema> make_add_schema();

}  // namespace kiln::elementwise
