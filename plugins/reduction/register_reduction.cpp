#include "register_reduction.hpp"

#include <exception>
#include <string>

#include "reduction_host.hpp"
#include "reduction_schema.hpp"
#if KILN_HAS_CUDA
#include "reduction_cuda_variants.hpp"
#endif

kiln::Status register_reduction(kiln::Registry& registry) {
  namespace red = kiln::reduction;
  try {
    registry.add_op(red::make_dot_schema());
    registry.add_op(red::make_reduce_sum_schema());
    registry.add_variant(red::make_dot_host());
    registry.add_variant(red::make_reduce_sum_host());
#if KILN_HAS_CUDA
    for (red::ReduceOp op : {red::ReduceOp::dot, red::ReduceOp::sum})
      for (const auto& v : red::make_cuda_variants(op)) registry.add_variant(v);
#endif
    return kiln::Status::success();
  } catch (const std::exception& e) {
    return kiln::Status::fail(kiln::ErrorKind::internal, std::string("register_reduction: ") + e.what());
  }
}
