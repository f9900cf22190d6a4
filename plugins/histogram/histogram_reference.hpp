// Host references of the histogram ops (the oracle for tests and the tuner, and what the
// `<op>_host` variants run).  Arguments are host tensors already validated by make_problem.
#pragma once
#include <kiln/args.hpp>
#include <kiln/errors.hpp>
#include <kiln/problem.hpp>

#include "histogram_bin.hpp"

namespace kiln::histogram {

// histogram: bins[v] = number of elements of data equal to v (256 bins, u32, wrapping).
Status histogram_reference(const Args& args, const Problem& p);
// histogram_range: bins[range_bin(x)] counts, for x in [lo, hi) (see histogram_bin.hpp).
Status histogram_range_reference(const Args& args, const Problem& p);

// The scalars lo and hi of a histogram_range call (defaults 0 and 1 when absent), turned into
// RangeParams for `bins` bins; an argument error naming lo and hi when they make no range.
Status range_params_of(const Args& args, std::int64_t bins, RangeParams& out);

}  // namespace kiln::histogram
