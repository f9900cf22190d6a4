// The host reference of `transpose`: out[j][i] = in[i][j] over host tensors of a 2- or 4-byte
// dtype, moving bit patterns, honouring every stride (transposed views included).
//
//   kiln::Status s = kiln::transpose::transpose_reference(args, problem);   // args: {in, out} on the host
#pragma once
#include <kiln/args.hpp>
#include <kiln/errors.hpp>
#include <kiln/problem.hpp>

namespace kiln::transpose {

Status transpose_reference(const Args& args, const Problem& problem);

}  // namespace kiln::transpose
