// Small helpers the CUDA adapters share: a scoped current device and the Status of the last
// launch.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include <kiln/errors.hpp>

namespace kiln::gemv {

// Makes `ordinal` the current device for the scope, so kernels launch where the data lives.
class ScopedDevice {
 public:
  explicit ScopedDevice(int ordinal) {
    int current = -1;
    if (cudaGetDevice(&current) == cudaSuccess && current != ordinal && cudaSetDevice(ordinal) == cudaSuccess)
      previous_ = current;
  }
  ~ScopedDevice() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = -1;
};

// Status of the launch just queued (cudaGetLastError), naming the variant.
inline Status launch_status(const char* variant) {
  const cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return Status::success();
  return Status::fail(ErrorKind::cuda, std::string(variant) + ": kernel launch failed: " + cudaGetErrorName(err) +
                                           " (" + cudaGetErrorString(err) + ")");
}

}  // namespace kiln::gemv
