// reduce_sum_cub: out[0] = sum of x with cub::DeviceReduce::Sum (f32 and i32), and for f16 / bf16
// with cub::DeviceReduce::TransformReduce: each element converted to float, summed in float, the
// result written in f32 or the input type (out16).  The temporary
// storage CUB needs is sized by CUB's own query (null temp pointer) in workspace_bytes(), and
// launch() hands CUB exactly that, so nothing is allocated during a launch.
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "cuda_support.hpp"
#include "vendor_variant.hpp"
#include "vendor_variants.hpp"

namespace kiln::vendor {
namespace {

// CUB called with int item counts (32-bit offsets: the configuration CUB's own benchmarks use).
template <class T>
cudaError_t cub_sum(void* temp, std::size_t& temp_bytes, const void* in, void* out, int n, cudaStream_t stream) {
  return cub::DeviceReduce::Sum(temp, temp_bytes, static_cast<const T*>(in), static_cast<T*>(out), n, stream);
}

// f16 / bf16: the f32-accumulating sum, as torch.sum of a bf16 tensor computes it.
struct HalfToFloat {
  __device__ float operator()(__half v) const { return __half2float(v); }
  __device__ float operator()(__nv_bfloat16 v) const { return __bfloat162float(v); }
};

template <class T, class Out>
cudaError_t cub_half_sum(void* temp, std::size_t& temp_bytes, const void* in, void* out, int n, cudaStream_t stream) {
  return cub::DeviceReduce::TransformReduce(temp, temp_bytes, static_cast<const T*>(in), static_cast<Out*>(out), n,
                                            cuda::std::plus<float>{}, HalfToFloat{}, 0.0f, stream);
}

template <class T>
cudaError_t cub_half_sum(bool out16, void* temp, std::size_t& temp_bytes, const void* in, void* out, int n,
                         cudaStream_t stream) {
  return out16 ? cub_half_sum<T, T>(temp, temp_bytes, in, out, n, stream)
               : cub_half_sum<T, float>(temp, temp_bytes, in, out, n, stream);
}

cudaError_t cub_sum(DType dtype, bool out16, void* temp, std::size_t& temp_bytes, const void* in, void* out, int n,
                    cudaStream_t stream) {
  switch (dtype) {
    case DType::i32: return cub_sum<std::int32_t>(temp, temp_bytes, in, out, n, stream);
    case DType::f16: return cub_half_sum<__half>(out16, temp, temp_bytes, in, out, n, stream);
    case DType::bf16: return cub_half_sum<__nv_bfloat16>(out16, temp, temp_bytes, in, out, n, stream);
    default: return cub_sum<float>(temp, temp_bytes, in, out, n, stream);
  }
}

class ReduceSumCub final : public VendorVariant {
 public:
  ReduceSumCub()
      : VendorVariant("reduce_sum_cub", "reduce_sum", {DType::f32, DType::i32, DType::f16, DType::bf16},
                      "cub::DeviceReduce::Sum; f16/bf16: TransformReduce to float, f32 accumulation") {}

  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override {
    return int_limit("n", dim_or(p, "n", 0), "CUB called with int");
  }

  std::size_t workspace_bytes(const Problem& p, const Config&) const override {
    const std::int64_t n = dim_or(p, "n", 0);
    if (n <= 0 || !fits_int(n)) return 0;
    ScopedDevice on(p.device.ordinal);  // CUB sizes its grid for the current device
    std::size_t bytes = 0;
    if (!on.ok() || cub_sum(p.dtype, dim_or(p, "out16", 0) == 1, nullptr, bytes, nullptr, nullptr, static_cast<int>(n), nullptr) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;  // launch() repeats the query and reports the error
    }
    return bytes;
  }

  // args = {x[n], out[1]}.
  Status launch(const Args& args, const Problem& problem, const Config&, void* workspace,
                Stream stream) const override {
    const TensorRef& x = args.tensor(0);
    const TensorRef& out = args.tensor(1);
    const std::int64_t n = x.numel();
    if (!fits_int(n)) return Status::fail(ErrorKind::unsupported, "reduce_sum_cub: n exceeds 2^31-1");
    if (problem.dtype != DType::f32 && problem.dtype != DType::i32 && problem.dtype != DType::f16 &&
        problem.dtype != DType::bf16)
      return Status::fail(ErrorKind::dtype, "reduce_sum_cub: dtype " + std::string(dtype_name(problem.dtype)) +
                                                " not supported (f32, i32, f16, bf16)");
    const bool out16 = out.dtype != DType::f32 && out.dtype != DType::i32;
    ScopedDevice on(problem.device.ordinal);
    if (Status s = device_status(on, "reduce_sum_cub"); !s.ok()) return s;
    const auto cu_stream = static_cast<cudaStream_t>(stream.handle());
    if (n == 0)  // the empty sum (0 is all-zero bytes in every dtype)
      return cuda_status(cudaMemsetAsync(out.data, 0, dtype_size(out.dtype), cu_stream), "reduce_sum_cub",
                         "cudaMemsetAsync");
    // The same size query as workspace_bytes(), so CUB gets the size it asked for.
    std::size_t temp_bytes = 0;
    if (Status s =
            cuda_status(cub_sum(problem.dtype, out16, nullptr, temp_bytes, nullptr, nullptr, static_cast<int>(n), cu_stream),
                        "reduce_sum_cub", "cub::DeviceReduce::Sum size query");
        !s.ok())
      return s;
    // A null temp pointer would turn the call into another size query and compute nothing.
    if (workspace == nullptr)
      return Status::fail(ErrorKind::internal, "reduce_sum_cub: no workspace (needs " + std::to_string(temp_bytes) +
                                                   " bytes, see workspace_bytes)");
    if (Status s =
            cuda_status(cub_sum(problem.dtype, out16, workspace, temp_bytes, x.data, out.data, static_cast<int>(n), cu_stream),
                        "reduce_sum_cub", "cub::DeviceReduce::Sum");
        !s.ok())
      return s;
    return launch_status("reduce_sum_cub");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_reduce_sum_cub() { return std::make_shared<ReduceSumCub>(); }

}  // namespace kiln::vendor
