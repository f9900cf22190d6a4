// dot_half_warp_shuffle: f16 / bf16 inputs, the instantiations of kDotHalfInstances.  The 16-byte
// loads need x and y equally misaligned (one head for both); otherwise the scalar instance runs.
#include "reduction_half_cuda.cuh"

namespace kiln::reduction {
namespace {

struct DotHalfInstances {
  static constexpr auto instances = kDotHalfInstances;
};

template <class Bits>
Status run(const ReduceCall& call, WarpShuffleConfig c, void* workspace, const char* variant) {
  if (c.vector_width > 1 && halves_to_boundary(call.x) != halves_to_boundary(call.y)) {
    c.items_per_thread = kHalfScalarFallback.items_per_thread;
    c.vector_width = kHalfScalarFallback.vector_width;
  }
  const HalfDotLoad<Bits> load{static_cast<const unsigned short*>(call.x), static_cast<const unsigned short*>(call.y), 0};
  return dispatch_half_warp_shuffle<DotHalfInstances, HalfDotLoad<Bits>, Bits>(
      std::make_index_sequence<DotHalfInstances::instances.size()>{}, load, call, c, workspace, variant);
}

}  // namespace

Status launch_half_warp_shuffle_dot(const ReduceCall& call, const WarpShuffleConfig& c, void* workspace) {
  const char* variant = half_warp_shuffle_variant_name(ReduceOp::dot);
  switch (call.dtype) {
    case DType::bf16: return run<Bf16Bits>(call, c, workspace, variant);
    case DType::f16: return run<F16Bits>(call, c, workspace, variant);
    default:
      return Status::fail(ErrorKind::dtype,
                          std::string(variant) + ": f16 or bf16 only, got " + std::string(dtype_name(call.dtype)));
  }
}

}  // namespace kiln::reduction
