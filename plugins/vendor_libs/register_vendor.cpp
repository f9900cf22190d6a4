#include "register_vendor.hpp"

#include <exception>
#include <string>

#if KILN_HAS_CUDA
#include "vendor_variants.hpp"
#endif

kiln::Status register_vendor(kiln::Registry& registry) {
  try {
#if KILN_HAS_CUDA
    namespace v = kiln::vendor;
    registry.add_variant(v::make_gemm_cublas());
    registry.add_variant(v::make_gemm_cublas_tf32());
    registry.add_variant(v::make_gemm_cublaslt());
    registry.add_variant(v::make_gemv_cublas());
    registry.add_variant(v::make_dot_cublas());
    registry.add_variant(v::make_transpose_cublas_geam());
    registry.add_variant(v::make_add_cublas_geam());
    registry.add_variant(v::make_add_cublaslt_transform());
    registry.add_variant(v::make_transpose_cublaslt_transform());
    registry.add_variant(v::make_reduce_sum_cub());
    registry.add_variant(v::make_histogram_cub());
    registry.add_variant(v::make_histogram_range_cub());
    registry.add_variant(v::make_topk_cub_sort());
#else
    (void)registry;  // host-only build: cuBLAS and CUB are not there, nothing to add
#endif
    return kiln::Status::success();
  } catch (const std::exception& e) {
    return kiln::Status::fail(kiln::ErrorKind::internal, std::string("register_vendor: ") + e.what());
  }
}
