// fill_random's pieces the CUDA backend shares: the validated fill description, and the device
// fill itself (cuda_random_fill.cu; no_cuda_random_fill.cpp throws DeviceError).
#pragma once
#include "counter_rng.hpp"
#include "kiln/input_distribution.hpp"

namespace kiln::detail {

// Throws ArgumentError for a distribution that does not suit t.dtype.
CounterFill make_counter_fill(DType dtype, const InputDistribution& d, std::uint64_t seed);
// Fills a CUDA tensor (rows x cols, row stride in elements) and waits for it.
void cuda_fill_random(const TensorRef& t, const CounterFill& fill);

}  // namespace kiln::detail
