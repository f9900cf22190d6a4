// The host reference of `add`: c = a + b over host tensors, honouring every row stride.
// Integers wrap on overflow, like the GPU's integer add.
//
//   kiln::Status s = kiln::elementwise::add_reference(args, problem);   // args: {a, b, c} on host
#pragma once
#include <kiln/args.hpp>
#include <kiln/errors.hpp>
#include <kiln/problem.hpp>

namespace kiln::elementwise {

Status add_reference(const Args& args, const Problem& problem);

}  // namespace kiln::elementwise
