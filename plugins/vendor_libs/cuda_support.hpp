// CUDA glue shared by the vendor variants (built only with the CUDA backend): a scoped current
// device, CUDA errors as kiln Status, and carving one workspace into aligned pieces.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include <kiln/errors.hpp>

namespace kiln::vendor {

// Makes `ordinal` the current device for the scope (handles, kernels and library calls belong to
// the device that is current), restoring the previous one afterwards.
class ScopedDevice {
 public:
  explicit ScopedDevice(int ordinal) {
    int current = -1;
    if (cudaGetDevice(&current) != cudaSuccess) {
      status_ = cudaErrorInvalidDevice;
      return;
    }
    if (current == ordinal) return;
    status_ = cudaSetDevice(ordinal);
    if (status_ == cudaSuccess) previous_ = current;
  }
  ~ScopedDevice() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  bool ok() const { return status_ == cudaSuccess; }
  cudaError_t error() const { return status_; }

 private:
  int previous_ = -1;
  cudaError_t status_ = cudaSuccess;
};

// A failed CUDA call as a Status naming the variant and what it was doing.
inline Status cuda_status(cudaError_t err, const char* variant, const char* what) {
  if (err == cudaSuccess) return Status::success();
  (void)cudaGetLastError();  // a non-sticky error must not fail the next, unrelated launch check
  return Status::fail(ErrorKind::cuda, std::string(variant) + ": " + what + " failed: " + cudaGetErrorName(err) +
                                           " (" + cudaGetErrorString(err) + ")");
}

// Status of the kernels just queued (cudaGetLastError), as the house rule asks after launches.
inline Status launch_status(const char* variant) { return cuda_status(cudaGetLastError(), variant, "launch"); }

inline Status device_status(const ScopedDevice& device, const char* variant) {
  return device.ok() ? Status::success() : cuda_status(device.error(), variant, "cudaSetDevice");
}

// Splits one workspace into consecutive pieces, each starting on a 256-byte boundary (what CUB
// and cuBLAS expect).  Used twice with the same sequence of take() calls: once with a null base
// to size the workspace (workspace_bytes), once with the real pointer in launch().
class WorkspaceCarver {
 public:
  static constexpr std::size_t kAlign = 256;
  explicit WorkspaceCarver(void* base) : base_(static_cast<char*>(base)) {}
  void* take(std::size_t bytes) {
    void* p = base_ == nullptr ? nullptr : base_ + used_;
    used_ += (bytes + kAlign - 1) / kAlign * kAlign;
    return p;
  }
  std::size_t used() const { return used_; }

 private:
  char* base_;
  std::size_t used_ = 0;
};

}  // namespace kiln::vendor
