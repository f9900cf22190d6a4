// CUDA errors as kiln Status values, for the CUDA sources of plugins (this header includes
// cuda_runtime.h; include it only where the CUDA toolkit's headers are on the include path).
// Header-only on purpose: each plugin reads the error state of the CUDA runtime it links.
//
//   my_kernel<<<grid, block, 0, stream>>>(...);
//   return kiln::cuda_launch_status("my_variant");   // "my_variant: kernel launch failed: ..."
#pragma once
#include <cuda_runtime.h>

#include <string>
#include <string_view>

#include "kiln/errors.hpp"

namespace kiln {

// Success for cudaSuccess, else ErrorKind::cuda naming `what` and the error.  Reading the error
// also clears a non-sticky one, so it cannot fail the next, unrelated check.
inline Status cuda_status(cudaError_t err, std::string_view what) {
  if (err == cudaSuccess) return Status::success();
  (void)cudaGetLastError();
  return Status::fail(ErrorKind::cuda, std::string(what) + " failed: " + cudaGetErrorName(err) + " (" +
                                           cudaGetErrorString(err) + ")");
}

// The Status of the launches just queued (cudaGetLastError), naming the variant.
// Builds no string on success: every memo-hit op() ends here.
inline Status cuda_launch_status(std::string_view variant) {
  const cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return Status::success();
  return cuda_status(err, std::string(variant) + ": kernel launch");
}

}  // namespace kiln
