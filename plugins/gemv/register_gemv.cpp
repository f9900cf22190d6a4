#include "register_gemv.hpp"

#include <exception>
#include <string>

#include "gemv_host.hpp"
#include "gemv_schema.hpp"
#if KILN_HAS_CUDA
#include "gemv_cuda_variants.hpp"
#endif

kiln::Status register_gemv(kiln::Registry& registry) {
  namespace gv = kiln::gemv;
  try {
    registry.add_op(gv::make_gemv_schema());
    registry.add_variant(gv::make_gemv_host());
#if KILN_HAS_CUDA
    registry.add_variant(gv::make_gemv_warp_per_row());
    registry.add_variant(gv::make_gemv_half_warp_per_row());
    registry.add_variant(gv::make_gemv_smem_x());
    registry.add_variant(gv::make_gemv_row_per_thread());
#endif
    return kiln::Status::success();
  } catch (const std::exception& e) {
    return kiln::Status::fail(kiln::ErrorKind::internal, std::string("register_gemv: ") + e.what());
  }
}
