// Host entry points into the CUDA kernels (defined in the .cu files; plain C++ declarations, so
// the variant adapters need no CUDA headers).  All are asynchronous on call.stream, allocate
// nothing and never synchronise; they return a failed Status when a launch fails.
//
//   ReduceCall call{ReduceOp::sum, DType::f32, x, nullptr, out, n, sm_count, stream.handle()};
//   launch_ladder(Ladder::last_block, call, LadderConfig{256, 4}, workspace);
#pragma once
#include <cstdint>

#include <kiln/dtype.hpp>
#include <kiln/errors.hpp>

#include "reduction_ops.hpp"
#include "reduction_params.hpp"

namespace kiln::reduction {

struct ReduceCall {
  ReduceOp op = ReduceOp::sum;
  DType dtype = DType::f32;      // of x (and y)
  DType out_dtype = DType::f32;  // of out: dtype, or f32 for f16 / bf16 inputs with out16 = 0
  const void* x = nullptr;
  const void* y = nullptr;   // dot only
  void* out = nullptr;       // one element
  std::int64_t n = 0;
  int sm_count = 0;          // of the current device
  void* stream = nullptr;    // cudaStream_t
};

// workspace: ladder_workspace_bytes() / warp_shuffle_workspace_bytes() bytes.
Status launch_ladder_dot(Ladder ladder, const ReduceCall& call, const LadderConfig& c, void* workspace);  // ladder_dot.cu
Status launch_ladder_sum(Ladder ladder, const ReduceCall& call, const LadderConfig& c, void* workspace);  // ladder_sum.cu
Status launch_warp_shuffle_dot(const ReduceCall& call, const WarpShuffleConfig& c, void* workspace);  // warp_shuffle_dot.cu
Status launch_warp_shuffle_sum(const ReduceCall& call, const WarpShuffleConfig& c, void* workspace);  // warp_shuffle_sum.cu
// f16 / bf16; c from half_warp_shuffle_config_from, workspace warp_shuffle_workspace_bytes(c, ...).
Status launch_half_warp_shuffle_dot(const ReduceCall& call, const WarpShuffleConfig& c, void* workspace);  // half_warp_shuffle_dot.cu
Status launch_half_warp_shuffle_sum(const ReduceCall& call, const WarpShuffleConfig& c, void* workspace);  // half_warp_shuffle_sum.cu

inline Status launch_ladder(Ladder ladder, const ReduceCall& call, const LadderConfig& c, void* workspace) {
  return call.op == ReduceOp::dot ? launch_ladder_dot(ladder, call, c, workspace)
                                  : launch_ladder_sum(ladder, call, c, workspace);
}

inline Status launch_warp_shuffle(const ReduceCall& call, const WarpShuffleConfig& c, void* workspace) {
  return call.op == ReduceOp::dot ? launch_warp_shuffle_dot(call, c, workspace)
                                  : launch_warp_shuffle_sum(call, c, workspace);
}

inline Status launch_half_warp_shuffle(const ReduceCall& call, const WarpShuffleConfig& c, void* workspace) {
  return call.op == ReduceOp::dot ? launch_half_warp_shuffle_dot(call, c, workspace)
                                  : launch_half_warp_shuffle_sum(call, c, workspace);
}

}  // namespace kiln::reduction
