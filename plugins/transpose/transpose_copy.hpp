// The copy that a transpose between a row-major and a column-major view reduces to (see
// transpose_operands.hpp): one cudaMemcpy2DAsync of the storage, m rows of n elements, which is
// asynchronous and legal inside CUDA-graph capture.  Every CUDA transpose variant hands such calls
// here, so each of them accepts every layout the schema does.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include <kiln/cuda_status.hpp>

#include "transpose_operands.hpp"

namespace kiln::transpose {

inline Status transpose_copy(const TransposeOperands& o, cudaStream_t stream, const std::string& variant) {
  const auto size = static_cast<std::size_t>(o.elem_bytes);
  const std::size_t width = static_cast<std::size_t>(o.n) * size;
  // One row: the pitches are never stepped over, but must be at least the width.
  const std::size_t pitch_in = std::max(width, static_cast<std::size_t>(o.ld_in) * size);
  const std::size_t pitch_out = std::max(width, static_cast<std::size_t>(o.ld_out) * size);
  return cuda_status(cudaMemcpy2DAsync(o.out, pitch_out, o.in, pitch_in, width, static_cast<std::size_t>(o.m),
                                       cudaMemcpyDeviceToDevice, stream),
                     variant + ": cudaMemcpy2DAsync (a transposed view makes the transpose a copy)");
}

}  // namespace kiln::transpose
