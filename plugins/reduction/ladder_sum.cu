// The ladder variants of reduce_sum: f32 (float accumulation; KahanAcc for kahan) and i32
// (uint32 accumulation, wrapping modulo 2^32; no kahan).
#include "reduction_cuda.cuh"

namespace kiln::reduction {

Status launch_ladder_sum(Ladder ladder, const ReduceCall& call, const LadderConfig& c, void* workspace) {
  const char* variant = ladder_variant_name(ReduceOp::sum, ladder);
  const auto stream = static_cast<cudaStream_t>(call.stream);
  switch (call.dtype) {
    case DType::f32:
      return run_ladder_rung<SumLoad<float>, PlainAcc<float>, float, /*kKahan=*/true>(
          ladder, SumLoad<float>{static_cast<const float*>(call.x)}, call.n, static_cast<float*>(call.out), c,
          call.sm_count, workspace, stream, variant);
    case DType::i32:
      return run_ladder_rung<SumLoad<int>, PlainAcc<unsigned>, int, /*kKahan=*/false>(
          ladder, SumLoad<int>{static_cast<const int*>(call.x)}, call.n, static_cast<int*>(call.out), c,
          call.sm_count, workspace, stream, variant);
    default:
      return Status::fail(ErrorKind::dtype,
                          std::string(variant) + ": f32 or i32 only, got " + std::string(dtype_name(call.dtype)));
  }
}

}  // namespace kiln::reduction
