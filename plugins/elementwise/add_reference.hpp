// The host reference of `add`: c = a + b over host tensors, honouring every row stride.
// Integers wrap on overflow, like the GPU's integer add; f16 and bf16 (bit patterns) are added in
// fp32 and rounded once to nearest even, like the GPU kernels.
//
//   kiln::Status s = kiln::elementwise::add_reference(args, problem);   // args: {a, b, c} on host
#pragma once
#include <cstdint>

#include <kiln/args.hpp>
#include <kiln/errors.hpp>
#include <kiln/problem.hpp>

namespace kiln::elementwise {

Status add_reference(const Args& args, const Problem& problem);

// One f16 or bf16 element of the result (inputs as bit patterns), as a double.
double add_half_element(DType dtype, std::uint16_t a, std::uint16_t b);

}  // namespace kiln::elementwise
