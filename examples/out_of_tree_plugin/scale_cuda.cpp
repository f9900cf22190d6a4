// scale_cuda_grid_stride: the CUDA variant.  Its one tuning parameter, the block size, is a
// launch argument, so every value in the space runs without template instantiations.
#include <kiln/cuda_status.hpp>

#include "scale_kernel.hpp"
#include "scale_variants.hpp"

namespace scale_example {
namespace {

kiln::ParamSpace make_space() {
  kiln::ParamSpace space;
  space.param("block", {128, 256, 512});
  return space;
}

class ScaleCudaGridStride final : public kiln::Variant {
 public:
  ScaleCudaGridStride()
      : Variant({"scale_cuda_grid_stride", "scale", kiln::DeviceKind::cuda, {kiln::f32}, /*priority=*/10,
                 "grid-stride loop, one element per thread per step"},
                make_space()) {}
  kiln::Config default_config(const kiln::DeviceInfo&) const override { return {{"block", 256}}; }
  kiln::Support supports(const kiln::Problem&, const kiln::DeviceInfo&, const kiln::Config&) const override {
    return kiln::Support::yes();  // any n; scalar loads need no alignment
  }
  kiln::Status launch(const kiln::Args& args, const kiln::Problem& p, const kiln::Config& config, void*,
                      kiln::Stream stream) const override {
    const cudaError_t err = launch_scale_kernel(
        args.tensor(0).as<const float>(), args.tensor(1).as<float>(), p.dim(0), static_cast<float>(args.scalar(0)),
        config.get_or("block", 256), static_cast<cudaStream_t>(stream.handle()));
    return kiln::cuda_status(err, "scale_cuda_grid_stride");  // a CUDA error as a failed Status
  }
};

}  // namespace

std::shared_ptr<kiln::Variant> make_scale_cuda_grid_stride() { return std::make_shared<ScaleCudaGridStride>(); }

}  // namespace scale_example
