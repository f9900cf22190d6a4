// Problem shapes for `kiln demo` and `kiln verify`: a table for the ops kiln ships (add, dot,
// reduce_sum, gemm, gemv, transpose, histogram, histogram_range, topk) and shapes derived from the
// dim names for any other op.
#pragma once
#include <string>
#include <vector>

#include <kiln/op_schema.hpp>

namespace kiln::cli {

// One mid-size problem (on a GPU) or a small one (on the host, where references are slow).
std::string demo_shape(const OpSchema& schema, bool gpu);
// Random odd sizes and edge sizes (1, primes, non-multiples of every tile).
std::vector<std::string> verify_shapes(const OpSchema& schema);

}  // namespace kiln::cli
