// dot_cublas: out[0] = sum x[i] * y[i] with cublasSdot in device pointer mode, so the result is
// written straight into the output tensor and the call stays asynchronous (host pointer mode
// would block until the result reached the host).  f16 / bf16 go through cublasDotEx with f32
// execution; cuBLAS writes the result in the input type only, so problems with an f32 out
// (out16 = 0) are declined with that reason.
#include <cstdint>

#include "cublas_variant.hpp"
#include "cuda_support.hpp"
#include "vendor_variants.hpp"

namespace kiln::vendor {
namespace {

class DotCublas final : public CublasVariant {
 public:
  DotCublas()
      : CublasVariant("dot_cublas", "dot", {DType::f32, DType::f16, DType::bf16},
                      "cublasSdot (f32); cublasDotEx with f32 execution, out in the input type (f16, bf16)") {}

  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override {
    if (p.dtype != DType::f32 && dim_or(p, "out16", 0) != 1)
      return Support::no("cublasDotEx writes an f16 / bf16 dot in the input type only; this problem wants out in f32 "
                         "(out16 = 0)");
    return int_limit("n", dim_or(p, "n", 0), "cuBLAS");
  }

  // args = {x[n], y[n], out[1]}.
  Status launch(const Args& args, const Problem& problem, const Config&, void* workspace,
                Stream stream) const override {
    const TensorRef& x = args.tensor(0);
    const TensorRef& y = args.tensor(1);
    const TensorRef& out = args.tensor(2);
    const std::int64_t n = x.numel();
    if (!fits_int(n)) return Status::fail(ErrorKind::unsupported, "dot_cublas: n exceeds 2^31-1 (cuBLAS takes int)");
    ScopedDevice on(problem.device.ordinal);
    if (Status s = device_status(on, "dot_cublas"); !s.ok()) return s;
    const auto cu_stream = static_cast<cudaStream_t>(stream.handle());
    if (n == 0)  // the empty sum (all-zero bytes in every dtype), written by us rather than by cuBLAS's n <= 0 path
      return cuda_status(cudaMemsetAsync(out.data, 0, dtype_size(out.dtype), cu_stream), "dot_cublas",
                         "cudaMemsetAsync");
    const bool half = x.dtype == DType::f16 || x.dtype == DType::bf16;
    if (half && out.dtype != x.dtype)
      return Status::fail(ErrorKind::unsupported, "dot_cublas: cublasDotEx writes f16 / bf16 results in the input type");
    CublasLease blas;
    if (Status s = blas.acquire("dot_cublas", problem.device.ordinal, cu_stream, workspace, kCublasWorkspaceBytes);
        !s.ok())
      return s;
    if (Status s = cublas_status(cublasSetPointerMode(blas.handle(), CUBLAS_POINTER_MODE_DEVICE), "dot_cublas",
                                 "cublasSetPointerMode");
        !s.ok())
      return s;
    if (half) {
      const cudaDataType_t t = x.dtype == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F;
      return cublas_status(cublasDotEx(blas.handle(), static_cast<int>(n), x.data, t, 1, y.data, t, 1, out.data, t,
                                       CUDA_R_32F),
                           "dot_cublas", "cublasDotEx");
    }
    return cublas_status(cublasSdot(blas.handle(), static_cast<int>(n), x.as<const float>(), 1, y.as<const float>(),
                                    1, out.as<float>()),
                         "dot_cublas", "cublasSdot");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_dot_cublas() { return std::make_shared<DotCublas>(); }

}  // namespace kiln::vendor
