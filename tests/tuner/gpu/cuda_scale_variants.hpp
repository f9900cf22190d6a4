// CUDA variants of the test op `scale` (tests/support/scale_op.hpp) for the tuner's GPU tests:
//   scale_cuda         y = factor * x, one element per thread, block in {64, 128, 256, 1024};
//   scale_cuda_badcfg  the same kernel, but block = 2048 is an invalid launch configuration (a
//                      non-sticky error: the device stays usable);
//   scale_cuda_slow    correct, but every thread first waits 200 000 clock cycles (about 0.1 ms);
//                      priority 20, so with no evidence it is the prediction;
//   scale_cuda_oob     writes far outside any allocation (an illegal address: a sticky error
//                      that leaves the context unusable for the rest of the process).
#pragma once
#include <memory>

#include <kiln/variant.hpp>

namespace kiln_test {

std::shared_ptr<const kiln::Variant> make_scale_cuda();
std::shared_ptr<const kiln::Variant> make_scale_cuda_badcfg();
std::shared_ptr<const kiln::Variant> make_scale_cuda_slow();
std::shared_ptr<const kiln::Variant> make_scale_cuda_oob();

}  // namespace kiln_test
