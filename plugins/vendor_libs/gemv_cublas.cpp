// gemv_cublas: y = A x with cublasSgemv.  The row-major A[m,n] with row stride lda is the
// column-major A^T (n x m, leading dimension lda), so cuBLAS computes y = (A^T)^T x with
// CUBLAS_OP_T on an n x m matrix.  f16 / bf16 A and x go through cublasGemmEx with N = 1 (cuBLAS
// has no half gemv): y (m x 1) = op(A^T)^T x with f32 compute, y in f32 or the input type.
#include <algorithm>
#include <cstdint>

#include "cublas_variant.hpp"
#include "cuda_support.hpp"
#include "vendor_variants.hpp"

namespace kiln::vendor {
namespace {

class GemvCublas final : public CublasVariant {
 public:
  GemvCublas()
      : CublasVariant("gemv_cublas", "gemv", {DType::f32, DType::f16, DType::bf16},
                      "cublasSgemv (CUBLAS_OP_T on the row-major A); f16/bf16: cublasGemmEx with n = 1, f32 compute") {}

  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override {
    for (const char* d : {"m", "n"})
      if (Support s = int_limit(d, dim_or(p, d, 0), "cuBLAS"); !s.ok) return s;
    return Support::yes();
  }

  // args = {a[m,n], x[n], y[m]}.
  Status launch(const Args& args, const Problem& problem, const Config&, void* workspace,
                Stream stream) const override {
    const TensorRef& a = args.tensor(0);
    const TensorRef& x = args.tensor(1);
    const TensorRef& y = args.tensor(2);
    const std::int64_t m = a.rows(), n = a.cols();
    const std::int64_t lda = std::max<std::int64_t>({1, n, a.row_stride});
    if (!fits_int(m) || !fits_int(n) || !fits_int(lda))
      return Status::fail(ErrorKind::unsupported,
                          "gemv_cublas: an extent or row stride exceeds 2^31-1 (cuBLAS takes int)");
    if (m == 0) return Status::success();
    ScopedDevice on(problem.device.ordinal);
    if (Status s = device_status(on, "gemv_cublas"); !s.ok()) return s;
    const auto cu_stream = static_cast<cudaStream_t>(stream.handle());
    // An empty sum (all-zero bytes in every dtype): cuBLAS would return without writing y.
    if (n == 0)
      return cuda_status(cudaMemsetAsync(y.data, 0, static_cast<std::size_t>(m) * dtype_size(y.dtype), cu_stream),
                         "gemv_cublas", "cudaMemsetAsync");
    CublasLease blas;
    if (Status s = blas.acquire("gemv_cublas", problem.device.ordinal, cu_stream, workspace, kCublasWorkspaceBytes);
        !s.ok())
      return s;
    const float one = 1.0f, zero = 0.0f;  // beta = 0: y is not read
    if (a.dtype == DType::f16 || a.dtype == DType::bf16) {
      const cudaDataType_t t = a.dtype == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F;
      const cudaDataType_t ty = y.dtype == DType::f32 ? CUDA_R_32F : t;
      // C (m x 1, ldc m) = op(A) (m x n) * x (n x 1, ldb n), op(A) = (the column-major n x m A^T)^T.
      return cublas_status(cublasGemmEx(blas.handle(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(m), 1,
                                        static_cast<int>(n), &one, a.data, t, static_cast<int>(lda), x.data, t,
                                        static_cast<int>(n), &zero, y.data, ty, static_cast<int>(m), CUBLAS_COMPUTE_32F,
                                        CUBLAS_GEMM_DEFAULT),
                           "gemv_cublas", "cublasGemmEx");
    }
    return cublas_status(
        cublasSgemv(blas.handle(), CUBLAS_OP_T, static_cast<int>(n), static_cast<int>(m), &one, a.as<const float>(),
                    static_cast<int>(lda), x.as<const float>(), 1, &zero, y.as<float>(), 1),
        "gemv_cublas", "cublasSgemv");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_gemv_cublas() { return std::make_shared<GemvCublas>(); }

}  // namespace kiln::vendor
