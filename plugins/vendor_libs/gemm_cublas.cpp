// gemm_cublas (cublasSgemm, true fp32) and gemm_cublas_tf32 (cublasGemmEx on TF32 tensor cores).
//
// kiln's matrices are row-major with row strides; cuBLAS is column-major.  A row-major X with row
// stride ld is the column-major X^T with leading dimension ld, so C = A*B is computed as
// C^T = B^T * A^T: cuBLAS sees (n x k) * (k x m) -> (n x m), no operand transposed, and the row
// strides are the leading dimensions as they are.
#include <algorithm>
#include <cstdint>

#include "cublas_variant.hpp"
#include "cuda_support.hpp"
#include "vendor_variants.hpp"

namespace kiln::vendor {
namespace {

struct GemmOperands {
  const float* a = nullptr;
  const float* b = nullptr;
  float* c = nullptr;
  int m = 0, n = 0, k = 0;
  int lda = 1, ldb = 1, ldc = 1;
  float alpha = 1.0f, beta = 0.0f;
};

// args = {a[m,k], b[k,n], c[m,n]; alpha, beta, allow_tf32}, validated by the gemm schema.
Status gemm_operands(const char* variant, const Args& args, GemmOperands& o) {
  const TensorRef& a = args.tensor(0);
  const TensorRef& b = args.tensor(1);
  const TensorRef& c = args.tensor(2);
  // cuBLAS wants leading dimensions >= 1 even for empty operands.
  const std::int64_t lda = std::max<std::int64_t>(1, a.row_stride);
  const std::int64_t ldb = std::max<std::int64_t>(1, b.row_stride);
  const std::int64_t ldc = std::max<std::int64_t>(1, c.row_stride);
  for (std::int64_t v : {c.rows(), c.cols(), a.cols(), lda, ldb, ldc})
    if (!fits_int(v))
      return Status::fail(ErrorKind::unsupported,
                          std::string(variant) + ": an extent or row stride exceeds 2^31-1 (cuBLAS takes int)");
  o.a = a.as<const float>();
  o.b = b.as<const float>();
  o.c = c.as<float>();
  o.m = static_cast<int>(c.rows());
  o.n = static_cast<int>(c.cols());
  o.k = static_cast<int>(a.cols());
  o.lda = static_cast<int>(lda);
  o.ldb = static_cast<int>(ldb);
  o.ldc = static_cast<int>(ldc);
  o.alpha = static_cast<float>(scalar_or(args, 0, 1.0));
  o.beta = static_cast<float>(scalar_or(args, 1, 0.0));
  return Status::success();
}

Support gemm_extents_fit(const Problem& p) {
  // One row-major f32 product: batches and column-major operands are gemm_cublaslt's.
  if (dim_or(p, "batch", 1) != 1) return Support::no("one product only (batch = 1); gemm_cublaslt takes batches");
  if (dim_or(p, "ta", 0) != 0 || dim_or(p, "tb", 0) != 0)
    return Support::no("row-major A and B only; gemm_cublaslt takes column-major operands");
  for (const char* d : {"m", "n", "k"})
    if (Support s = int_limit(d, dim_or(p, d, 0), "cuBLAS"); !s.ok) return s;
  return Support::yes();
}

class GemmCublas final : public CublasVariant {
 public:
  GemmCublas()
      : CublasVariant("gemm_cublas", "gemm", {DType::f32},
                      "cublasSgemm, true fp32 (no TF32), row-major through C^T = B^T A^T") {}

  // True fp32 is at least as accurate as a tf32=1 problem allows, so both are supported.
  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override { return gemm_extents_fit(p); }

  Status launch(const Args& args, const Problem& problem, const Config&, void* workspace,
                Stream stream) const override {
    GemmOperands o;
    if (Status s = gemm_operands("gemm_cublas", args, o); !s.ok()) return s;
    if (o.m == 0 || o.n == 0) return Status::success();
    ScopedDevice on(problem.device.ordinal);
    if (Status s = device_status(on, "gemm_cublas"); !s.ok()) return s;
    CublasLease blas;
    if (Status s = blas.acquire("gemm_cublas", problem.device.ordinal, static_cast<cudaStream_t>(stream.handle()),
                                workspace, kCublasWorkspaceBytes);
        !s.ok())
      return s;
    return cublas_status(cublasSgemm(blas.handle(), CUBLAS_OP_N, CUBLAS_OP_N, o.n, o.m, o.k, &o.alpha, o.b, o.ldb,
                                     o.a, o.lda, &o.beta, o.c, o.ldc),
                         "gemm_cublas", "cublasSgemm");
  }
};

class GemmCublasTf32 final : public CublasVariant {
 public:
  GemmCublasTf32()
      : CublasVariant("gemm_cublas_tf32", "gemm", {DType::f32},
                      "cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32 (tensor cores); only problems with tf32=1",
                      // Above gemm_cublas: where the caller allows TF32 and kiln has no evidence,
                      // the vendor fallback is the tensor-core path, not fp32 SGEMM.
                      kVendorPriority + 1) {}

  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override {
    if (dim_or(p, "tf32", 0) != 1) return Support::no("rounds inputs to TF32: needs allow_tf32=1");
    return gemm_extents_fit(p);
  }

  Status launch(const Args& args, const Problem& problem, const Config&, void* workspace,
                Stream stream) const override {
    GemmOperands o;
    if (Status s = gemm_operands("gemm_cublas_tf32", args, o); !s.ok()) return s;
    if (o.m == 0 || o.n == 0) return Status::success();
    ScopedDevice on(problem.device.ordinal);
    if (Status s = device_status(on, "gemm_cublas_tf32"); !s.ok()) return s;
    CublasLease blas;
    if (Status s = blas.acquire("gemm_cublas_tf32", problem.device.ordinal,
                                static_cast<cudaStream_t>(stream.handle()), workspace, kCublasWorkspaceBytes);
        !s.ok())
      return s;
    return cublas_status(cublasGemmEx(blas.handle(), CUBLAS_OP_N, CUBLAS_OP_N, o.n, o.m, o.k, &o.alpha, o.b,
                                      CUDA_R_32F, o.ldb, o.a, CUDA_R_32F, o.lda, &o.beta, o.c, CUDA_R_32F, o.ldc,
                                      CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT),
                         "gemm_cublas_tf32", "cublasGemmEx");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_gemm_cublas() { return std::make_shared<GemmCublas>(); }
std::shared_ptr<const Variant> make_gemm_cublas_tf32() { return std::make_shared<GemmCublasTf32>(); }

}  // namespace kiln::vendor
