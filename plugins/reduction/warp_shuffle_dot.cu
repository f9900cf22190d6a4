// dot_warp_shuffle: the instantiations listed in kDotWarpShuffleInstances.
#include "reduction_cuda.cuh"

namespace kiln::reduction {
namespace {

struct DotInstances {
  static constexpr auto instances = kDotWarpShuffleInstances;
};

}  // namespace

Status launch_warp_shuffle_dot(const ReduceCall& call, const WarpShuffleConfig& c, void* workspace) {
  const char* variant = warp_shuffle_variant_name(ReduceOp::dot);
  if (call.dtype != DType::f32)
    return Status::fail(ErrorKind::dtype, std::string(variant) + ": f32 only, got " + std::string(dtype_name(call.dtype)));
  const DotLoad load{static_cast<const float*>(call.x), static_cast<const float*>(call.y)};
  return dispatch_warp_shuffle<DotInstances>(std::make_index_sequence<DotInstances::instances.size()>{}, load, call.n,
                                             static_cast<float*>(call.out), c, call.sm_count, workspace,
                                             static_cast<cudaStream_t>(call.stream), variant);
}

}  // namespace kiln::reduction
