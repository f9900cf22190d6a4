// The op schema of topk (contract in README.md):
//   topk(x: in f32[rows, n], values: out f32[rows, k], indices: out i32[rows, k]; largest=1)
//   dims {rows, n, k, largest}
#pragma once
#include <memory>

#include <kiln/op_schema.hpp>

namespace kiln::topk {

std::shared_ptr<OpSchema> make_topk_schema();

}  // namespace kiln::topk
