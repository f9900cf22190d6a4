// reduce_sum_warp_shuffle: the instantiations listed in kSumWarpShuffleInstances, for f32 and
// i32 (i32 ignores acc_double, so its list collapses to the distinct (items, vector width)).
#include "reduction_cuda.cuh"

namespace kiln::reduction {
namespace {

struct SumInstances {
  static constexpr auto instances = kSumWarpShuffleInstances;
};

}  // namespace

Status launch_warp_shuffle_sum(const ReduceCall& call, const WarpShuffleConfig& c, void* workspace) {
  const char* variant = warp_shuffle_variant_name(ReduceOp::sum);
  const auto stream = static_cast<cudaStream_t>(call.stream);
  constexpr auto indices = std::make_index_sequence<SumInstances::instances.size()>{};
  switch (call.dtype) {
    case DType::f32:
      return dispatch_warp_shuffle<SumInstances>(indices, SumLoad<float>{static_cast<const float*>(call.x)}, call.n,
                                                 static_cast<float*>(call.out), c, call.sm_count, workspace, stream,
                                                 variant);
    case DType::i32:
      if (c.acc_double)
        return Status::fail(ErrorKind::argument, std::string(variant) + ": acc_double=1 does not apply to i32");
      return dispatch_warp_shuffle<SumInstances>(indices, SumLoad<int>{static_cast<const int*>(call.x)}, call.n,
                                                 static_cast<int*>(call.out), c, call.sm_count, workspace, stream,
                                                 variant);
    default:
      return Status::fail(ErrorKind::dtype,
                          std::string(variant) + ": f32 or i32 only, got " + std::string(dtype_name(call.dtype)));
  }
}

}  // namespace kiln::reduction
