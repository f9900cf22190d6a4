// kiln::relative_error for CUDA tensors: the same measure as the host loop (op_schema.cpp),
// reduced on the device so the tuner compares a candidate's output with the expected output
// without copying either to the host (cuda_relative_error.cu; no_cuda_relative_error.cpp throws).
#pragma once
#include "kiln/tensor_ref.hpp"

namespace kiln::detail {

// Both tensors on the same CUDA device, same rows x cols; waits for the result.
double cuda_relative_error(const TensorRef& got, const TensorRef& expected);

}  // namespace kiln::detail
