// The ladder variants of dot (interleaved ... kahan): f32 products, float accumulation
// (KahanAcc for kahan).
#include "reduction_cuda.cuh"

namespace kiln::reduction {

Status launch_ladder_dot(Ladder ladder, const ReduceCall& call, const LadderConfig& c, void* workspace) {
  const char* variant = ladder_variant_name(ReduceOp::dot, ladder);
  if (call.dtype != DType::f32)
    return Status::fail(ErrorKind::dtype, std::string(variant) + ": f32 only, got " + std::string(dtype_name(call.dtype)));
  const DotLoad load{static_cast<const float*>(call.x), static_cast<const float*>(call.y)};
  return run_ladder_rung<DotLoad, PlainAcc<float>, float, /*kKahan=*/true>(
      ladder, load, call.n, static_cast<float*>(call.out), c, call.sm_count, workspace,
      static_cast<cudaStream_t>(call.stream), variant);
}

}  // namespace kiln::reduction
