// The op schemas of the reduction family (contracts in docs / the ops list):
//   dot(x: in [n] f32, y: in [n] f32, out: out [1] f32)       out = sum x[i] * y[i]
//   reduce_sum(x: in [n] f32|i32, out: out [1] same dtype)      out = sum x[i]
// Both have dims {n}.  i32 sums wrap modulo 2^32, like int32 arithmetic.
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
