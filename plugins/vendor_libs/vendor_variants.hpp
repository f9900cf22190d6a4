// The vendor variants (built only with the CUDA backend), one factory each; register_vendor adds
// them.  Every one is a VendorVariant: priority 35 (kVendorPriority), empty tuning space, VariantDesc::vendor set.
//
//   #if KILN_HAS_CUDA
//   registry.add_variant(kiln::vendor::make_gemm_cublas());
//   #endif
#pragma once
#include <memory>

#include <kiln/variant.hpp>

namespace kiln::vendor {

std::shared_ptr<const Variant> make_gemm_cublas();            // gemm_cublas.cpp: cublasSgemm, true fp32
std::shared_ptr<const Variant> make_gemm_cublas_tf32();       // gemm_cublas.cpp: cublasGemmEx, TF32 (tf32=1 only)
std::shared_ptr<const Variant> make_gemm_cublaslt();          // gemm_cublaslt.cpp: cublasLtMatmul, every dtype/layout/batch
std::shared_ptr<const Variant> make_gemv_cublas();            // gemv_cublas.cpp: cublasSgemv
std::shared_ptr<const Variant> make_dot_cublas();             // dot_cublas.cpp: cublasSdot, result on the device
std::shared_ptr<const Variant> make_transpose_cublas_geam();  // geam_cublas.cpp: cublasSgeam, op(A) = A^T
std::shared_ptr<const Variant> make_add_cublas_geam();        // geam_cublas.cpp: cublas[SD]geam, 1*A + 1*B
std::shared_ptr<const Variant> make_add_cublaslt_transform();        // transform_cublaslt.cpp: f16/bf16, 1*A + 1*B
std::shared_ptr<const Variant> make_transpose_cublaslt_transform();  // transform_cublaslt.cpp: f16/bf16, op(A)
std::shared_ptr<const Variant> make_reduce_sum_cub();         // reduce_sum_cub.cu: cub::DeviceReduce::Sum
std::shared_ptr<const Variant> make_histogram_cub();          // histogram_cub.cu: HistogramEven, u8, 256 bins
std::shared_ptr<const Variant> make_histogram_range_cub();    // histogram_cub.cu: HistogramEven, f32, [lo, hi)
std::shared_ptr<const Variant> make_topk_cub_sort();          // topk_cub_sort.cu: radix sort of (key, index)

}  // namespace kiln::vendor
