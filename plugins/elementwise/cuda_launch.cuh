// Small helpers the CUDA adapters share: the SM count (cached per device) and the Status of the
// last launch.  The runtime makes the problem's device current before it calls launch().
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <string>

#include <kiln/errors.hpp>

namespace kiln::elementwise {

// Multiprocessors of CUDA device `ordinal`, queried once; 0 when the query fails.
inline int sm_count(int ordinal) {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cache[kMaxDevices];  // static storage: starts at 0
  if (ordinal < 0 || ordinal >= kMaxDevices) return 0;
  int n = cache[ordinal].load(std::memory_order_relaxed);
  if (n > 0) return n;
  if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, ordinal) != cudaSuccess) {
    (void)cudaGetLastError();  // do not leave the failed query for the next launch check
    return 0;
  }
  cache[ordinal].store(n, std::memory_order_relaxed);
  return n;
}

// Status of the launch just queued (cudaGetLastError), naming the variant.
inline Status launch_status(const char* variant) {
  const cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return Status::success();
  return Status::fail(ErrorKind::cuda, std::string(variant) + ": kernel launch failed: " + cudaGetErrorName(err) +
                                           " (" + cudaGetErrorString(err) + ")");
}

}  // namespace kiln::elementwise
