// The variants of `scale`: the host reference everywhere, a CUDA kernel when built with CUDA.
#pragma once
#include <memory>

#include <kiln/variant.hpp>

namespace scale_example {

std::shared_ptr<kiln::Variant> make_scale_host();
#if KILN_HAS_CUDA
std::shared_ptr<kiln::Variant> make_scale_cuda_grid_stride();
#endif

}  // namespace scale_example
