// The host reference of `gemv`: y = A x over host tensors, each dot product accumulated in double
// and rounded once to float (then to y's dtype for an f16 / bf16 y), honouring A's row stride.
//
//   kiln::Status s = kiln::gemv::gemv_reference(args, problem);   // args: {a, x, y} on the host
#pragma once
#include <kiln/args.hpp>
#include <kiln/errors.hpp>
#include <kiln/problem.hpp>

namespace kiln::gemv {

Status gemv_reference(const Args& args, const Problem& problem);

}  // namespace kiln::gemv
