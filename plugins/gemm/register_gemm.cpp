#include "register_gemm.hpp"

#include <exception>
#include <string>

#include "gemm_schema.hpp"
#include "gemm_variants.hpp"

kiln::Status register_gemm(kiln::Registry& registry) {
  try {
    registry.add_op(kiln::gemm::make_gemm_schema());
    registry.add_variant(kiln::gemm::make_gemm_host_variant());
#if KILN_HAS_CUDA
    for (auto& v : kiln::gemm::make_gemm_cuda_variants()) registry.add_variant(std::move(v));
    registry.add_variant(kiln::gemm::make_gemm_half_mma_variant());
#endif
#if KILN_HAS_SM90A
    registry.add_variant(kiln::gemm::make_gemm_wgmma_variant());
#endif
    return kiln::Status::success();
  } catch (const std::exception& e) {
    return kiln::Status::fail(kiln::ErrorKind::internal, std::string("register_gemm: ") + e.what());
  }
}
