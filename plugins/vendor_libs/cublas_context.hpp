// CublasLease: the one cuBLAS handle of a device, locked for the duration of one launch and
// bound to the launch's stream and workspace.
//
//   ScopedDevice on(ordinal);                       // the handle belongs to the current device
//   CublasLease blas;
//   if (Status s = blas.acquire("gemm_cublas", ordinal, stream, workspace, kCublasWorkspaceBytes); !s.ok())
//     return s;
//   cublasSgemm(blas.handle(), ...);
//
// One handle per device, created on the first launch on that device and kept for the life of the
// process (never destroyed: cublasDestroy at exit can run after the CUDA context is gone).
// cublasCreate allocates device memory and synchronises, so the first cuBLAS launch per device
// pays for it; every later launch allocates nothing.  A handle holds one stream and one
// workspace, so a lease keeps the device's mutex while it sets them and queues its call: two host
// threads launching on one device take turns for the (asynchronous, microsecond) queuing step.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <mutex>

#include <kiln/errors.hpp>

namespace kiln::vendor {

// The workspace each cuBLAS variant asks for (workspace_bytes) and hands to cublasSetWorkspace,
// so cuBLAS never allocates its own during a launch.  32 MiB: NVIDIA's recommendation for Hopper.
inline constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;

class CublasLease {
 public:
  CublasLease() = default;
  CublasLease(const CublasLease&) = delete;
  CublasLease& operator=(const CublasLease&) = delete;

  // Locks device `ordinal`'s handle (creating it on first use, with the current device =
  // `ordinal`), then binds `stream` and the user workspace, and resets the pointer mode to host.
  Status acquire(const char* variant, int ordinal, cudaStream_t stream, void* workspace, std::size_t workspace_bytes);
  cublasHandle_t handle() const { return handle_; }

 private:
  std::unique_lock<std::mutex> lock_;
  cublasHandle_t handle_ = nullptr;
};

// Creates device `ordinal`'s handle now if it does not exist yet (cublasCreate allocates and
// synchronises: done when op() decides, outside any CUDA-graph capture, never in a memo-hit
// launch).  The caller makes `ordinal` the current device.
Status ensure_cublas_handle(const char* variant, int ordinal);

// A failed cuBLAS call as a Status naming the variant and the call.
Status cublas_status(cublasStatus_t status, const char* variant, const char* call);

}  // namespace kiln::vendor
