// The CUDA variants of dot and reduce_sum (built only with the CUDA backend): the ladder rungs
// and warp_shuffle, all adapters over the launchers in reduction_launch.hpp.
//
//   #if KILN_HAS_CUDA
//   for (auto& v : kiln::reduction::make_cuda_variants(kiln::reduction::ReduceOp::dot))
//     registry.add_variant(v);
//   #endif
#pragma once
#include <memory>
#include <vector>

#include <kiln/variant.hpp>

#include "reduction_ops.hpp"

namespace kiln::reduction {

// <op>_warp_shuffle (priority 100, f32 / i32), <op>_half_warp_shuffle (100, f16 / bf16), _last_block (80), _atomic (70), _sequential (60),
// _two_pass (55), _kahan (50, f32 only), _interleaved (40).
std::vector<std::shared_ptr<const Variant>> make_cuda_variants(ReduceOp op);

}  // namespace kiln::reduction
