#include "cublas_context.hpp"

#include <string>

namespace kiln::vendor {
namespace {

constexpr int kMaxDevices = 64;

struct DeviceHandle {
  std::mutex mutex;
  cublasHandle_t handle = nullptr;  // guarded by mutex; created once, never destroyed
};

// Static storage, so looking a device up allocates nothing.
DeviceHandle& device_handle(int ordinal) {
  static DeviceHandle handles[kMaxDevices];
  return handles[ordinal];
}

}  // namespace

Status cublas_status(cublasStatus_t status, const char* variant, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::success();
  // A failed kernel launch inside cuBLAS can leave a CUDA error behind; clear it so the next,
  // unrelated launch check does not report it again.
  (void)cudaGetLastError();
  const ErrorKind kind = (status == CUBLAS_STATUS_INVALID_VALUE || status == CUBLAS_STATUS_NOT_SUPPORTED)
                             ? ErrorKind::unsupported
                             : ErrorKind::cuda;
  return Status::fail(kind, std::string(variant) + ": " + call + " failed: " + cublasGetStatusString(status));
}

namespace {

// Creates slot.handle if needed; the caller holds slot.mutex.
Status create_handle_locked(DeviceHandle& slot, const char* variant) {
  if (slot.handle != nullptr) return Status::success();
  cublasHandle_t h = nullptr;
  if (Status s = cublas_status(cublasCreate(&h), variant, "cublasCreate"); !s.ok()) return s;
  // True fp32 for cublasSgemm: no TF32 unless a variant asks for it through cublasGemmEx's
  // compute type.
  if (Status s = cublas_status(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), variant, "cublasSetMathMode"); !s.ok()) {
    cublasDestroy(h);
    return s;
  }
  slot.handle = h;
  return Status::success();
}

Status check_ordinal(const char* variant, int ordinal) {
  if (ordinal >= 0 && ordinal < kMaxDevices) return Status::success();
  return Status::fail(ErrorKind::device, std::string(variant) + ": CUDA device ordinal " + std::to_string(ordinal) +
                                             " out of range [0, " + std::to_string(kMaxDevices) + ")");
}

}  // namespace

Status ensure_cublas_handle(const char* variant, int ordinal) {
  if (Status s = check_ordinal(variant, ordinal); !s.ok()) return s;
  DeviceHandle& slot = device_handle(ordinal);
  std::lock_guard<std::mutex> lock(slot.mutex);
  return create_handle_locked(slot, variant);
}

Status CublasLease::acquire(const char* variant, int ordinal, cudaStream_t stream, void* workspace,
                            std::size_t workspace_bytes) {
  if (Status s = check_ordinal(variant, ordinal); !s.ok()) return s;
  DeviceHandle& slot = device_handle(ordinal);
  lock_ = std::unique_lock<std::mutex>(slot.mutex);
  if (Status s = create_handle_locked(slot, variant); !s.ok()) return s;
  handle_ = slot.handle;
  // cublasSetStream resets the workspace to cuBLAS's own pool, so the workspace comes after it.
  if (Status s = cublas_status(cublasSetStream(handle_, stream), variant, "cublasSetStream"); !s.ok()) return s;
  if (Status s = cublas_status(cublasSetWorkspace(handle_, workspace, workspace_bytes), variant, "cublasSetWorkspace");
      !s.ok())
    return s;
  return cublas_status(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST), variant, "cublasSetPointerMode");
}

}  // namespace kiln::vendor
