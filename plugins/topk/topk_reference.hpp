// Host reference of topk: per row, the k best elements, best first (see topk_key.hpp for the
// order).  Values are copied from x (bit for bit), indices are column indices.  Arguments are
// host tensors validated by make_problem; every row stride is honoured.
#pragma once
#include <kiln/args.hpp>
#include <kiln/errors.hpp>
#include <kiln/problem.hpp>

namespace kiln::topk {

Status topk_reference(const Args& args, const Problem& p);

}  // namespace kiln::topk
