// dot_cublas: out[0] = sum x[i] * y[i] with cublasSdot in device pointer mode, so the result is
// written straight into the output tensor and the call stays asynchronous (host pointer mode
// would block until the result reached the host).
#include <cstdint>

#include "cublas_variant.hpp"
#include "cuda_support.hpp"
#include "vendor_variants.hpp"

namespace kiln::vendor {
namespace {

class DotCublas final : public CublasVariant {
 public:
  DotCublas() : CublasVariant("dot_cublas", "dot", {DType::f32}, "cublasSdot, result written on the device") {}

  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override {
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
    if (n == 0)  // the empty sum, written by us rather than relying on cuBLAS's n <= 0 path
      return cuda_status(cudaMemsetAsync(out.data, 0, sizeof(float), cu_stream), "dot_cublas", "cudaMemsetAsync");
    CublasLease blas;
    if (Status s = blas.acquire("dot_cublas", problem.device.ordinal, cu_stream, workspace, kCublasWorkspaceBytes);
        !s.ok())
      return s;
    if (Status s = cublas_status(cublasSetPointerMode(blas.handle(), CUBLAS_POINTER_MODE_DEVICE), "dot_cublas",
                                 "cublasSetPointerMode");
        !s.ok())
      return s;
    return cublas_status(cublasSdot(blas.handle(), static_cast<int>(n), x.as<const float>(), 1, y.as<const float>(),
                                    1, out.as<float>()),
                         "dot_cublas", "cublasSdot");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_dot_cublas() { return std::make_shared<DotCublas>(); }

}  // namespace kiln::vendor
