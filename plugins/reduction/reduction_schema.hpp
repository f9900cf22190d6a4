// The op schemas of the reduction family (contracts in docs / the ops list):
//   dot(x: in [n] f32|f16|bf16, y: in [n] x's dtype, out: out [1])    out = sum x[i] * y[i]
//   reduce_sum(x: in [n] f32|i32|f16|bf16, out: out [1])              out = sum x[i]
// out has x's dtype, or f32 for f16 / bf16 inputs (which accumulate in f32 either way).  Both
// have dims {n, out16}: out16 (a mode) is 1 when a half input's out is in its own dtype.  i32
// sums wrap modulo 2^32, like int32 arithmetic.
//
//   registry.add_op(kiln::reduction::make_dot_schema());
//   registry.add_op(kiln::reduction::make_reduce_sum_schema());
#pragma once
#include <memory>

#include <kiln/op_schema.hpp>

namespace kiln::reduction {

std::shared_ptr<const OpSchema> make_dot_schema();
std::shared_ptr<const OpSchema> make_reduce_sum_schema();

}  // namespace kiln::reduction
