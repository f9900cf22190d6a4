// The reduction family: ops `dot` (out = sum x[i] * y[i]) and `reduce_sum` (out = sum x[i]) and
// their variants.
//
//   kiln::Registry reg;
//   register_reduction(reg);     // schemas dot and reduce_sum, dot_host and reduce_sum_host, and
//                                // with CUDA the warp_shuffle, last_block, atomic, sequential,
//                                // two_pass, kahan and interleaved variants of each
//   kiln::Runtime rt(std::move(reg), options);
#pragma once
#include <kiln/errors.hpp>
#include <kiln/registry.hpp>

// Adds the schemas and variants; never throws (a registry refusal comes back as a Status).
kiln::Status register_reduction(kiln::Registry& registry);
