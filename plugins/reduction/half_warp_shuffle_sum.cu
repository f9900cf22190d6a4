// reduce_sum_half_warp_shuffle: f16 / bf16 inputs, the instantiations of kSumHalfInstances.
#include "reduction_half_cuda.cuh"

namespace kiln::reduction {
namespace {

struct SumHalfInstances {
  static constexpr auto instances = kSumHalfInstances;
};

template <class Bits>
Status run(const ReduceCall& call, const WarpShuffleConfig& c, void* workspace, const char* variant) {
  const HalfSumLoad<Bits> load{static_cast<const unsigned short*>(call.x), 0};
  return dispatch_half_warp_shuffle<SumHalfInstances, HalfSumLoad<Bits>, Bits>(
      std::make_index_sequence<SumHalfInstances::instances.size()>{}, load, call, c, workspace, variant);
}

}  // namespace

Status launch_half_warp_shuffle_sum(const ReduceCall& call, const WarpShuffleConfig& c, void* workspace) {
  const char* variant = half_warp_shuffle_variant_name(ReduceOp::sum);
  switch (call.dtype) {
    case DType::bf16: return run<Bf16Bits>(call, c, workspace, variant);
    case DType::f16: return run<F16Bits>(call, c, workspace, variant);
    default:
      return Status::fail(ErrorKind::dtype,
                          std::string(variant) + ": f16 or bf16 only, got " + std::string(dtype_name(call.dtype)));
  }
}

}  // namespace kiln::reduction
