#include "cuda_scale_variants.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace kiln_test {
namespace {

__global__ void scale_kernel(const float* x, float* y, float factor, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = factor * x[i];
}

// scale_kernel with a wait of `spin` clock cycles per thread first: a correct variant that is
// slow by a known amount.
__global__ void slow_scale_kernel(const float* x, float* y, float factor, std::int64_t n, long long spin) {
  const long long start = clock64();
  while (clock64() - start < spin) {
  }
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = factor * x[i];
}

__global__ void out_of_bounds_kernel(float* y) {
  // 2^40 floats past y: no allocation is there.
  y[std::int64_t{1} << 40] = 1.0f;
}

kiln::Status last_error(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return kiln::Status();
  return kiln::Status::fail(kiln::ErrorKind::cuda, std::string(what) + ": " + cudaGetErrorString(e));
}

class ScaleCuda final : public kiln::Variant {
 public:
  enum class Kind { good, bad_config, out_of_bounds, slow };
  ScaleCuda(std::string name, int priority, std::vector<int> blocks, Kind kind)
      : Variant({std::move(name), "scale", kiln::DeviceKind::cuda, {kiln::f32}, priority, "test kernel"},
                kiln::ParamSpace().param("block", std::move(blocks))),
        kind_(kind) {}
  kiln::Config default_config(const kiln::DeviceInfo&) const override {
    return {{"block", space().params()[0].values.front()}};
  }
  kiln::Support supports(const kiln::Problem&, const kiln::DeviceInfo&, const kiln::Config&) const override {
    return kiln::Support::yes();
  }
  kiln::Status launch(const kiln::Args& a, const kiln::Problem& p, const kiln::Config& c, void*,
                      kiln::Stream stream) const override {
    auto s = static_cast<cudaStream_t>(stream.handle());
    const std::int64_t n = p.dims[0];
    if (kind_ == Kind::out_of_bounds) {
      out_of_bounds_kernel<<<1, 1, 0, s>>>(a.tensor(1).as<float>());
      return last_error("out_of_bounds_kernel");
    }
    if (n == 0) return kiln::Status();
    const int block = c.get("block");
    const auto grid = static_cast<unsigned>((n + block - 1) / block);
    if (kind_ == Kind::slow) {
      slow_scale_kernel<<<grid, block, 0, s>>>(a.tensor(0).as<const float>(), a.tensor(1).as<float>(),
                                               static_cast<float>(a.scalar(0)), n, 200000);
      return last_error("slow_scale_kernel");
    }
    scale_kernel<<<grid, block, 0, s>>>(a.tensor(0).as<const float>(), a.tensor(1).as<float>(),
                                        static_cast<float>(a.scalar(0)), n);
    return last_error("scale_kernel");
  }

 private:
  Kind kind_;
};

}  // namespace

std::shared_ptr<const kiln::Variant> make_scale_cuda() {
  return std::make_shared<ScaleCuda>("scale_cuda", 10, std::vector<int>{64, 128, 256, 1024}, ScaleCuda::Kind::good);
}
std::shared_ptr<const kiln::Variant> make_scale_cuda_badcfg() {
  return std::make_shared<ScaleCuda>("scale_cuda_badcfg", 5, std::vector<int>{2048}, ScaleCuda::Kind::bad_config);
}
std::shared_ptr<const kiln::Variant> make_scale_cuda_slow() {
  return std::make_shared<ScaleCuda>("scale_cuda_slow", 20, std::vector<int>{256}, ScaleCuda::Kind::slow);
}
std::shared_ptr<const kiln::Variant> make_scale_cuda_oob() {
  return std::make_shared<ScaleCuda>("scale_cuda_oob", 1, std::vector<int>{1}, ScaleCuda::Kind::out_of_bounds);
}

}  // namespace kiln_test
