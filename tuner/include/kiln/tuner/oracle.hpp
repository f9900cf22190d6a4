// The oracle rule: which trusted variant, if any, computes a problem's expected outputs on the
// GPU instead of the host reference (see ProblemData::use_oracle, docs/tuning.md).
//
//   kiln::EvaluatorOptions options;
//   if (auto o = kiln::choose_oracle(rt.registry(), problem, kiln::device_info(problem.device), options))
//     options.oracle = *o;        // e.g. gemm_cublas [] for gemm 4096^3
//
// The rule: only on a GPU, only for an op whose schema has reference_element (so the oracle can
// be checked on a sample), only when the host reference is estimated to take at least
// options.oracle_above_seconds, and then the vendor variant (VariantDesc::vendor: cuBLAS, CUB)
// of highest priority whose default config supports the problem.  No vendor variant: no oracle.
#pragma once
#include <optional>

#include "kiln/registry.hpp"
#include "kiln/tuner/candidate.hpp"
#include "kiln/tuner/evaluator.hpp"

namespace kiln {

// Seconds the host reference of `problem` is estimated to take: OpSchema::work at 1 GFLOP/s
// (flop-counted ops, a double-precision loop) or 2 GB/s (byte-counted ops).
double estimated_reference_seconds(const Problem& problem);

std::optional<Candidate> choose_oracle(const Registry& registry, const Problem& problem, const DeviceInfo& device,
                                       const EvaluatorOptions& options);

}  // namespace kiln
